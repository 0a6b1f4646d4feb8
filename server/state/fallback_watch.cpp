#include "server/state/fallback_watch.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include "server/base/events.hpp"
#include "server/base/log.hpp"

namespace gslb::server {

namespace {

std::string fallbackName(const GslbHost& h) {
    if (h.fallback == Fallback::None) return "none";
    if (h.fallback == Fallback::All || h.fallbackLen == 0) return "all";
    char text[INET6_ADDRSTRLEN] = "";
    inet_ntop(h.fallbackLen == 4 ? AF_INET : AF_INET6, h.fallbackRdata, text, sizeof text);
    return text;
}

}  // namespace

std::vector<FallbackTransition> FallbackWatch::sample(const Gslb& g) {
    std::vector<FallbackTransition> out;
    if (!g.fallbacks || !g.drainedFallbacks || !g.hostAnswers) return out;
    ++samples_;
    for (size_t i = 0; i < g.hosts.size(); ++i) {
        const GslbHost& h = g.hosts[i];
        const uint64_t fallbacks = g.fallbacks->total(uint32_t(i)) + g.drainedFallbacks->total(uint32_t(i));
        uint64_t answers = 0;
        for (const auto& fam : h.family)
            for (const auto& s : fam) answers += g.hostAnswers->total(s.hostSlot);
        auto [it, fresh] = hosts_.try_emplace(h.name);
        State& st = it->second;
        // A hostname not seen before (the first sample after gslbd's start, or one a reload added) counts
        // from zero, as its counters did: the answers before the control loop's first second count (a
        // fallback in them was lost when the first sample only recorded the counts). A counter that went back
        // (a hostname removed and added again, its counts not carried) restarts.
        const uint64_t sinceF = fresh ? 0 : st.fallbacks, sinceA = fresh ? 0 : st.answers;
        const bool comparable = fallbacks >= sinceF && answers >= sinceA;
        const uint64_t df = comparable ? fallbacks - sinceF : 0;
        const uint64_t da = comparable ? answers - sinceA : 0;
        st.fallbacks = fallbacks;
        st.answers = answers;
        st.seen = samples_;
        if (!st.in && df > 0) {
            st.in = true;
            out.push_back({h.name, true, df, da, fallbackName(h)});
        } else if (st.in && df == 0 && da > 0) {
            st.in = false;
            out.push_back({h.name, false, df, da, fallbackName(h)});
        }
    }
    for (auto it = hosts_.begin(); it != hosts_.end();)
        it = it->second.seen == samples_ ? std::next(it) : hosts_.erase(it);
    return out;
}

std::vector<FallbackLine> fallbackLines(const std::vector<FallbackTransition>& t) {
    std::vector<FallbackLine> out;
    size_t entered = 0, left = 0;
    for (size_t k = 0; k < t.size(); ++k) {
        const auto& x = t[k];
        if (k >= FallbackWatch::kMaxLines) {
            (x.entered ? entered : left) += 1;
            continue;
        }
        if (x.entered)
            out.push_back({true, x.hostname,
                           fmt::format("answered by its fallback \"{}\": no service passed the policy (down, "
                                       "drained or at a site taken out) for {} of {} answers; see gslbctl "
                                       "explain {}",
                                       x.fallback, x.fallbacks, x.fallbacks + x.answers, x.hostname)});
        else
            out.push_back({false, x.hostname,
                           fmt::format("answered by its services again ({} answers, none by the fallback)",
                                       x.answers)});
    }
    if (entered + left > 0)
        out.push_back({entered > 0, "",
                       fmt::format("and {} more hostname(s) entered the fallback, {} more left it (per "
                                   "hostname: gslbd_hostname_fallbacks_total in /metrics)",
                                   entered, left)});
    return out;
}

void logFallbackTransitions(FallbackWatch& watch, const Gslb& g) {
    for (const auto& l : fallbackLines(watch.sample(g))) {
        const std::string subject = l.hostname.empty() ? "fallback" : "hostname " + l.hostname;
        if (l.warn)
            log::warn("{}: {}", subject, l.message);
        else
            log::info("{}: {}", subject, l.message);
        recordEvent(l.warn ? log::Level::Warn : log::Level::Info, "fallback", subject, l.message);
    }
}

}  // namespace gslb::server
