#include "tools/gslbctl/serial.hpp"

#include <ctime>

namespace gslb::ctl {

uint32_t bumpSerial(uint32_t old, uint32_t today) {
    const uint64_t base = uint64_t(today) * 100;
    if (base + 99 <= UINT32_MAX) {
        if (old >= base && old < base + 99) return old + 1;  // already today's: next nn
        if (old < base && serialGreater(uint32_t(base + 1), old)) return uint32_t(base + 1);
    }
    return old + 1;  // unsigned arithmetic wraps modulo 2^32
}

uint32_t initialSerial(uint32_t today) {
    const uint64_t s = uint64_t(today) * 100 + 1;
    return s <= UINT32_MAX ? uint32_t(s) : 1;
}

uint32_t todayUtc() {
    time_t now = time(nullptr);
    tm t{};
    gmtime_r(&now, &t);
    return uint32_t((t.tm_year + 1900) * 10000 + (t.tm_mon + 1) * 100 + t.tm_mday);
}

}  // namespace gslb::ctl
