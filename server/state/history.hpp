// The answer history behind the status page's live chart (doc/api.md "The status page and the dashboard"):
// every `interval` the control thread samples the per-hostname answer counters (Gslb::hostAnswers) and keeps,
// per (hostname, site, address), how many answers carried that address in each interval, for the last
// `capacity` samples (150 × 2 s = 5 min). Shares per site or per service are sums of these series; the page
// computes them.
//
// Counters survive reloads by key (AnswerCounters::carryByKey), so a reload is no spike; a key that appears
// starts at 0, one that disappears keeps the answers it had in the window until they leave it. Control
// thread only.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/state/gslb.hpp"

namespace gslb::server {

class AnswerHistory {
  public:
    static constexpr size_t kDefaultCapacity = 150;
    static constexpr double kDefaultIntervalSec = 2;
    explicit AnswerHistory(size_t capacity = kDefaultCapacity, double intervalSec = kDefaultIntervalSec)
        : capacity_(capacity ? capacity : 1), intervalSec_(intervalSec), ring_(capacity_) {}

    /// Takes one sample at `unixMs` (wall clock) from `g`'s counters (null: a snapshot without GSLB). The
    /// first sample only sets the baselines (its answers are 0): answers before the history started are not
    /// an interval's worth. Cost: one read of every counter, then work only for the services whose count
    /// moved and for the entries that leave the window; no allocation per service and no strings. A new
    /// counter table (a reload) is matched to the last one by (hostname, site, address) once, linear in
    /// services. Keeps `g` until the next sample (the reload match reads it).
    void sample(std::shared_ptr<const Gslb> g, int64_t unixMs);

    struct Series {
        std::string hostname, site, address;
        std::vector<uint64_t> answers;  // per sample, aligned with times()
    };
    /// Sample times (unix ms), oldest first.
    std::vector<int64_t> times() const { return {times_.begin(), times_.end()}; }
    /// One series per (hostname, site, address) with answers in the window, sorted by (hostname, site,
    /// address); a service without any answer in the window has none (all zeros is not sent).
    std::vector<Series> series() const;
    /// series() without the zeros: per series its (index into times(), answers) with answers, in index
    /// order. The names point into the history: valid until the next sample.
    struct SparseSeries {
        std::string_view hostname, site, address;
        std::vector<std::pair<uint32_t, uint32_t>> answers;
    };
    std::vector<SparseSeries> sparseSeries() const;
    size_t capacity() const { return capacity_; }
    double intervalSec() const { return intervalSec_; }
    /// Entries kept: one per (service, sample) with answers. Tests and memory accounting.
    size_t entries() const;

  private:
    // Sparse by sample: ring_[n % capacity] holds the services that had answers in sample n, as (id,
    // answers). An id below the counter table's slot count is a GslbService::hostSlot of gslb_; above it, an
    // index into retired_ (a key a reload removed whose answers are still in the window).
    struct Entry {
        uint32_t id;
        uint32_t answers;  // saturates at 2^32 - 1 (2 billion answers a second for one service)
    };
    struct Retired {
        std::string hostname, site, address;
    };
    // Matches gslb_'s table to g's by key: renumbers the entries, carries the baselines, retires keys g
    // lacks.
    void rebase(const Gslb* g);
    size_t slots() const { return gslb_ && gslb_->hostAnswers ? gslb_->hostAnswers->slots() : 0; }

    size_t capacity_;
    double intervalSec_;
    std::deque<int64_t> times_;
    uint32_t samples_ = 0;  // samples taken: the number of the latest is samples_ - 1
    std::vector<std::vector<Entry>> ring_;
    std::shared_ptr<const Gslb> gslb_;  // the snapshot sampled last
    bool started_ = false;              // a sample set the baselines
    std::vector<uint64_t> last_;        // per hostSlot of gslb_: its total at the previous sample
    std::vector<Retired> retired_;      // ids slots() + i
    uint32_t retiredUntil_ = 0;         // the sample after which no retired entry is left in the window
};

}  // namespace gslb::server
