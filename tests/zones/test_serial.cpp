// The served SOA serial (zones/serial.cpp): RFC 1982 comparisons, each policy, and the wrap at 2^32.
#include <doctest/doctest.h>

#include <string>

#include "zones/serial.hpp"

using namespace gslb::zones;

namespace {
constexpr int64_t kDec1 = 1796083200;  // 2026-12-01 00:00:00 UTC
}

TEST_CASE("serial: RFC 1982 comparison") {
    CHECK(serialGreater(2, 1));
    CHECK_FALSE(serialGreater(1, 2));
    CHECK_FALSE(serialGreater(7, 7));
    CHECK(serialGreater(0, 0xFFFFFFFFu));  // 2^32 - 1 + 1 wraps to 0, which is greater
    CHECK(serialGreater(5, 0xFFFFFFF0u));
    CHECK(serialGreater(0x7FFFFFFFu, 0));
    CHECK_FALSE(serialGreater(0x80000000u, 0));  // exactly half way: undefined, never greater
    CHECK_FALSE(serialGreater(0, 0x80000000u));
}

TEST_CASE("serial: keep serves the file's, but never goes backwards") {
    CHECK(nextServedSerial(SerialPolicy::Keep, 10, std::nullopt, kDec1) == 10);
    CHECK(nextServedSerial(SerialPolicy::Keep, 50, 10u, kDec1) == 50);
    CHECK(nextServedSerial(SerialPolicy::Keep, 10, 10u, kDec1, false) == 10);
    // The trial's case: dnssec = true served 2026120242 (a bump per reload), then dnssec = false with the
    // file still at 2026120202. Serving ...02 would leave every secondary on ...42 and its signatures.
    CHECK(nextServedSerial(SerialPolicy::Keep, 2026120202u, 2026120242u, kDec1) == 2026120243u);
    // The same again with nothing changed since: no bump, so no transfer at each reload.
    CHECK(nextServedSerial(SerialPolicy::Keep, 2026120202u, 2026120243u, kDec1, false) == 2026120243u);
    // The data changed but the file's serial did not: bumped, or the secondaries never see the change.
    CHECK(nextServedSerial(SerialPolicy::Keep, 10, 10u, kDec1, true) == 11);
    // RFC 1982 across the wrap: 5 is greater than 2^32 - 16, so the file's is served.
    CHECK(nextServedSerial(SerialPolicy::Keep, 5, 0xFFFFFFF0u, kDec1) == 5);
    CHECK(nextServedSerial(SerialPolicy::Keep, 0xFFFFFFF0u, 5u, kDec1) == 6);
}

TEST_CASE("serial: unixtime") {
    // First load: now, unless the file is ahead (e.g. a YYYYMMDDnn serial, which is greater than unix time).
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, std::nullopt, kDec1) == uint32_t(kDec1));
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 2026120101u, std::nullopt, kDec1) == 2026120101u);
    // A re-sign later: now again.
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, uint32_t(kDec1), kDec1 + 30) == uint32_t(kDec1 + 30));
    // Two signings in one second, or a clock that went back: last + 1.
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, uint32_t(kDec1), kDec1) == uint32_t(kDec1 + 1));
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, uint32_t(kDec1), kDec1 - 3600) == uint32_t(kDec1 + 1));
    // The file's dateserial stays ahead of the clock: it is bumped by one each signing.
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 2026120101u, 2026120101u, kDec1) == 2026120102u);
    // An operator's bump in the file beyond what was served shows.
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 2026120200u, 2026120102u, kDec1) == 2026120200u);
}

TEST_CASE("serial: increment") {
    CHECK(nextServedSerial(SerialPolicy::Increment, 7, std::nullopt, kDec1) == 7);
    CHECK(nextServedSerial(SerialPolicy::Increment, 7, 7u, kDec1) == 8);
    CHECK(nextServedSerial(SerialPolicy::Increment, 7, 12u, kDec1) == 13);
    CHECK(nextServedSerial(SerialPolicy::Increment, 100, 12u, kDec1) == 100);  // the file moved ahead
}

TEST_CASE("serial: dateserial") {
    CHECK(nextServedSerial(SerialPolicy::Dateserial, 1, std::nullopt, kDec1 + 7200) == 2026120100u);
    CHECK(nextServedSerial(SerialPolicy::Dateserial, 1, 2026120100u, kDec1 + 9000) == 2026120101u);
    CHECK(nextServedSerial(SerialPolicy::Dateserial, 1, 2026113007u, kDec1) == 2026120100u);
    // The 100 of a day used up: tomorrow's numbers, never back.
    CHECK(nextServedSerial(SerialPolicy::Dateserial, 1, 2026120199u, kDec1) == 2026120200u);
    CHECK(nextServedSerial(SerialPolicy::Dateserial, 1, 2026120200u, kDec1) == 2026120201u);
}

TEST_CASE("serial: the wrap at 2^32 keeps going forward") {
    CHECK(nextServedSerial(SerialPolicy::Increment, 0xFFFFFF00u, 0xFFFFFFFFu, kDec1) == 0);
    CHECK(nextServedSerial(SerialPolicy::Increment, 0xFFFFFF00u, 0u, kDec1) == 1);
    // A file serial of 1 is ahead of 2^32 - 1 (by 2): it shows.
    CHECK(nextServedSerial(SerialPolicy::Increment, 1, 0xFFFFFFFFu, kDec1) == 1);
    // Unixtime just past the wrap is ahead of a served serial near the top (5 is 21 after 0xFFFFFFF0).
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, 0xFFFFFFF0u, 5) == 5);
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 1, 0xFFFFFFFFu, kDec1) == uint32_t(kDec1));
    CHECK(nextServedSerial(SerialPolicy::Unixtime, 0xFFFFFFFFu, 0xFFFFFFFFu, 0) == 0);
    // Every result is greater than the last served serial, across the wrap.
    for (uint32_t last : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu})
        for (auto p : {SerialPolicy::Increment, SerialPolicy::Unixtime, SerialPolicy::Dateserial})
            for (uint32_t file : {0u, last, last + 1, 0x80000000u})
                CHECK(serialGreater(nextServedSerial(p, file, last, kDec1), last));
}

TEST_CASE("serial: SOA rdata") {
    std::string rd("\x03ns1\x00\x04host\x00", 11);
    rd += std::string("\x01\x02\x03\x04", 4) + std::string(16, '\x09');
    CHECK(soaSerial(rd) == 0x01020304u);
    setSoaSerial(rd, 0xA0B0C0D0u);
    CHECK(soaSerial(rd) == 0xA0B0C0D0u);
    CHECK(rd.size() == 11 + 20);
    CHECK_FALSE(soaSerial(std::string(19, 'x')));
    CHECK(parseSerialPolicy("unixtime") == SerialPolicy::Unixtime);
    CHECK_FALSE(parseSerialPolicy("Unixtime"));
}
