#include "server/history.hpp"

#include <algorithm>
#include <cstdint>

namespace gslb::server {

void AnswerHistory::sample(const Gslb& g, int64_t unixMs) {
    times_.push_back(unixMs);
    bool full = times_.size() > capacity_;
    if (full) times_.pop_front();
    const uint32_t now = samples_++;
    const uint32_t first = now + 1 - uint32_t(times_.size());  // the oldest sample number in the window
    for (auto& [key, t] : tracks_) t.seen = false;
    if (g.hostAnswers)
        for (const auto& h : g.hosts)
            for (int f = 0; f < 2; ++f)
                for (const auto& s : h.family[f]) {
                    const std::string& site = g.sites[s.site];
                    std::string key = h.name + '\0' + site + '\0' + s.address();
                    uint64_t total = g.hostAnswers->total(s.hostSlot);
                    auto [it, fresh] = tracks_.try_emplace(std::move(key));
                    Track& t = it->second;
                    if (fresh) t.last = total;  // before it appeared: nothing
                    // A counter that went back (a new table without the carried count) restarts its baseline.
                    if (total > t.last)
                        t.answers.emplace_back(now, uint32_t(std::min<uint64_t>(total - t.last, UINT32_MAX)));
                    t.last = total;
                    t.seen = true;
                }
    for (auto it = tracks_.begin(); it != tracks_.end();) {
        Track& t = it->second;
        auto old = t.answers.begin();
        while (old != t.answers.end() && old->first < first) ++old;
        t.answers.erase(t.answers.begin(), old);
        if (t.answers.empty()) t.answers.shrink_to_fit();
        bool idle = !t.seen && t.answers.empty();
        it = idle ? tracks_.erase(it) : std::next(it);  // gone and nothing left in the window
    }
}

std::vector<AnswerHistory::Series> AnswerHistory::series() const {
    std::vector<Series> out;
    const uint32_t first = samples_ - uint32_t(times_.size());
    for (const auto& [key, t] : tracks_) {
        Series s;
        // The key is hostname '\0' site '\0' address (none of them holds a NUL).
        size_t a = key.find('\0'), b = key.find('\0', a + 1);
        s.hostname = key.substr(0, a);
        s.site = key.substr(a + 1, b - a - 1);
        s.address = key.substr(b + 1);
        s.answers.assign(times_.size(), 0);
        for (const auto& [n, d] : t.answers) s.answers[n - first] = d;
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace gslb::server
