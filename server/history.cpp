#include "server/history.hpp"

namespace gslb::server {

void AnswerHistory::sample(const Gslb& g, int64_t unixMs) {
    times_.push_back(unixMs);
    bool full = times_.size() > capacity_;
    if (full) times_.pop_front();
    for (auto& [key, t] : tracks_) t.seen = false;
    if (g.hostAnswers)
        for (const auto& h : g.hosts)
            for (int f = 0; f < 2; ++f)
                for (const auto& s : h.family[f]) {
                    const std::string& site = g.sites[s.site];
                    std::string key = h.name + '\0' + site + '\0' + s.address;
                    uint64_t total = g.hostAnswers->total(s.hostSlot);
                    auto [it, fresh] = tracks_.try_emplace(key);
                    Track& t = it->second;
                    if (fresh) {
                        t.hostname = h.name;
                        t.site = site;
                        t.address = s.address;
                        t.deltas.assign(times_.size() - 1, 0);  // before it appeared: nothing
                        t.last = total;
                    }
                    // A counter that went back (a new table without the carried count) restarts its baseline.
                    t.deltas.push_back(total >= t.last ? total - t.last : 0);
                    t.last = total;
                    t.seen = true;
                }
    for (auto it = tracks_.begin(); it != tracks_.end();) {
        Track& t = it->second;
        if (!t.seen) t.deltas.push_back(0);
        while (t.deltas.size() > times_.size()) t.deltas.pop_front();
        bool idle = !t.seen;
        for (uint64_t d : t.deltas) idle = idle && d == 0;
        it = idle ? tracks_.erase(it) : std::next(it);  // gone and nothing left in the window
    }
}

std::vector<AnswerHistory::Series> AnswerHistory::series() const {
    std::vector<Series> out;
    for (const auto& [key, t] : tracks_)
        out.push_back(Series{t.hostname, t.site, t.address, {t.deltas.begin(), t.deltas.end()}});
    return out;
}

}  // namespace gslb::server
