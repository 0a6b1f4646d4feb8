#pragma once
// The query-path entry point of the metrics library (doc/design.md "Principles" 1, 5, 7): runs a compiled
// policy over the candidates of one query. No locks, no heap, no exceptions, no I/O.

#include <cstddef>
#include <cstdint>
#include <span>

#include "metrics/candidate.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/policy.hpp"
#include "metrics/rng.hpp"

namespace gslb::metrics {

enum class SelectStatus : std::uint8_t {
    Ok,            // count >= 1 service indices written
    NoCandidates,  // the input was empty (the hostname has no service of this address family): NODATA
    AllDown,  // `health` left nothing: the server applies the hostname's fallback (doc/design.md "All down")
    AllExcluded,  // preference 0 left nothing (every remaining site at preference 0): the operator took
                  // them all out; the server treats it like AllDown (fallback) unless it decides otherwise
    NoChoice,     // the chooser returned nothing (cannot happen with the built-in choosers and a non-empty
                  // set; reported rather than hidden — doc/design.md "All down")
};

struct SelectResult {
    std::size_t count = 0;  // indices written to `out`
    SelectStatus status = SelectStatus::NoCandidates;
    bool allDown() const noexcept { return status == SelectStatus::AllDown; }
};

// First drops every candidate whose site has preference 0, whatever the policy (the operator's
// "take this site out" must not depend on the policy having a `preference` stage; an empty result is
// AllExcluded). Then runs policy.filters() in order over `candidates` (each compacts in place, so the span's
// contents are scrambled afterwards), then the chooser up to min(policy.params().answers, survivors,
// out.size()) times, writing DISTINCT Candidate::index values into `out` in answer order. Preconditions:
// every Candidate::index < state.serviceCount() <= kMaxServices and indices are distinct. Stateful choosers
// advance once per record written (answers = 2 on round robin answers A B, then C A, ...).
SelectResult select(const Policy& policy, std::span<Candidate> candidates, ChooserState& state, Rng& rng,
                    std::span<std::uint16_t> out) noexcept;

}  // namespace gslb::metrics
