// libFuzzer target for the client networks of the client-aware answers: the `[topology] nets_file` is
// operator text read at every reload, and NetTable flattens nested prefixes into sorted intervals, the kind
// of code where an off-by-one sends a client to the wrong region or widens an ECS scope past what the answer
// depends on.
//
// The first byte picks a half:
//   even: the rest is a nets_file; Topology::build reads it (no crash; a refusal names a line) and locates a
//         few clients made from the same bytes.
//   odd:  the rest is binary — prefixes (IPv4, or IPv6 under 2001::/16 so that they nest), then client
//         addresses — built into a NetTable, and every lookup (the clients, and each prefix's first and last
//         address and their neighbours) checked against a plain longest-prefix scan of the prefixes: the same
//         entry, and a scope that is exact (RFC 7871 §7.2.1): every address of the scope's prefix gets that
//         entry, and the prefix one bit shorter holds an address that does not.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "server/state/nets.hpp"
#include "server/state/topology.hpp"
#include "server/conf/config.hpp"
#include "fuzz_util.hpp"

using namespace gslb;
using namespace gslb::server;

namespace {

constexpr size_t kMaxEntries = 48;

int widthOf(uint8_t family) {
    return family == zones::kFamilyIPv4 ? 32 : 128;
}

bool bit(const uint8_t* a, int i) {
    return (a[i / 8] >> (7 - i % 8)) & 1;
}

// The first `bits` bits of a and b are equal.
bool samePrefix(const uint8_t* a, const uint8_t* b, int bits) {
    for (int i = 0; i < bits; ++i)
        if (bit(a, i) != bit(b, i)) return false;
    return true;
}

void maskHost(uint8_t* a, int bits, int width) {
    for (int i = bits; i < width; ++i) a[i / 8] &= uint8_t(~(0x80 >> (i % 8)));
}

bool hostBitsSet(const uint8_t* a, int bits, int width) {
    for (int i = bits; i < width; ++i)
        if (bit(a, i)) return true;
    return false;
}

// Adds 1 (or subtracts 1) to a big-endian address of `octets` bytes; false when it wraps.
bool step(uint8_t* a, size_t octets, bool up) {
    for (size_t i = octets; i-- > 0;) {
        if (up ? a[i] != 0xff : a[i] != 0) {
            a[i] = uint8_t(up ? a[i] + 1 : a[i] - 1);
            return true;
        }
        a[i] = up ? 0 : 0xff;
    }
    return false;
}

std::string hex(const uint8_t* a, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += "0123456789abcdef"[a[i] >> 4], s += "0123456789abcdef"[a[i] & 15];
    return s;
}

struct Reader {
    const uint8_t* p;
    size_t n;
    uint8_t byte() {
        if (!n) return 0;
        --n;
        return *p++;
    }
};

void textHalf(std::string_view text) {
    std::string path = fuzzutil::writeFile("nets.txt", text);
    TopologyConf conf;
    conf.netsFile = path;
    conf.line = 1;
    Topology topo;
    std::string error;
    bool ok = topo.build(conf, "fuzz.toml", error);
    if (ok != error.empty()) fuzzutil::fail(__FILE__, __LINE__, "build: ok iff no error", error);
    if (!ok) {
        if (error.find(path) != 0 && error.find("fuzz.toml:1:") != 0)
            fuzzutil::fail(__FILE__, __LINE__, "a refusal names the file and line", error);
        return;
    }
    // Clients from the bytes: every 17 bytes a family byte, a prefix length and an address.
    for (size_t i = 0; i + 17 <= text.size() && i < 17 * 16; i += 17) {
        zones::ClientSubnet c;
        c.family = (uint8_t(text[i]) & 1) ? zones::kFamilyIPv6 : zones::kFamilyIPv4;
        std::memcpy(c.addr, text.data() + i + 1, 16);
        c.bits = uint8_t(uint8_t(text[i]) >> 1) % uint8_t(widthOf(c.family) + 1);
        maskHost(c.addr, c.bits, widthOf(c.family));
        if (c.family == zones::kFamilyIPv4) std::memset(c.addr + 4, 0, 12);
        Location loc;
        topo.locate(c, loc);
        if (loc.scope > widthOf(c.family))
            fuzzutil::fail(__FILE__, __LINE__, "scope within the address", std::to_string(loc.scope));
        if (loc.netEntry >= int32_t(topo.nets().entries().size()))
            fuzzutil::fail(__FILE__, __LINE__, "netEntry indexes entries()", std::to_string(loc.netEntry));
    }
    std::vector<RegionLabel> labels;
    (void)topo.parseKey(std::string(text.substr(0, 64)), labels, error);
}

void tableHalf(Reader r) {
    std::vector<NetTable::Entry> entries;
    size_t count = r.byte() % (kMaxEntries + 1);
    bool expectRefusal = false;
    for (size_t i = 0; i < count; ++i) {
        uint8_t h = r.byte();
        NetTable::Entry e;
        e.family = (h & 1) ? zones::kFamilyIPv6 : zones::kFamilyIPv4;
        int width = widthOf(e.family);
        if (e.family == zones::kFamilyIPv4) {
            for (int k = 0; k < 4; ++k) e.addr[k] = r.byte();
        } else {
            e.addr[0] = 0x20, e.addr[1] = 0x01;  // 2001::/16: the fuzzer's IPv6 prefixes nest and touch
            for (int k = 2; k < 8; ++k) e.addr[k] = r.byte();
            e.addr[15] = r.byte();
        }
        e.bits = uint8_t(r.byte() % (width + 1));
        if (e.family == zones::kFamilyIPv6 && e.bits < 16) e.bits = 16;
        if (!(h & 0x80)) maskHost(e.addr, e.bits, width);  // else: host bits may stay, and must be refused
        if (hostBitsSet(e.addr, e.bits, width)) expectRefusal = true;
        for (const auto& o : entries)
            if (o.family == e.family && o.bits == e.bits && !std::memcmp(o.addr, e.addr, 16))
                expectRefusal = true;
        e.value = uint32_t(i);
        e.text = hex(e.addr, 16) + "/" + std::to_string(e.bits);
        entries.push_back(e);
    }
    NetTable table;
    std::string error;
    bool ok = table.build(entries, error);
    if (ok == expectRefusal)
        fuzzutil::fail(__FILE__, __LINE__, "refused iff host bits are set or a prefix repeats", error);
    if (!ok) return;

    // The naive answer: the longest entry of the family that covers the address.
    auto naive = [&](uint8_t family, const uint8_t* a) {
        int32_t best = -1;
        for (size_t i = 0; i < entries.size(); ++i) {
            const auto& e = entries[i];
            if (e.family == family && samePrefix(e.addr, a, e.bits) &&
                (best < 0 || e.bits > entries[best].bits))
                best = int32_t(i);
        }
        return best;
    };
    auto check = [&](uint8_t family, const uint8_t* a) {
        zones::ClientSubnet c;
        c.family = family;
        c.bits = uint8_t(widthOf(family));
        std::memcpy(c.addr, a, 16);
        NetTable::Match m = table.lookup(c);
        int32_t want = naive(family, a);
        std::string at = hex(a, family == zones::kFamilyIPv4 ? 4 : 16);
        if (m.entry != want)
            fuzzutil::fail(__FILE__, __LINE__, "lookup = longest covering prefix",
                           at + ": got " + std::to_string(m.entry) + ", want " + std::to_string(want));
        int s = m.scope;
        if (s > widthOf(family)) fuzzutil::fail(__FILE__, __LINE__, "scope within the address", at);
        // Exact: no entry lies strictly inside the scope's prefix (so every address there has the same
        // longest match) ...
        for (const auto& e : entries)
            if (e.family == family && e.bits > s && samePrefix(e.addr, a, s))
                fuzzutil::fail(__FILE__, __LINE__, "every address of the scope gets the same entry",
                               at + "/" + std::to_string(s) + " holds " + e.text);
        // ... and one bit less would take in an address that gets another.
        if (s > 0) {
            bool differs = false;
            for (const auto& e : entries)
                differs |= e.family == family && e.bits >= s && samePrefix(e.addr, a, s - 1);
            if (!differs)
                fuzzutil::fail(__FILE__, __LINE__, "the scope is the shortest such prefix",
                               at + "/" + std::to_string(s) + " could be /" + std::to_string(s - 1));
        }
    };
    // Each prefix's first and last address and the addresses just outside.
    for (const auto& e : entries) {
        size_t octets = e.family == zones::kFamilyIPv4 ? 4 : 16;
        int width = widthOf(e.family);
        uint8_t a[16];
        std::memcpy(a, e.addr, 16);
        check(e.family, a);
        if (step(a, octets, false)) check(e.family, a);
        std::memcpy(a, e.addr, 16);
        for (int i = e.bits; i < width; ++i) a[i / 8] |= uint8_t(0x80 >> (i % 8));
        check(e.family, a);
        if (step(a, octets, true)) check(e.family, a);
    }
    // Clients from the rest of the bytes.
    while (r.n >= 5) {
        uint8_t h = r.byte();
        uint8_t a[16]{};
        if (h & 1) {
            a[0] = 0x20, a[1] = 0x01;
            for (int k = 2; k < 8; ++k) a[k] = r.byte();
            a[15] = r.byte();
            check(zones::kFamilyIPv6, a);
        } else {
            for (int k = 0; k < 4; ++k) a[k] = r.byte();
            check(zones::kFamilyIPv4, a);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0 || size > 8192) return 0;
    if (data[0] & 1)
        tableHalf(Reader{data + 1, size - 1});
    else
        textHalf(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
    return 0;
}
