#pragma once
// The two "close enough" rules of doc/design.md ("Decisions the sources leave open") and the FlashBack
// aggregation of Brocade Virtual ADX GSLB Guide, p. 10. Pure functions, no allocation.

#include <cmath>
#include <span>

namespace gslb::metrics {

// Brocade tolerance (Brocade Virtual ADX GSLB Guide, p. 10, doc/design.md): two values are equal when they
// differ by no more than `tolerancePercent` percent of the larger. Used by session-capacity (available
// sessions) and flashback (ms). Example: 1,000,000 and 950,000 at 10 % are equal (50,000 <= 100,000);
// 1,000,000 and 800,000 are not. Either value NaN -> false (unknown is never equal to anything).
inline bool equalWithinTolerance(double a, double b, double tolerancePercent) noexcept {
    if (std::isnan(a) || std::isnan(b)) return false;
    const double larger = std::fmax(std::fabs(a), std::fabs(b));
    return std::fabs(a - b) <= larger * tolerancePercent / 100.0;
}

// Brocade tolerance with an absolute floor, for times (ms): equal when they differ by no more than
// `tolerancePercent` of the larger OR by no more than `floorMs`. A relative tolerance alone makes LAN noise
// decisive (0.25 ms vs 0.31 ms differ by 20 %); Brocade counts FlashBack in units of 100 us, so a difference
// below what the measurement resolves is no difference (doc/design.md "Metric sources"). NaN -> false.
inline bool equalWithinToleranceOrFloor(double a, double b, double tolerancePercent,
                                        double floorMs) noexcept {
    if (std::isnan(a) || std::isnan(b)) return false;
    return std::fabs(a - b) <= floorMs || equalWithinTolerance(a, b, tolerancePercent);
}

// HP SA9200 factor (HP SA9200 User Manual, p. 17, doc/design.md) for lower-is-better metrics (connections,
// cpu percent): `value` is close enough to `best` when value <= best * (1 + factor). Factor 0 keeps only the
// best. Note best == 0 keeps only zeros whatever the factor (0 * (1 + f) == 0): a factor is relative, so an
// idle site beats every busy one. NaN value or best -> false.
inline bool withinFactor(double value, double best, double factor) noexcept {
    if (std::isnan(value) || std::isnan(best)) return false;
    return value <= best * (1.0 + factor);
}

// "If a host is associated with multiple applications, the GSLB Brocade Virtual ADX uses the slowest
// response time among the applications" (Brocade Virtual ADX GSLB Guide, p. 10). The caller applies it when
// it fills Candidate::l7Ms / l4Ms for a hostname with several checks. Times in ms; NaN entries (no result
// yet) are skipped; returns NaN when no time is known (an empty span included).
inline double aggregateSlowest(std::span<const double> timesMs) noexcept {
    double slowest = std::nan("");
    for (double t : timesMs) {
        if (std::isnan(t)) continue;
        if (std::isnan(slowest) || t > slowest) slowest = t;
    }
    return slowest;
}

}  // namespace gslb::metrics
