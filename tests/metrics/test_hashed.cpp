// hashed chooser and weighted rendezvous hashing (metrics/rendezvous.cpp): persistence per client prefix,
// weights respected, minimal movement when a service leaves or joins. Deterministic (no Rng): the counts
// below are exact for these keys, the bounds are the (within 1 % of the weights, ~1/N moved).
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "helpers.hpp"
#include "metrics/rendezvous.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {

constexpr int kPrefixes = 100000;

// Client prefix i: 10.a.b.0/24 (and more of the space beyond 65536).
std::uint64_t clientKey(int i) {
    std::uint8_t a[4] = {std::uint8_t(10 + (i >> 16)), std::uint8_t(i >> 8), std::uint8_t(i), 0};
    return clientPrefixKey(a, 4, 24);
}

std::vector<std::uint64_t> serviceKeys(int n) {
    std::vector<std::uint64_t> k;
    for (int i = 0; i < n; ++i) {
        std::uint8_t a[4] = {192, 0, 2, std::uint8_t(10 + i)};
        k.push_back(serviceHashKey(a, 4));
    }
    return k;
}

// The pick of the hashed chooser for client `ck` among services `present` (indices into keys/weights).
int pick(std::uint64_t ck, const std::vector<std::uint64_t>& keys, const std::vector<double>& w,
         const std::vector<int>& present) {
    std::vector<Candidate> c;
    for (int s : present) {
        Candidate x;
        x.index = std::uint16_t(s);
        x.weight = w[size_t(s)];
        x.hashScore = rendezvousScore(ck, keys[size_t(s)], w[size_t(s)]);
        c.push_back(x);
    }
    ChooserState st(keys.size());
    Rng rng;
    int pos = chooseHashed(c, 0, Params{}, st, rng);
    return pos < 0 ? -1 : c[size_t(pos)].index;
}

}  // namespace

TEST_CASE("clientPrefixKey: only the prefix counts") {
    std::uint8_t a[4] = {198, 51, 100, 7}, b[4] = {198, 51, 100, 200}, d[4] = {198, 51, 101, 7};
    CHECK(clientPrefixKey(a, 4, 24) == clientPrefixKey(b, 4, 24));
    CHECK(clientPrefixKey(a, 4, 24) != clientPrefixKey(d, 4, 24));
    CHECK(clientPrefixKey(a, 4, 23) == clientPrefixKey(d, 4, 23));
    std::uint8_t v6[16] = {198, 51, 100, 7};
    CHECK(clientPrefixKey(a, 4, 24) != clientPrefixKey(v6, 16, 24));  // the family is part of the key
}

TEST_CASE("hashed: over 100k client prefixes, each service's share is within 1 % of its weight") {
    const std::vector<double> w = {1, 2, 3, 4};
    auto keys = serviceKeys(4);
    std::vector<int> all = {0, 1, 2, 3};
    std::array<int, 4> n{};
    for (int i = 0; i < kPrefixes; ++i) ++n[size_t(pick(clientKey(i), keys, w, all))];
    for (int s = 0; s < 4; ++s) {
        double share = double(n[size_t(s)]) / kPrefixes, want = w[size_t(s)] / 10;
        INFO("service " << s << " share " << share);
        CHECK(std::fabs(share - want) <= 0.01);
    }
}

TEST_CASE("hashed: one of N services leaving moves only its own clients (about 1/N)") {
    for (int N : {3, 5, 8}) {
        std::vector<double> w(size_t(N), 1.0);
        auto keys = serviceKeys(N);
        std::vector<int> all, without;
        for (int s = 0; s < N; ++s) all.push_back(s);
        for (int s = 0; s < N; ++s)
            if (s != 1) without.push_back(s);
        int moved = 0, wrongly = 0;
        for (int i = 0; i < kPrefixes; ++i) {
            int before = pick(clientKey(i), keys, w, all), after = pick(clientKey(i), keys, w, without);
            if (before != after) {
                ++moved;
                if (before != 1) ++wrongly;  // a client of a surviving service must stay
            }
        }
        INFO("N=" << N << " moved " << moved);
        CHECK(wrongly == 0);
        CHECK(std::fabs(double(moved) / kPrefixes - 1.0 / N) <= 0.01);
        // Joining again moves exactly those clients back.
        int back = 0;
        for (int i = 0; i < kPrefixes; ++i)
            back += pick(clientKey(i), keys, w, without) != pick(clientKey(i), keys, w, all);
        CHECK(back == moved);
    }
}

TEST_CASE("hashed: a weight change moves clients only towards or away from that service") {
    std::vector<double> w = {1, 1, 1};
    auto keys = serviceKeys(3);
    std::vector<int> all = {0, 1, 2};
    std::vector<double> w2 = {1, 1, 2};
    int wrong = 0;
    for (int i = 0; i < kPrefixes; ++i) {
        int a = pick(clientKey(i), keys, w, all), b = pick(clientKey(i), keys, w2, all);
        if (a != b && b != 2) ++wrong;
    }
    CHECK(wrong == 0);
}

TEST_CASE("hashed: weight 0 only when every candidate has weight 0; taken ones are skipped") {
    auto keys = serviceKeys(3);
    std::vector<double> w = {0, 1, 0};
    for (int i = 0; i < 1000; ++i) CHECK(pick(clientKey(i), keys, w, {0, 1, 2}) == 1);
    std::vector<double> z = {0, 0, 0};
    int first = pick(clientKey(5), keys, z, {0, 1, 2});
    CHECK(first >= 0);
    CHECK(pick(clientKey(5), keys, z, {0, 1, 2}) == first);  // still persistent
    // answers > 1: the second pick is the next best, never the first again.
    auto c = candidates(3);
    for (int s = 0; s < 3; ++s) c[size_t(s)].hashScore = rendezvousScore(clientKey(9), keys[size_t(s)], 1);
    ChooserState st(3);
    Rng rng;
    int p1 = chooseHashed(c, 0, Params{}, st, rng);
    int p2 = chooseHashed(c, std::uint64_t{1} << c[size_t(p1)].index, Params{}, st, rng);
    CHECK(p2 >= 0);
    CHECK(p2 != p1);
}
