// POST /v1/sites/{site}/rtt: what a site agent learned of its clients' round-trip times (gslbd-agent(8)), for
// the `rtt` stage. The body is checked whole before any figure is written (server/state/rtt_report.hpp); the
// figures go straight into the snapshot's lock-free RttTable, which the workers read on the next query.
#include <nlohmann/json.hpp>

#include "server/base/clock.hpp"
#include "server/base/log.hpp"
#include "server/control/api.hpp"
#include "server/state/rtt_report.hpp"

namespace gslb::server {

ApiResponse ControlApi::rtt(const Snapshot& s, const std::string& site, const std::string& body) {
    auto siteSlot = s.gslb.table->findSite(site);
    if (!siteSlot) return apiError(404, fmt::format("unknown site \"{}\"", site));
    RttSiteStats& st = rttStats_[site];
    const auto refuse = [&](int status, std::string why) {
        ++st.refused;
        // Logged when the reason changes, not at every report of an agent that keeps sending the same thing.
        if (why != st.lastError) log::warn("rtt report from site {} refused: {}", site, why);
        st.lastError = why;
        return apiError(status, std::move(why));
    };
    RttTable* table = s.gslb.rtt.get();
    if (!table)
        return refuse(409,
                      "no hostname's policy has an rtt stage: nothing would read these figures "
                      "(add \"rtt\" to a policy, gslbd.toml(5))");
    std::vector<RttReportEntry> entries;
    std::string why;
    if (!parseRttReport(body, table->v4Bits(), table->v6Bits(), size_t(s.config.rtt.prefixesMaxPerReport),
                        entries, why))
        return refuse(400, why);
    const int64_t now = monotonicMs();
    for (const auto& e : entries)
        table->update(table->prefixKey(e.prefix), *siteSlot, float(e.rttMs), e.samples, now);
    if (!st.lastError.empty()) log::info("rtt reports from site {} are taken again", site);
    ++st.taken;
    st.lastMs = now;
    st.lastPrefixes = entries.size();
    st.lastError.clear();
    return ApiResponse{200, jsonText(nlohmann::json{{"ok", true}, {"prefixes", entries.size()}}) + "\n"};
}

}  // namespace gslb::server
