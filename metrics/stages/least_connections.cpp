// least-connections stage (HP SA9200 User Manual, p. 17, "Least Connections" + "factor"). Rules in
// stages.hpp.
#include "metrics/compare.hpp"
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

bool connectionsRelativeToCapacity(std::span<const Candidate> in) noexcept {
    bool any = false;
    for (const Candidate& c : in) {
        if (std::isnan(c.connections)) continue;
        if (!(c.capacity > 0)) return false;
        any = true;
    }
    return any;
}

std::size_t filterLeastConnections(std::span<Candidate> in, const Params& params) {
    const auto close = [&](double v, double best) { return withinFactor(v, best, params.factor); };
    const auto fewer = [](double a, double b) { return a < b; };
    if (connectionsRelativeToCapacity(in))
        return detail::keepBest(
            in, [](const Candidate& c) { return c.connections / c.capacity; }, fewer, close);
    return detail::keepBest(
        in, [](const Candidate& c) { return c.connections; }, fewer, close);
}

}  // namespace gslb::metrics
