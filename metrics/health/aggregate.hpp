#pragma once
// How the results of several checks combine (doc/design.md "Metric sources"). Pure logic, no I/O.
//
// - Service slot: Down when any of its checks is Down; Up when every check that has a result is Up; when no
//   check has a result yet, std::nullopt ("no news": the caller leaves the slot as it is — Unknown for a new
//   slot, the carried state when a reload replaced a check and the new one has not answered yet). At start-up
//   every check has a result after the initial round, so the slot is Up only when all its checks are up.
// - Site: down when it has at least one service and every one of its services is checked and Down. A
//   service without a check (or not yet known) keeps its site up: the site flag takes every service of the
//   site out, and an unchecked service has given no reason for that.

#include <optional>
#include <span>

#include "metrics/candidate.hpp"

namespace gslb::metrics::health {

std::optional<Health> combineChecks(std::span<const Health> checks);

struct SiteService {
    bool checked = false;
    Health health = Health::Unknown;
};
bool siteDown(std::span<const SiteService> services);

}  // namespace gslb::metrics::health
