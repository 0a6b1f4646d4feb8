// The answer history behind the status page's live chart (issue 17): every `interval` the control thread
// samples the per-hostname answer counters (Gslb::hostAnswers) and keeps, per (hostname, site, address), how
// many answers carried that address in each interval, for the last `capacity` samples (150 × 2 s = 5 min).
// Shares per site or per service are sums of these series; the page computes them.
//
// Counters survive reloads by key (AnswerCounters::carryByKey), so a reload is no spike; a key that appears
// starts at 0, one that disappears reads 0 until it leaves the window and is dropped. Control thread only.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "server/gslb.hpp"

namespace gslb::server {

class AnswerHistory {
  public:
    static constexpr size_t kDefaultCapacity = 150;
    static constexpr double kDefaultIntervalSec = 2;
    explicit AnswerHistory(size_t capacity = kDefaultCapacity, double intervalSec = kDefaultIntervalSec)
        : capacity_(capacity ? capacity : 1), intervalSec_(intervalSec) {}

    /// Takes one sample at `unixMs` (wall clock) from `g`'s counters. The first sample of a key only sets its
    /// baseline (its delta is 0): answers before the history started are not an interval's worth.
    void sample(const Gslb& g, int64_t unixMs);

    struct Series {
        std::string hostname, site, address;
        std::vector<uint64_t> answers;  // per sample, aligned with times()
    };
    /// Sample times (unix ms), oldest first.
    std::vector<int64_t> times() const { return {times_.begin(), times_.end()}; }
    /// One series per key seen in the window, sorted by (hostname, site, address).
    std::vector<Series> series() const;
    size_t capacity() const { return capacity_; }
    double intervalSec() const { return intervalSec_; }

  private:
    // Sparse: a track keeps only its intervals with answers, as (sample number, answers). Most services of a
    // large zone answer in few intervals of a 5-minute window; a deque of 150 counters and three copies of
    // the key per service cost about 900 octets per GSLB service once the first sample was taken.
    struct Track {
        uint64_t last = 0;  // the counter's total at the previous sample
        // (sample number, answers > 0), oldest first; 32 bits each: 2^32 samples of 2 s are 272 years, and an
        // interval's count saturates at 2^32 - 1 (2 billion answers a second for one service).
        std::vector<std::pair<uint32_t, uint32_t>> answers;
        bool seen = false;  // present in the latest sample
    };
    size_t capacity_;
    double intervalSec_;
    std::deque<int64_t> times_;
    uint32_t samples_ = 0;                 // samples taken: the number of the latest is samples_ - 1
    std::map<std::string, Track> tracks_;  // by hostname '\0' site '\0' address
};

}  // namespace gslb::server
