#include "zones/serial.hpp"

#include <ctime>
#include <string>

namespace gslb::zones {

std::optional<SerialPolicy> parseSerialPolicy(std::string_view t) {
    if (t == "keep") return SerialPolicy::Keep;
    if (t == "increment") return SerialPolicy::Increment;
    if (t == "unixtime") return SerialPolicy::Unixtime;
    if (t == "dateserial") return SerialPolicy::Dateserial;
    return std::nullopt;
}

const char* serialPolicyName(SerialPolicy p) {
    switch (p) {
        case SerialPolicy::Keep:
            return "keep";
        case SerialPolicy::Increment:
            return "increment";
        case SerialPolicy::Unixtime:
            return "unixtime";
        case SerialPolicy::Dateserial:
            return "dateserial";
    }
    return "keep";
}

bool serialGreater(uint32_t a, uint32_t b) {
    uint32_t d = a - b;  // modulo 2^32
    return d != 0 && d < 0x80000000u;
}

uint32_t nextServedSerial(SerialPolicy policy, uint32_t fileSerial, std::optional<uint32_t> last, int64_t now,
                          bool changed) {
    if (policy == SerialPolicy::Keep) {
        if (!last || serialGreater(fileSerial, *last)) return fileSerial;
        return changed ? *last + 1 : *last;
    }
    uint32_t s = fileSerial;
    std::optional<uint32_t> want;
    switch (policy) {
        case SerialPolicy::Increment:
            if (last) want = *last + 1;
            break;
        case SerialPolicy::Unixtime:
            want = uint32_t(uint64_t(now));
            break;
        case SerialPolicy::Dateserial: {
            time_t t = time_t(now);
            tm u{};
            gmtime_r(&t, &u);
            uint64_t d = uint64_t(u.tm_year + 1900) * 1000000 + uint64_t(u.tm_mon + 1) * 10000 +
                         uint64_t(u.tm_mday) * 100;
            want = uint32_t(d);  // fits until the year 42949
            break;
        }
        case SerialPolicy::Keep:
            break;
    }
    if (want && serialGreater(*want, s)) s = *want;
    // Whatever the policy and the file say, never the serial served before or one "behind" it: a secondary
    // would ignore it (RFC 1982) and keep the old signatures.
    if (last && !serialGreater(s, *last)) s = *last + 1;
    return s;
}

std::optional<uint32_t> soaSerial(std::string_view rd) {
    if (rd.size() < 20) return std::nullopt;
    const auto* p = reinterpret_cast<const uint8_t*>(rd.data() + rd.size() - 20);
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

void setSoaSerial(std::string& rd, uint32_t serial) {
    size_t o = rd.size() - 20;
    rd[o] = char(serial >> 24);
    rd[o + 1] = char(serial >> 16);
    rd[o + 2] = char(serial >> 8);
    rd[o + 3] = char(serial);
}

}  // namespace gslb::zones
