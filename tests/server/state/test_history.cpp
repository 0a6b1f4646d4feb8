// AnswerHistory (server/state/history.hpp) on its own: the sparse window (gaps, the ring wrapping around,
// what a sample drops), and reloads matched by (hostname, site, address): carried counts, services that go
// away and come back, a reordered RRset, a counter a skipped snapshot restarted. Counters are bumped directly
// (AnswerCounters::add) so every expected number is exact.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "server/state/history.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb;
using namespace gslb::server;

namespace {

using Answers = std::vector<uint64_t>;

const std::string kDual =
    "[hostname.\"dual.t.test.\"]\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"2001:db8::1\"\nsite = \"west\"\n";
const std::string kWww = "[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test.");
const std::string kConfig = st::baseConfig(kWww + kDual);

std::shared_ptr<const Gslb> gslbOf(const std::shared_ptr<Snapshot>& s) {
    return {s, &s->gslb};
}

/// The next snapshot of `configText` over `zoneText`, built on `previous` as a reload builds it (counts
/// carried by key).
std::shared_ptr<Snapshot> reload(const std::shared_ptr<Snapshot>& previous, const std::string& configText,
                                 const std::string& zoneText = st::kZone) {
    st::Written w = st::writeConfig(configText, zoneText);
    std::string error;
    auto s = buildSnapshot(w.config, previous.get(), error);
    INFO("buildSnapshot: " << error);
    REQUIRE(s != nullptr);
    return s;
}

/// `n` answers of `name` carrying `address`, counted by worker 0 of `s`.
void hit(const Snapshot& s, const std::string& name, const std::string& address, int n = 1) {
    for (const auto& h : s.gslb.hosts)
        for (const auto& fam : h.family)
            for (const auto& svc : fam)
                if (h.name == name && svc.address() == address) {
                    for (int i = 0; i < n; ++i) s.gslb.hostAnswers->add(0, svc.hostSlot);
                    return;
                }
    FAIL("no service " << name << " " << address);
}

/// The series by "hostname site address".
std::map<std::string, Answers> byKey(const AnswerHistory& h) {
    std::map<std::string, Answers> out;
    for (const auto& s : h.series()) {
        CHECK(s.answers.size() == h.times().size());
        CHECK_MESSAGE(!out.count(s.hostname + " " + s.site + " " + s.address), "twice: " << s.address);
        out[s.hostname + " " + s.site + " " + s.address] = s.answers;
    }
    return out;
}

}  // namespace

TEST_CASE("AnswerHistory: only intervals with answers are kept; a service never answered has no series") {
    auto snap = st::snapshot(kConfig);
    AnswerHistory h(10, 2);
    hit(*snap, "www.t.test.", "192.0.2.1", 5);  // before the history started: not an interval's worth
    h.sample(gslbOf(snap), 0);
    CHECK(h.series().empty());
    hit(*snap, "www.t.test.", "192.0.2.1", 3);
    hit(*snap, "dual.t.test.", "2001:db8::1");
    h.sample(gslbOf(snap), 2000);
    h.sample(gslbOf(snap), 4000);  // a gap: nothing answered
    hit(*snap, "www.t.test.", "192.0.2.1", 2);
    hit(*snap, "www.t.test.", "192.0.2.3", 7);
    h.sample(gslbOf(snap), 6000);
    CHECK(h.times() == std::vector<int64_t>{0, 2000, 4000, 6000});
    auto s = byKey(h);
    CHECK(s == std::map<std::string, Answers>{{"dual.t.test. west 2001:db8::1", {0, 1, 0, 0}},
                                              {"www.t.test. east 192.0.2.1", {0, 3, 0, 2}},
                                              {"www.t.test. south 192.0.2.3", {0, 0, 0, 7}}});
    CHECK(h.entries() == 4);  // one per (service, sample) with answers: nothing for the gap or the silent
    // Sorted by (hostname, site, address) whatever order the entries came in.
    auto v = h.series();
    REQUIRE(v.size() == 3);
    CHECK(v[0].hostname == "dual.t.test.");
    CHECK(v[1].site == "east");
    CHECK(v[2].site == "south");
}

TEST_CASE("AnswerHistory: the ring wraps around; what leaves the window is gone, what stays is aligned") {
    auto snap = st::snapshot(kConfig);
    AnswerHistory h(3, 2);
    h.sample(gslbOf(snap), 0);
    // Sample k (1..7) gets k answers on 192.0.2.1; 192.0.2.2 answers in sample 2 only.
    for (int k = 1; k <= 7; ++k) {
        hit(*snap, "www.t.test.", "192.0.2.1", k);
        if (k == 2) hit(*snap, "www.t.test.", "192.0.2.2", 9);
        h.sample(gslbOf(snap), 2000 * k);
        CAPTURE(k);
        CHECK(h.times().size() == std::min(k + 1, 3));
        CHECK(h.times().back() == 2000 * k);
        auto s = byKey(h);
        // The window holds samples k-2..k: the oldest is first.
        Answers want;
        for (int n = std::max(0, k - 2); n <= k; ++n) want.push_back(uint64_t(n));
        CHECK(s["www.t.test. east 192.0.2.1"] == want);
        CHECK(s.count("www.t.test. west 192.0.2.2") == (k >= 2 && k <= 4 ? 1u : 0u));  // 2 leaves at 5
        CHECK(h.entries() == std::min<size_t>(size_t(k), 3) + (k >= 2 && k <= 4 ? 1 : 0));
    }
    // A window of one sample is only the latest interval.
    AnswerHistory one(1, 2);
    one.sample(gslbOf(snap), 0);
    hit(*snap, "dual.t.test.", "192.0.2.1", 4);
    one.sample(gslbOf(snap), 2000);
    CHECK(byKey(one) == std::map<std::string, Answers>{{"dual.t.test. east 192.0.2.1", {4}}});
    one.sample(gslbOf(snap), 4000);
    CHECK(one.series().empty());
    CHECK(one.entries() == 0);
}

TEST_CASE("AnswerHistory: a reload carries the counts by key: no spike, no loss, a reordered RRset follows") {
    auto snap = st::snapshot(kConfig);
    AnswerHistory h(10, 2);
    h.sample(gslbOf(snap), 0);
    hit(*snap, "www.t.test.", "192.0.2.2", 4);
    hit(*snap, "www.t.test.", "192.0.2.1", 2);
    h.sample(gslbOf(snap), 2000);
    hit(*snap, "www.t.test.", "192.0.2.2", 3);  // after the sample, before the reload: in the next interval
    // The reload: the zone lists www's addresses in another order, so every www service has another slot.
    std::string zone = st::kZone;
    const std::string www = "www IN A 192.0.2.1\nwww IN A 192.0.2.2\nwww IN A 192.0.2.3\n";
    zone.replace(zone.find(www), www.size(), "www IN A 192.0.2.3\nwww IN A 192.0.2.2\nwww IN A 192.0.2.1\n");
    auto next = reload(snap, kConfig, zone);
    hit(*next, "www.t.test.", "192.0.2.2", 2);
    hit(*next, "www.t.test.", "192.0.2.1", 1);
    h.sample(gslbOf(next), 4000);
    hit(*next, "www.t.test.", "192.0.2.2", 6);
    h.sample(gslbOf(next), 6000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"www.t.test. east 192.0.2.1", {0, 2, 1, 0}},
                                                     {"www.t.test. west 192.0.2.2", {0, 4, 5, 6}}});
}

TEST_CASE("AnswerHistory: services that go away keep their answers in the window; new ones count from 0") {
    auto snap = st::snapshot(kConfig);
    AnswerHistory h(3, 2);
    h.sample(gslbOf(snap), 0);
    hit(*snap, "dual.t.test.", "2001:db8::1", 2);
    hit(*snap, "www.t.test.", "192.0.2.3", 5);
    h.sample(gslbOf(snap), 2000);
    // Reload 1: dual goes, and www's 192.0.2.3 moves from south to west (another key).
    std::string moved = st::baseConfig(
        "[hostname.\"www.t.test.\"]\n" +
        st::threeServices("www.t.test.").replace(st::threeServices("www.t.test.").rfind("south"), 5, "west"));
    auto r1 = reload(snap, moved);
    hit(*r1, "www.t.test.", "192.0.2.3", 1);  // the new key's first answers: in the next interval, not lost
    h.sample(gslbOf(r1), 4000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. west 2001:db8::1", {0, 2, 0}},
                                                     {"www.t.test. south 192.0.2.3", {0, 5, 0}},
                                                     {"www.t.test. west 192.0.2.3", {0, 0, 1}}});
    // Reload 2: dual comes back before its old answers left the window: one series again, not two.
    auto r2 = reload(r1, st::baseConfig(moved.substr(moved.find("[hostname")) + kDual));
    hit(*r2, "dual.t.test.", "2001:db8::1", 3);
    h.sample(gslbOf(r2), 6000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. west 2001:db8::1", {2, 0, 3}},
                                                     {"www.t.test. south 192.0.2.3", {5, 0, 0}},
                                                     {"www.t.test. west 192.0.2.3", {0, 1, 0}}});
    // Sample 1 leaves: the south key (gone since reload 1) has nothing left and no series.
    h.sample(gslbOf(r2), 8000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. west 2001:db8::1", {0, 3, 0}},
                                                     {"www.t.test. west 192.0.2.3", {1, 0, 0}}});
    h.sample(gslbOf(r2), 10000);
    h.sample(gslbOf(r2), 12000);
    CHECK(h.series().empty());
    CHECK(h.entries() == 0);
}

TEST_CASE("AnswerHistory: a snapshot between two samples that dropped a key restarts its count; no GSLB") {
    auto snap = st::snapshot(kConfig);
    AnswerHistory h(5, 2);
    h.sample(gslbOf(snap), 0);
    hit(*snap, "dual.t.test.", "192.0.2.1", 50);
    h.sample(gslbOf(snap), 2000);
    // Two reloads before the next sample: the first drops dual, the second brings it back from 0.
    auto gone = reload(snap, st::baseConfig(kWww));
    auto back = reload(gone, kConfig);
    hit(*back, "dual.t.test.", "192.0.2.1", 3);
    h.sample(gslbOf(back), 4000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. east 192.0.2.1", {0, 50, 3}}});
    // A reload to no GSLB hostnames (an empty counter table): every key keeps its window, nothing counts.
    auto none = reload(back, st::baseConfig(""));
    h.sample(gslbOf(none), 6000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. east 192.0.2.1", {0, 50, 3, 0}}});
    // Back from nothing: the table carried nothing, so all it counted is the first interval's.
    auto again = reload(none, kConfig);
    hit(*again, "dual.t.test.", "192.0.2.1", 4);
    hit(*again, "www.t.test.", "192.0.2.1");
    h.sample(gslbOf(again), 8000);
    CHECK(byKey(h) == std::map<std::string, Answers>{{"dual.t.test. east 192.0.2.1", {0, 50, 3, 0, 4}},
                                                     {"www.t.test. east 192.0.2.1", {0, 0, 0, 0, 1}}});
    // No snapshot at all: samples are taken, nothing is counted.
    AnswerHistory empty(5, 2);
    empty.sample(nullptr, 0);
    empty.sample(nullptr, 2000);
    CHECK(empty.times() == std::vector<int64_t>{0, 2000});
    CHECK(empty.series().empty());
}
