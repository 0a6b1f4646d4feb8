#pragma once
// Per-hostname policy parameters (the TOML keys session_threshold, session_tolerance, flashback_tolerance,
// factor, answers; doc/design.md "The config file"). Ranges are checked by Policy::compile.

#include <cstdint>

namespace gslb::metrics {

struct Params {
    double sessionThreshold = 90.0;  // percent of the session table in use, 0..100 (session-threshold)
    double sessionTolerance = 10.0;  // percent, 0..100 (session-capacity), Brocade tolerance rule
    // percent of the smaller session table, 0..100 (session-capacity): available sessions that differ by no
    // more than this are equal whatever the tolerance (near full, one seat must not decide)
    double sessionFloor = 5.0;
    double flashbackTolerance = 10.0;  // percent, 0..100 (flashback), Brocade tolerance rule
    // ms, 0..10000 (flashback): times that differ by no more than this are equal whatever the tolerance
    // (on a LAN the noise between equal sites is far above 10 %; a site tens of ms slower loses).
    double flashbackFloorMs = 5.0;
    double factor = 0.0;            // >= 0, HP close-enough factor (least-connections, cpu)
    std::uint16_t answers = 1;      // records per answer, 1..kMaxServices
    double nearestTolerance = 0.0;  // km >= 0 (topology "nearest"): sites within best + this are kept
    double rttTolerance = 10.0;     // percent, 0..100 (rtt), the Brocade tolerance rule on round-trip times
    double rttFloorMs = 5.0;        // ms, 0..10000 (rtt): RTTs that differ by no more than this are equal
    // s (headroom): the answer's TTL range [ttlMin, ttl] for the adaptive TTL (metrics/balance.hpp); a site
    // whose free seats cannot take the resolver's demand for ttlMin is not given to it while another can.
    std::uint32_t ttl = 30;
    std::uint32_t ttlMin = 6;
    // 0..1 (headroom): gamma, the square-root margin's blend (metrics/balance.hpp, 1.): 0 aims at equal
    // utilisation, 1 at free seats ∝ √capacity. Not a config key: a fixed default measured in doc/lab.md;
    // tests set 0 to see the other rules alone.
    double sqrtMargin = 0.25;
};

}  // namespace gslb::metrics
