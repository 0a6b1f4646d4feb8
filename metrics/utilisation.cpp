#include "metrics/utilisation.hpp"

#include <algorithm>
#include <cmath>

namespace gslb::metrics {

double Utilisation::free() const noexcept {
    if (std::isnan(capacity) || std::isnan(load)) return kUnknown;
    return std::max(0.0, capacity - load);
}

Utilisation utilisationOf(const Candidate& c) noexcept {
    Utilisation u;
    if (c.sessionsMax > 0) {
        u.basis = LoadBasis::Sessions;
        u.capacity = c.sessionsMax;
        u.load = c.sessionsUsed >= 0 ? c.sessionsUsed : kUnknown;
    } else if (c.capacity > 0) {
        u.basis = LoadBasis::Connections;
        u.capacity = c.capacity;
        u.load = c.connections >= 0 ? c.connections : kUnknown;
    } else {
        return u;
    }
    if (!std::isfinite(u.capacity)) {
        u = Utilisation{};
        return u;
    }
    if (!std::isnan(u.load)) u.value = u.load / u.capacity;
    return u;
}

}  // namespace gslb::metrics
