#include "metrics/health/smoothing.hpp"

namespace gslb::metrics::health {

double slowest(std::span<const double> values) {
    double m = kUnknown;
    for (double v : values)
        if (!std::isnan(v) && (std::isnan(m) || v > m)) m = v;
    return m;
}

}  // namespace gslb::metrics::health
