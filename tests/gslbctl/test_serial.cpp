#include <doctest/doctest.h>

#include "tools/gslbctl/serial.hpp"

using namespace gslb::ctl;

TEST_CASE("serial: YYYYMMDDnn") {
    CHECK(initialSerial(20260301) == 2026030101u);
    // An older date: today's first.
    CHECK(bumpSerial(2026022805, 20260301) == 2026030101u);
    CHECK(bumpSerial(2025123199, 20260101) == 2026010101u);
    // Already today's: the next nn.
    CHECK(bumpSerial(2026030100, 20260301) == 2026030101u);
    CHECK(bumpSerial(2026030101, 20260301) == 2026030102u);
    CHECK(bumpSerial(2026030198, 20260301) == 2026030199u);
    // nn rolls over past 99: serial + 1 (tomorrow's 00), never backwards.
    CHECK(bumpSerial(2026030199, 20260301) == 2026030200u);
    // A serial ahead of today (edited tomorrow's, or another scheme that is larger): + 1.
    CHECK(bumpSerial(2026030205, 20260301) == 2026030206u);
    CHECK(bumpSerial(3000000000u, 20260301) == 3000000001u);
    // Small counters jump to the date: it is greater in serial arithmetic.
    CHECK(bumpSerial(1, 20260301) == 2026030101u);
    CHECK(bumpSerial(0, 20260301) == 2026030101u);
}

TEST_CASE("serial: RFC 1982 wrap") {
    CHECK(bumpSerial(4294967295u, 20260301) == 0u);
    CHECK(bumpSerial(4294967294u, 20260301) == 4294967295u);
    // A date whose YYYYMMDD99 does not fit in 32 bits: plain + 1.
    CHECK(bumpSerial(7, 43000101) == 8u);
    // The date would be "behind" the serial in serial arithmetic (difference >= 2^31): + 1, not the date.
    CHECK(bumpSerial(100, 21500101) == 101u);
    CHECK(serialGreater(0, 4294967295u));
    CHECK(serialGreater(2026030101u, 1));
    CHECK_FALSE(serialGreater(5, 5));
    CHECK_FALSE(serialGreater(1, 2));
    CHECK_FALSE(serialGreater(0x80000000u, 0));  // exactly half way: undefined, treated as not greater
}
