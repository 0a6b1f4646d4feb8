// The word-at-a-time name primitives of zones/name.hpp (lower8, lowerCopy, sameNoCase, hashName) against the
// octet-by-octet rules they replace on the query path: every octet value in every lane, every length and
// alignment up to 40, and random names with random case.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "zones/name.hpp"

using namespace gslb::zones;

namespace {

bool sameRef(const uint8_t* a, const uint8_t* b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (lowerByte(a[i]) != lowerByte(b[i])) return false;
    return true;
}

uint8_t flipCase(uint8_t c) {
    if (c >= 'a' && c <= 'z') return uint8_t(c - 32);
    if (c >= 'A' && c <= 'Z') return uint8_t(c + 32);
    return c;
}

}  // namespace

TEST_CASE("lower8 lower-cases each octet as lowerByte does, whatever its neighbours") {
    for (unsigned v = 0; v < 256; ++v)
        for (int lane = 0; lane < 8; ++lane)
            for (uint8_t fill : {uint8_t(0x00), uint8_t('Z'), uint8_t('@'), uint8_t(0xFF), uint8_t('a')}) {
                uint8_t in[8], want[8];
                std::memset(in, fill, 8);
                in[lane] = uint8_t(v);
                for (int i = 0; i < 8; ++i) want[i] = lowerByte(in[i]);
                uint64_t out = lower8(load8(in));
                CHECK(std::memcmp(&out, want, 8) == 0);
            }
}

TEST_CASE("lowerCopy and sameNoCase match the octet loops at every length and offset") {
    std::mt19937 rng(7);
    const uint8_t alphabet[] = {'a', 'z', 'A', 'Z', '@',  '[',  '`',  '{',
                                '-', '0', 3,   0,   0x80, 0xC1, 0xDA, 0xFF};
    for (size_t len = 0; len <= 40; ++len)
        for (size_t off = 0; off < 8; ++off)
            for (int round = 0; round < 20; ++round) {
                std::vector<uint8_t> a(len + off + 8), b(len + off + 8), dst(len + 16, 0xEE),
                    ref(len + 16, 0xEE);
                for (size_t i = 0; i < len; ++i) a[off + i] = alphabet[rng() % sizeof alphabet];
                lowerCopy(dst.data() + 1, a.data() + off, len);
                for (size_t i = 0; i < len; ++i) ref[1 + i] = lowerByte(a[off + i]);
                CHECK(dst == ref);  // nothing written outside [0, len)
                // b: the same octets in another case (equal), then one octet changed (unequal unless the
                // change is a case change of a letter).
                for (size_t i = 0; i < len; ++i) b[off + i] = rng() % 2 ? flipCase(a[off + i]) : a[off + i];
                CHECK(sameNoCase(a.data() + off, b.data() + off, len));
                if (len) {
                    size_t at = rng() % len;
                    b[off + at] = alphabet[rng() % sizeof alphabet];
                    CHECK(sameNoCase(a.data() + off, b.data() + off, len) ==
                          sameRef(a.data() + off, b.data() + off, len));
                }
            }
}

TEST_CASE("hashName: equal names hash alike, and the length counts") {
    std::vector<uint8_t> z(64, 0);
    std::vector<uint32_t> seen;
    for (size_t n = 0; n <= 64; ++n) seen.push_back(hashName(z.data(), n));
    for (size_t i = 0; i < seen.size(); ++i)
        for (size_t j = i + 1; j < seen.size(); ++j) CHECK(seen[i] != seen[j]);
    const uint8_t name[] = "\3www\7example\3com";
    std::vector<uint8_t> copy(name, name + sizeof name);
    CHECK(hashName(name, sizeof name) == hashName(copy.data(), copy.size()));
    CHECK(hashName(std::string_view(reinterpret_cast<const char*>(name), sizeof name)) ==
          hashName(name, sizeof name));
    copy[5] ^= 1;
    CHECK(hashName(name, sizeof name) != hashName(copy.data(), copy.size()));
}

TEST_CASE("wireNameLen: the length of an uncompressed wire name, or 0 when there is none") {
    const uint8_t www[] = {3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0xFF};
    CHECK(wireNameLen(www, sizeof www) == 13);
    CHECK(wireNameLen(www, 13) == 13);
    CHECK(wireNameLen(www, 12) == 0);  // the root label past `max`
    const uint8_t root[] = {0};
    CHECK(wireNameLen(root, 1) == 1);
    CHECK(wireNameLen(root, 0) == 0);
    const uint8_t pointer[] = {0xC0, 12};  // compression: never in zone data or a journal
    CHECK(wireNameLen(pointer, 2) == 0);
    // 255 octets is the longest name (RFC 1035 §2.3.4): labels of 63, 63, 63 and 61 octets and the root.
    const auto labels = [](std::vector<int> lens) {
        std::vector<uint8_t> n;
        for (int l : lens) {
            n.push_back(uint8_t(l));
            n.insert(n.end(), size_t(l), 'a');
        }
        n.push_back(0);
        return n;
    };
    auto longest = labels({63, 63, 63, 61});
    REQUIRE(longest.size() == 255);
    CHECK(wireNameLen(longest.data(), longest.size()) == 255);
    auto over = labels({63, 63, 63, 62});  // 256 octets
    REQUIRE(over.size() == 256);
    CHECK(wireNameLen(over.data(), over.size()) == 0);
}

TEST_CASE(
    "endsInDot and textToName: a dot after an escaped backslash ends the name, an escaped dot does not") {
    CHECK(endsInDot("a."));
    CHECK(endsInDot("."));
    CHECK_FALSE(endsInDot("a"));
    CHECK_FALSE(endsInDot(""));
    CHECK_FALSE(endsInDot("a\\."));      // the label "a."
    CHECK(endsInDot("a\\\\."));          // the label "a\", then the root
    CHECK_FALSE(endsInDot("a\\\\\\."));  // the label "a\."
    CHECK(endsInDot("\\\\."));           // the label "\"
    WireName w;
    REQUIRE(textToName("a\\\\.", {}, w));  // the fuzz finding's shape: absolute, root kept
    CHECK(w == std::string("\2a\\\0", 4));
    REQUIRE(textToName("a\\.", std::string("\1b\0", 3), w));  // relative: the origin follows
    CHECK(w == std::string("\2a.\1b\0", 6));
    REQUIRE(textToName(nameToText(std::string("\2a\\\0", 4)), {}, w));  // and back from its own text
    CHECK(w == std::string("\2a\\\0", 4));
}
