#include "metrics/policy.hpp"

#include <cmath>
#include <fmt/format.h>

namespace gslb::metrics {
namespace {

std::string choosersList() {
    std::string out;
    for (const auto& s : allStages()) {
        if (!s.isChooser) continue;
        if (!out.empty()) out += ", ";
        out += s.name;
    }
    return out;
}

// NaN fails both comparisons, so it is refused too.
bool inRange(double v, double lo, double hi) {
    return v >= lo && v <= hi;
}

}  // namespace

// The default before `headroom` was Brocade's metric order with HP's last step, `health, session-threshold,
// session-capacity, flashback, least-connections, random` (doc/design.md); it is one `policy = [...]` away,
// and the closed-loop lab (doc/lab.md) is where the two were measured against each other and static weights.
const std::vector<std::string>& Policy::defaultStageNames() {
    static const std::vector<std::string> names{"health", "headroom"};
    return names;
}

Policy Policy::defaultPolicy() {
    Policy p;
    std::string error;
    compile(defaultStageNames(), Params{}, p, error);  // cannot fail: test_policy.cpp checks the default
    return p;
}

bool Policy::compile(const std::vector<std::string>& stageNames, const Params& params, Policy& out,
                     std::string& error) {
    const auto fail = [&](std::string msg) {
        error = std::move(msg);
        return false;
    };

    if (!inRange(params.sessionThreshold, 0, 100))
        return fail(
            fmt::format("session_threshold = {} is out of range 0..100 (percent)", params.sessionThreshold));
    if (!inRange(params.sessionTolerance, 0, 100))
        return fail(
            fmt::format("session_tolerance = {} is out of range 0..100 (percent)", params.sessionTolerance));
    if (!inRange(params.sessionFloor, 0, 100))
        return fail(fmt::format("session_floor = {} is out of range 0..100 (percent)", params.sessionFloor));
    if (!inRange(params.flashbackTolerance, 0, 100))
        return fail(fmt::format("flashback_tolerance = {} is out of range 0..100 (percent)",
                                params.flashbackTolerance));
    if (!inRange(params.flashbackFloorMs, 0, 10000))
        return fail(
            fmt::format("flashback_floor = {} is out of range 0..10000 (ms)", params.flashbackFloorMs));
    if (!inRange(params.rttTolerance, 0, 100))
        return fail(fmt::format("rtt_tolerance = {} is out of range 0..100 (percent)", params.rttTolerance));
    if (!inRange(params.rttFloorMs, 0, 10000))
        return fail(fmt::format("rtt_floor = {} is out of range 0..10000 (ms)", params.rttFloorMs));
    if (!(params.factor >= 0) || !std::isfinite(params.factor))
        return fail(fmt::format("factor = {} is out of range (a finite number >= 0)", params.factor));
    if (params.answers < 1 || params.answers > kMaxServices)
        return fail(fmt::format("answers = {} is out of range 1..{}", params.answers, kMaxServices));

    Policy p;
    p.params_ = params;
    bool seen[kStageCount] = {};
    for (std::size_t i = 0; i < stageNames.size(); ++i) {
        const StageInfo* s = findStage(stageNames[i]);
        if (s == nullptr)
            return fail(fmt::format("unknown stage \"{}\" (known: {})", stageNames[i], knownStageNames()));
        auto& was = seen[static_cast<std::size_t>(s->kind)];
        if (was) return fail(fmt::format("stage \"{}\" appears twice", s->name));
        was = true;
        if (s->isChooser) {
            if (p.chooser_ != nullptr)
                return fail(fmt::format("policy has two choosers, \"{}\" and \"{}\": exactly one, last",
                                        p.chooser_->name, s->name));
            if (i + 1 != stageNames.size())
                return fail(fmt::format("chooser \"{}\" must be the last stage", s->name));
            p.chooser_ = s;
        } else {
            p.filters_[p.filterCount_++] = s;
        }
    }
    if (p.chooser_ == nullptr)
        return fail(fmt::format("policy must end with exactly one chooser (one of: {})", choosersList()));
    out = p;
    return true;
}

std::string Policy::describe() const {
    std::string out;
    for (const StageInfo* s : filters()) {
        out += s->name;
        out += ", ";
    }
    if (chooser_ != nullptr) out += chooser_->name;
    return out;
}

}  // namespace gslb::metrics
