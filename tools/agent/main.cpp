// gslbd-agent: runs beside a site's load balancer and tells gslbd how far each client network is from this
// site — the round-trip times the kernel already measures on the site's live TCP connections (sock_diag),
// grouped by client prefix — as Brocade ADX sites report RTT to their GSLB controller and F5's big3d agents
// probe for BIG-IP DNS (doc/man/gslbd-agent.8.md). Optionally also the site's load (connections, CPU), what
// `gslbctl report` sends by hand.
// Exit status: 0 stopped by SIGTERM/SIGINT (or --once done, every report taken), 1 cannot run (sock_diag, the
// token) or, with --once, a report not taken (unreached, or refused), 2 usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/agent/sampler.hpp"
#include "tools/agent/sockdiag.hpp"
#include "tools/gslbctl/http.hpp"

using namespace gslb::agent;

namespace {

std::atomic<bool> g_stop{false};
void onSignal(int) {
    g_stop = true;
}

double monotonicS() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Sleeps `s` seconds or until a signal asks the agent to stop.
void pause(double s) {
    if (s <= 0) return;
    timespec ts{time_t(s), long((s - double(time_t(s))) * 1e9)};
    while (!g_stop && nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

// The site's CPU use since the last call, percent of all CPUs (/proc/stat's first line: user nice system idle
// iowait irq softirq steal); NaN on the first call.
class CpuMeter {
  public:
    double sample() {
        std::ifstream f("/proc/stat");
        std::string cpu;
        uint64_t v[8]{};
        f >> cpu;
        for (auto& x : v) f >> x;
        if (!f || cpu != "cpu") return std::numeric_limits<double>::quiet_NaN();
        uint64_t idle = v[3] + v[4], total = 0;
        for (auto x : v) total += x;
        double pct = std::numeric_limits<double>::quiet_NaN();
        if (total_ && total > total_) pct = 100.0 * (1.0 - double(idle - idle_) / double(total - total_));
        idle_ = idle;
        total_ = total;
        return pct;
    }

  private:
    uint64_t idle_ = 0, total_ = 0;
};

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "gslbd-agent: report the round-trip times of this site's live TCP connections, per client prefix, "
        "to gslbd (the `rtt` stage), and optionally the site's load.\n"
        "See gslbd-agent(8). Exit status: 0 stopped, 1 cannot run (or --once: a report not taken), 2 usage."};
    app.set_version_flag("--version", "gslbd-agent 0.1.0");
    std::string site, portsText, toText, tokenFile;
    double interval = 10, poll = 1;
    int v4Bits = 24, v6Bits = 56;
    size_t maxPrefixes = 1000;
    bool load = false, once = false;
    double sessionsMax = 0;
    app.add_option("--site", site, "this site's name, as in gslbd's [site.NAME]")->required();
    app.add_option("--ports", portsText, "the load balancer's service ports to watch, e.g. 80,443")
        ->required();
    app.add_option("--to", toText, "gslbd control API URL(s), comma-separated: every member of the NS set")
        ->required();
    app.add_option("--token-file", tokenFile, "file holding the bearer token gslbd's control API takes")
        ->required();
    app.add_option("--interval", interval, "seconds between reports")
        ->default_val(10)
        ->check(CLI::Range(1.0, 3600.0));
    app.add_option("--poll", poll, "seconds between reads of the connection table (at most --interval)")
        ->default_val(1)
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--prefix-v4", v4Bits, "IPv4 clients are grouped by this prefix length")
        ->default_val(24)
        ->check(CLI::Range(8, 32));
    app.add_option("--prefix-v6", v6Bits, "IPv6 clients are grouped by this prefix length")
        ->default_val(56)
        ->check(CLI::Range(16, 64));
    app.add_option("--max-prefixes", maxPrefixes,
                   "at most this many prefixes a report, the most active first")
        ->default_val(1000)
        ->check(CLI::Range(1, 10000));
    app.add_flag(
        "--load", load,
        "also report the site's load: connections on the ports as sessions_used, CPU from /proc/stat");
    app.add_option("--sessions-max", sessionsMax, "with --load: the site's session capacity (sessions_max)")
        ->check(CLI::Range(0.0, 1e12));
    app.add_flag("--once", once,
                 "one interval, one report, then exit: 0 when every report was taken (checks, scripts)");
    CLI11_PARSE(app, argc, argv);

    std::vector<uint16_t> ports;
    for (const auto& p : splitList(portsText)) {
        char* end = nullptr;
        long v = std::strtol(p.c_str(), &end, 10);
        if (*end || v < 1 || v > 65535) {
            fmt::print(stderr, "gslbd-agent: --ports: \"{}\" is not a port (1..65535)\n", p);
            return 2;
        }
        ports.push_back(uint16_t(v));
    }
    if (ports.empty() || ports.size() > 64) {
        fmt::print(stderr, "gslbd-agent: --ports wants 1 to 64 ports\n");
        return 2;
    }
    const auto urls = splitList(toText);
    if (urls.empty()) {
        fmt::print(stderr, "gslbd-agent: --to names no URL\n");
        return 2;
    }
    poll = std::min(poll, interval);
    std::string token;
    {
        std::ifstream f(tokenFile);
        std::getline(f, token);
        while (!token.empty() && std::isspace(uint8_t(token.back()))) token.pop_back();
        if (!f && token.empty()) {
            fmt::print(stderr, "gslbd-agent: cannot read the token file {}: {}\n", tokenFile,
                       std::strerror(errno));
            return 1;
        }
        if (token.empty()) {
            fmt::print(stderr, "gslbd-agent: the token file {} is empty\n", tokenFile);
            return 1;
        }
    }
    std::vector<TcpConn> conns;
    std::string error;
    if (!dumpConnections(ports, conns, error)) {
        fmt::print(stderr, "gslbd-agent: {}\n", error);
        return 1;
    }
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    fmt::print(stderr, "gslbd-agent: site {} ports {} reporting every {} s to {}\n", site, portsText,
               interval, toText);
    Sampler sampler(v4Bits, v6Bits);
    CpuMeter cpu;
    cpu.sample();
    std::map<std::string, std::string> lastError;  // per URL: logged once per change, not every interval
    double next = monotonicS() + interval;
    bool dumpFailing = false;
    // --once: whether its one round's reports were all taken (the exit status a script checking a set-up
    // reads).
    bool allTaken = true;
    while (!g_stop) {
        conns.clear();
        if (dumpConnections(ports, conns, error)) {
            sampler.observe(conns);
            if (dumpFailing) fmt::print(stderr, "gslbd-agent: sock_diag reads again\n");
            dumpFailing = false;
        } else if (!dumpFailing) {
            fmt::print(stderr, "gslbd-agent: {}\n", error);
            dumpFailing = true;
        }
        if (monotonicS() + 1e-3 >= next) {
            const size_t live = conns.size();
            auto figures = sampler.take(maxPrefixes);
            std::vector<gslb::ctl::HttpCall> calls;
            const std::string base = "/v1/sites/" + gslb::ctl::pathSegment(site);
            for (const auto& url : urls) {
                calls.push_back({url, "POST", base + "/rtt", token, rttReportJson(figures), {}});
                if (load) {
                    nlohmann::json r{{"sessions_used", live}};
                    if (sessionsMax > 0) r["sessions_max"] = sessionsMax;
                    if (double c = cpu.sample(); c == c) r["cpu"] = std::clamp(c, 0.0, 100.0);
                    calls.push_back({url, "POST", base + "/report", token, r.dump(), {}});
                }
            }
            auto results = gslb::ctl::httpRequests(calls, int(std::min(interval, 5.0) * 1000));
            for (size_t i = 0; i < calls.size(); ++i) {
                const auto& r = results[i];
                std::string what = !r.reached ? r.error
                                   : r.status / 100 == 2
                                       ? ""
                                       : fmt::format("HTTP {}: {}", r.status, r.body.substr(0, 300));
                if (!what.empty()) allTaken = false;
                std::string key = calls[i].url + calls[i].path;
                if (once && what.empty())  // a check run says what it sent, not only what failed
                    fmt::print(stderr, "gslbd-agent: {}{}: taken ({} prefix(es), {} connection(s) now)\n",
                               calls[i].url, calls[i].path, figures.size(), live);
                else if (what != lastError[key]) {
                    if (what.empty())
                        fmt::print(stderr, "gslbd-agent: {}{}: reports reach it again\n", calls[i].url,
                                   calls[i].path);
                    else
                        fmt::print(stderr, "gslbd-agent: {}{}: {}\n", calls[i].url, calls[i].path, what);
                    lastError[key] = what;
                }
            }
            if (once) return allTaken ? 0 : 1;
            next += interval;
            if (next < monotonicS()) next = monotonicS() + interval;  // a long stall: no burst of reports
        }
        pause(std::min(poll, next - monotonicS()));
    }
    return 0;
}
