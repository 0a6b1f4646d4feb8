// readName (zones/read_name.hpp), the one decompressor of names in messages (RFC 1035 §4.1.4) that the query
// parse and TSIG share: worked messages, and each way a name is malformed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "zones/read_name.hpp"

using namespace gslb::zones;

namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> v) {
    std::vector<uint8_t> out;
    for (int b : v) out.push_back(uint8_t(b));
    return out;
}

std::string text(const uint8_t* p, size_t n) {
    return std::string(reinterpret_cast<const char*>(p), n);
}

}  // namespace

TEST_CASE("readName: a plain name, a pointer, a label then a pointer; lower-cased, offset after the name") {
    // 12 octets of header, then "Ab.C." at 12, "x" + pointer to 15 ("C.") at 18, a pointer to 12 at 22.
    auto m = bytes({0,    0,   0,    0,  0,   0, 0, 0, 0, 0, 0, 0,  //
                    2,    'A', 'b',  1,  'C', 0,                    //
                    1,    'x', 0xC0, 15,                            //
                    0xC0, 12});
    uint8_t out[kMaxNameLen];
    uint8_t len = 0;
    CHECK(readName(m, 12, out, &len) == 18);
    CHECK(text(out, len) == std::string("\2ab\1c\0", 6));
    CHECK(readName(m, 18, out, &len) == 22);  // after the pointer, not after what it points to
    CHECK(text(out, len) == std::string("\1x\1c\0", 5));
    CHECK(readName(m, 22, out, &len) == 24);
    CHECK(text(out, len) == std::string("\2ab\1c\0", 6));
    // Skipping gives the same offsets.
    CHECK(readName(m, 12) == 18);
    CHECK(readName(m, 18) == 22);
    CHECK(readName(m, 22) == 24);
}

TEST_CASE("readName: malformed names are 0") {
    // A pointer forward, to itself, and a loop of two.
    CHECK(readName(bytes({0xC0, 2, 0}), 0) == 0);
    CHECK(readName(bytes({0, 0xC0, 1}), 1) == 0);
    CHECK(readName(bytes({1, 'a', 0xC0, 3, 0xC0, 2}), 4) == 0);
    // Cut short: a label past the end, a lone pointer octet, no root label, nothing at all.
    CHECK(readName(bytes({3, 'a', 'b'}), 0) == 0);
    CHECK(readName(bytes({1, 'a', 0xC0}), 0) == 0);
    CHECK(readName(bytes({1, 'a'}), 0) == 0);
    CHECK(readName(bytes({}), 0) == 0);
    // Extended label types 0x40 and 0x80 (RFC 6891 §5).
    CHECK(readName(bytes({0x41, 'a', 0}), 0) == 0);
    CHECK(readName(bytes({0x81, 'a', 0}), 0) == 0);
    // 255 octets is the most (RFC 1035 §2.3.4): four 63-octet labels and the root are 257.
    std::vector<uint8_t> longName;
    for (int l = 0; l < 4; ++l) {
        longName.push_back(63);
        longName.insert(longName.end(), 63, 'a');
    }
    longName.push_back(0);
    CHECK(readName(longName, 0) == 0);
    // 254 octets of labels and the root: 255, the most there is.
    std::vector<uint8_t> most;
    for (int l = 0; l < 3; ++l) {
        most.push_back(63);
        most.insert(most.end(), 63, 'a');
    }
    most.push_back(61);
    most.insert(most.end(), 61, 'b');
    most.push_back(0);
    uint8_t out[kMaxNameLen];
    uint8_t len = 0;
    CHECK(readName(most, 0, out, &len) == 255);
    CHECK(len == 255);
}

TEST_CASE("readName: a chain of pointers ends after kMaxLabels hops, however backwards each one goes") {
    // Root at 0, then pointers each to the one before: a chain of n hops from the last.
    auto chain = [](size_t n) {
        std::vector<uint8_t> m = {0};
        for (size_t i = 0; i < n; ++i) {
            size_t prev = i == 0 ? 0 : 1 + 2 * (i - 1);
            m.push_back(uint8_t(0xC0 | (prev >> 8)));
            m.push_back(uint8_t(prev));
        }
        return m;
    };
    auto ok = chain(kMaxLabels);
    CHECK(readName(ok, ok.size() - 2) == ok.size());
    auto tooMany = chain(kMaxLabels + 1);
    CHECK(readName(tooMany, tooMany.size() - 2) == 0);
}
