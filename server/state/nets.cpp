#include "server/state/nets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace gslb::server {
namespace {

using u128 = unsigned __int128;

template <class K>
K keyOf(const uint8_t* a) {
    K k = 0;
    for (size_t i = 0; i < sizeof(K); ++i) k = (k << 8) | a[i];
    return k;
}

template <class K>
int clz(K x) {
    if constexpr (sizeof(K) == 4) {
        return x ? __builtin_clz(x) : 32;
    } else {
        uint64_t hi = uint64_t(x >> 64), lo = uint64_t(x);
        if (hi) return __builtin_clzll(hi);
        return lo ? 64 + __builtin_clzll(lo) : 128;
    }
}

}  // namespace

template <class K>
void NetTable::Family<K>::build(std::vector<std::pair<K, K>> ranges, const std::vector<int32_t>& ids) {
    // Prefixes either nest or are disjoint. Sorted by start, then by size (larger first), a sweep with a
    // stack of the enclosing prefixes emits each stretch of the space with its most specific prefix.
    starts.clear();
    value.clear();
    index.clear();
    // No prefix of this family: lookup finds no interval and answers "none, scope 0", what one interval
    // of the whole space would say, without the 65,537-entry index (256 KB, rebuilt by every buildGslb,
    // which `gslbd --check` runs once per hostname).
    if (ranges.empty()) return;
    constexpr K kMax = ~K(0);
    std::vector<size_t> order(ranges.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (ranges[a].first != ranges[b].first) return ranges[a].first < ranges[b].first;
        return ranges[a].second > ranges[b].second;
    });
    auto emit = [&](K start, int32_t v) {
        if (!starts.empty() && value.back() == v) return;  // the same result continues
        if (!starts.empty() && starts.back() == start) {
            value.back() = v;
            return;
        }
        starts.push_back(start);
        value.push_back(v);
    };
    std::vector<size_t> stack;
    emit(0, -1);
    for (size_t i : order) {
        const auto [lo, hi] = ranges[i];
        while (!stack.empty() && ranges[stack.back()].second < lo) {
            K end = ranges[stack.back()].second;
            stack.pop_back();
            if (end != kMax) emit(end + 1, stack.empty() ? -1 : ids[stack.back()]);
        }
        emit(lo, ids[i]);
        stack.push_back(i);
    }
    while (!stack.empty()) {
        K end = ranges[stack.back()].second;
        stack.pop_back();
        if (end != kMax) emit(end + 1, stack.empty() ? -1 : ids[stack.back()]);
    }
    // index[t]: the last interval starting at or before t << (width - 16).
    constexpr int width = int(sizeof(K) * 8);
    index.assign(65537, 0);
    size_t j = 0;
    for (uint32_t t = 0; t < 65536; ++t) {
        K at = K(t) << (width - 16);
        while (j + 1 < starts.size() && starts[j + 1] <= at) ++j;
        index[t] = uint32_t(j);
    }
    index[65536] = uint32_t(starts.size() - 1);
}

template <class K>
NetTable::Match NetTable::Family<K>::lookup(K key, int width) const noexcept {
    Match m;
    if (starts.empty()) return m;
    uint32_t top = uint32_t(key >> (width - 16));
    // The interval holding `key` is among index[top] .. index[top + 1]: the last whose start <= key.
    size_t lo = index[top], hi = index[top + 1];
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (starts[mid] <= key)
            lo = mid;
        else
            hi = mid - 1;
    }
    m.entry = value[lo];
    // The result holds for [starts[lo], next start - 1]: the scope is the shortest prefix of `key` that stays
    // inside, i.e. one bit longer than the bits `key` shares with the addresses just outside.
    int scope = 0;
    K first = starts[lo];
    if (first != 0) scope = std::max(scope, clz<K>(key ^ (first - 1)) + 1);
    if (lo + 1 < starts.size()) scope = std::max(scope, clz<K>(key ^ starts[lo + 1]) + 1);
    m.scope = uint8_t(std::min(scope, width));
    return m;
}

bool NetTable::build(std::vector<Entry> entries, std::string& error) {
    std::vector<std::pair<uint32_t, uint32_t>> r4;
    std::vector<std::pair<u128, u128>> r6;
    std::vector<int32_t> id4, id6;
    std::map<std::pair<u128, int>, std::string> seen[2];
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        int width = e.family == zones::kFamilyIPv4 ? 32 : 128;
        if (e.bits > width) {
            error = fmt::format("\"{}\": prefix longer than the address", e.text);
            return false;
        }
        if (width == 32) {
            uint32_t k = keyOf<uint32_t>(e.addr);
            uint32_t host = e.bits == 0 ? ~0u : (e.bits == 32 ? 0 : (~0u >> e.bits));
            if (k & host) {
                error =
                    fmt::format("\"{}\": bits set past the prefix length (did you mean {}?)", e.text,
                                fmt::format("{}.{}.{}.{}/{}", (k & ~host) >> 24, ((k & ~host) >> 16) & 255,
                                            ((k & ~host) >> 8) & 255, (k & ~host) & 255, e.bits));
                return false;
            }
            auto [it, fresh] = seen[0].emplace(std::make_pair(u128(k), int(e.bits)), e.text);
            if (!fresh) {
                error = fmt::format("\"{}\" and \"{}\" are the same network", it->second, e.text);
                return false;
            }
            r4.push_back({k, k | host});
            id4.push_back(int32_t(i));
        } else {
            u128 k = keyOf<u128>(e.addr);
            u128 host = e.bits == 0 ? ~u128(0) : (e.bits == 128 ? u128(0) : (~u128(0) >> e.bits));
            if (k & host) {
                error = fmt::format("\"{}\": bits set past the prefix length", e.text);
                return false;
            }
            auto [it, fresh] = seen[1].emplace(std::make_pair(k, int(e.bits)), e.text);
            if (!fresh) {
                error = fmt::format("\"{}\" and \"{}\" are the same network", it->second, e.text);
                return false;
            }
            r6.push_back({k, k | host});
            id6.push_back(int32_t(i));
        }
    }
    entries_ = std::move(entries);
    v4_.build(std::move(r4), id4);
    v6_.build(std::move(r6), id6);
    return true;
}

NetTable::Match NetTable::lookup(const zones::ClientSubnet& c) const noexcept {
    if (entries_.empty()) return {};
    if (c.family == zones::kFamilyIPv4) return v4_.lookup(keyOf<uint32_t>(c.addr), 32);
    if (c.family == zones::kFamilyIPv6) return v6_.lookup(keyOf<u128>(c.addr), 128);
    return {};
}

}  // namespace gslb::server
