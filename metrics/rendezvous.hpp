#pragma once
// Weighted rendezvous (highest random weight) hashing for the `hashed` chooser (Thaler & Ravishankar 1998;
// the weighted form of Schindelhauer & Schomaker): each (client prefix, service) pair gets a score, the
// highest wins. Removing a service changes only the choice of the prefixes it had won; a service wins a share
// of the prefixes proportional to its weight. Pure functions, no allocation; the query path computes one key
// per query and one score per candidate.

#include <cstddef>
#include <cstdint>

namespace gslb::metrics {

/// The key of a client prefix: the first `bits` bits of `addr` (`octets` long: 4 or 16), with the address
/// family, so 10.0.0.0/24 and its IPv6 look-alike differ. bits > octets * 8 is clamped.
std::uint64_t clientPrefixKey(const std::uint8_t* addr, std::size_t octets, unsigned bits) noexcept;

/// The key of a service: its address octets (4 or 16). Stable across restarts and reloads, and equal on every
/// gslbd of an NS set, so each of them sends a prefix to the same service.
std::uint64_t serviceHashKey(const std::uint8_t* addr, std::size_t len) noexcept;

/// Score of `service` for `client`: weight / -ln(u), u uniform in (0, 1) from both keys. weight <= 0 (or
/// NaN) gives a score in (-1, 0): below every positive weight, still a stable order among such services.
double rendezvousScore(std::uint64_t client, std::uint64_t service, double weight) noexcept;

}  // namespace gslb::metrics
