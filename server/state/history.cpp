#include "server/state/history.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace gslb::server {

void AnswerHistory::sample(std::shared_ptr<const Gslb> g, int64_t unixMs) {
    times_.push_back(unixMs);
    if (times_.size() > capacity_) times_.pop_front();
    const uint32_t now = samples_++;
    std::vector<Entry>& cur = ring_[now % capacity_];
    cur.clear();  // sample now - capacity leaves the window
    const AnswerCounters* counters = g ? g->hostAnswers.get() : nullptr;
    const AnswerCounters* had = gslb_ ? gslb_->hostAnswers.get() : nullptr;
    if (started_ && counters != had) rebase(g.get());
    if (counters) {
        last_.resize(counters->slots());  // the first sample's table (rebase sized any later one)
        for (uint32_t slot = 0; slot < counters->slots(); ++slot) {
            uint64_t total = counters->total(slot);
            uint64_t& last = last_[slot];
            if (total == last) continue;
            // Below the baseline: a reload between two samples gave the key a table without its count (it
            // was missing from a snapshot this history never saw), so all it counted is since then.
            uint64_t d = total > last ? total - last : total;
            if (started_) cur.push_back({slot, uint32_t(std::min<uint64_t>(d, UINT32_MAX))});
            last = total;
        }
    }
    // A window after a burst can hold far more entries than the next one: give back what a sample no longer
    // needs instead of keeping every ring position at its peak.
    if (cur.capacity() > 2 * cur.size() + 16) cur.shrink_to_fit();
    started_ = true;
    gslb_ = std::move(g);
    if (!retired_.empty() && now >= retiredUntil_) retired_.clear();  // their last entries just left
}

void AnswerHistory::rebase(const Gslb* g) {
    constexpr uint32_t kNone = UINT32_MAX;
    const size_t oldSlots = slots();
    const size_t newSlots = g && g->hostAnswers ? g->hostAnswers->slots() : 0;
    std::vector<uint32_t> remap(oldSlots + retired_.size(), kNone);  // old id -> new id
    std::vector<uint64_t> last(newSlots, 0);  // a key new to the table counted from 0: all since the reload
    std::unordered_map<std::string_view, const GslbHost*> byName;
    if (g) {
        byName.reserve(g->hosts.size());
        for (const auto& h : g->hosts) byName.emplace(h.name, &h);
    }
    // g's service of `name` at (site, address) in family f, looked for at `pos` first (a reload mostly keeps
    // a hostname's services in their order).
    auto find = [&](std::string_view name, int f, size_t pos, std::string_view site,
                    std::string_view address) -> const GslbService* {
        auto it = byName.find(name);
        if (it == byName.end()) return nullptr;
        const auto& fam = it->second->family[f];
        auto same = [&](const GslbService& s) {
            return s.hostSlot < newSlots && s.address() == address && g->sites[s.site] == site;
        };
        if (pos < fam.size() && same(fam[pos])) return &fam[pos];
        for (const auto& s : fam)
            if (same(s)) return &s;
        return nullptr;
    };
    // Old slots g lacks, by slot: their key, should an entry need it (few: only keys that went away).
    std::unordered_map<uint32_t, Retired> gone;
    if (gslb_)
        for (const auto& h : gslb_->hosts)
            for (int f = 0; f < 2; ++f)
                for (size_t i = 0; i < h.family[f].size(); ++i) {
                    const GslbService& s = h.family[f][i];
                    if (s.hostSlot >= oldSlots) continue;
                    const std::string& site = gslb_->sites[s.site];
                    if (const GslbService* to = find(h.name, f, i, site, s.address())) {
                        remap[s.hostSlot] = to->hostSlot;
                        last[to->hostSlot] = last_[s.hostSlot];
                    } else {
                        gone.emplace(s.hostSlot, Retired{h.name, site, s.address()});
                    }
                }
    // A key retired by an earlier reload that g has again takes its slot back (g counts it from 0).
    for (size_t i = 0; i < retired_.size(); ++i) {
        const Retired& r = retired_[i];
        for (int f = 0; f < 2 && remap[oldSlots + i] == kNone; ++f)
            if (const GslbService* to = find(r.hostname, f, 0, r.site, r.address))
                remap[oldSlots + i] = to->hostSlot;
    }
    std::vector<Retired> retired;
    for (auto& entries : ring_)
        for (Entry& e : entries) {
            uint32_t& to = remap[e.id];
            if (to == kNone) {
                to = uint32_t(newSlots + retired.size());
                if (e.id >= oldSlots) {
                    retired.push_back(std::move(retired_[e.id - oldSlots]));
                } else {
                    auto it = gone.find(e.id);
                    retired.push_back(it != gone.end() ? std::move(it->second) : Retired{});
                }
            }
            e.id = to;
        }
    retired_ = std::move(retired);
    // Retired keys have entries up to the sample before this one (samples_ - 2); it leaves the window when
    // the sample capacity_ later is taken.
    if (!retired_.empty()) retiredUntil_ = samples_ - 2 + uint32_t(capacity_);
    last_ = std::move(last);
}

size_t AnswerHistory::entries() const {
    size_t n = 0;
    for (const auto& e : ring_) n += e.size();
    return n;
}

std::vector<AnswerHistory::SparseSeries> AnswerHistory::sparseSeries() const {
    std::vector<SparseSeries> out;
    std::unordered_map<uint32_t, size_t> at;  // id -> index in out
    const uint32_t first = samples_ - uint32_t(times_.size());
    for (uint32_t n = first; n != samples_; ++n)
        for (const Entry& e : ring_[n % capacity_]) {
            auto [it, fresh] = at.try_emplace(e.id, out.size());
            if (fresh) out.emplace_back();
            out[it->second].answers.emplace_back(n - first, e.answers);
        }
    if (out.empty()) return out;
    // Names only for the series sent: a walk over the services, no key kept per service.
    const size_t n = slots();
    if (gslb_)
        for (const auto& h : gslb_->hosts)
            for (const auto& fam : h.family)
                for (const auto& s : fam)
                    if (auto it = at.find(s.hostSlot); s.hostSlot < n && it != at.end()) {
                        SparseSeries& o = out[it->second];
                        o.hostname = h.name;
                        o.site = gslb_->sites[s.site];
                        o.address = s.address();
                    }
    for (size_t i = 0; i < retired_.size(); ++i)
        if (auto it = at.find(uint32_t(n + i)); it != at.end()) {
            SparseSeries& o = out[it->second];
            o.hostname = retired_[i].hostname;
            o.site = retired_[i].site;
            o.address = retired_[i].address;
        }
    std::sort(out.begin(), out.end(), [](const SparseSeries& a, const SparseSeries& b) {
        return std::tie(a.hostname, a.site, a.address) < std::tie(b.hostname, b.site, b.address);
    });
    return out;
}

std::vector<AnswerHistory::Series> AnswerHistory::series() const {
    std::vector<Series> out;
    for (const auto& s : sparseSeries()) {
        Series d{std::string(s.hostname), std::string(s.site), std::string(s.address),
                 std::vector<uint64_t>(times_.size(), 0)};
        for (const auto& [i, v] : s.answers) d.answers[i] = v;
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace gslb::server
