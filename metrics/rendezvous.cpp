#include "metrics/rendezvous.hpp"

#include <cmath>
#include <cstring>

#include "metrics/rng.hpp"

namespace gslb::metrics {
namespace {

std::uint64_t hashBytes(const std::uint8_t* p, std::size_t n, std::uint64_t seed) noexcept {
    std::uint64_t h = mix64(seed ^ n);
    for (std::size_t i = 0; i < n; i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        h = mix64(h ^ w) + 0x9e3779b97f4a7c15ULL;
    }
    return h;
}

}  // namespace

std::uint64_t clientPrefixKey(const std::uint8_t* addr, std::size_t octets, unsigned bits) noexcept {
    std::uint8_t masked[16] = {};
    if (octets > 16) octets = 16;
    if (bits > octets * 8) bits = unsigned(octets * 8);
    std::memcpy(masked, addr, bits / 8);
    if (bits % 8) masked[bits / 8] = std::uint8_t(addr[bits / 8] & (0xFF << (8 - bits % 8)));
    return hashBytes(masked, octets, 0x243f6a8885a308d3ULL ^ (std::uint64_t(octets) << 8) ^ bits);
}

std::uint64_t serviceHashKey(const std::uint8_t* addr, std::size_t len) noexcept {
    return hashBytes(addr, len, 0x13198a2e03707344ULL);
}

double rendezvousScore(std::uint64_t client, std::uint64_t service, double weight) noexcept {
    const std::uint64_t h = mix64(client ^ mix64(service + 0xa4093822299f31d0ULL));
    const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;  // (0, 1), never 0 or 1
    if (!(weight > 0)) return u - 1.0;
    return weight / -std::log(u);
}

}  // namespace gslb::metrics
