// cpu stage (HP SA9200 User Manual, p. 17, "CPU Utilization of Local Load Balancer" + "factor"). Rules in
// stages.hpp.
#include "metrics/compare.hpp"
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterCpu(std::span<Candidate> in, const Params& params) {
    return detail::keepBest(
        in, [](const Candidate& c) { return c.cpu; }, [](double a, double b) { return a < b; },
        [&](double v, double best) { return withinFactor(v, best, params.factor); });
}

}  // namespace gslb::metrics
