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

// What the command line says (gslbd-agent(8)), with the ports, URLs and token read from it.
struct Options {
    std::string site, portsText, toText, tokenFile;
    double interval = 10, poll = 1;
    int v4Bits = 24, v6Bits = 56;
    size_t maxPrefixes = 1000;
    bool load = false, once = false;
    double sessionsMax = 0;
    std::vector<uint16_t> ports;
    std::vector<std::string> urls;
    std::string token;
};

// The command line into `o`: -1 to go on, else the exit status (0 after --help or --version, 2 usage).
int parseCommandLine(int argc, char** argv, Options& o) {
    CLI::App app{
        "gslbd-agent: report the round-trip times of this site's live TCP connections, per client prefix, "
        "to gslbd (the `rtt` stage), and optionally the site's load.\n"
        "See gslbd-agent(8). Exit status: 0 stopped, 1 cannot run (or --once: a report not taken), 2 usage."};
    app.set_version_flag("--version", "gslbd-agent 0.1.0");
    app.add_option("--site", o.site, "this site's name, as in gslbd's [site.NAME]")->required();
    app.add_option("--ports", o.portsText, "the load balancer's service ports to watch, e.g. 80,443")
        ->required();
    app.add_option("--to", o.toText, "gslbd control API URL(s), comma-separated: every member of the NS set")
        ->required();
    app.add_option("--token-file", o.tokenFile, "file holding the bearer token gslbd's control API takes")
        ->required();
    app.add_option("--interval", o.interval, "seconds between reports")
        ->default_val(10)
        ->check(CLI::Range(1.0, 3600.0));
    app.add_option("--poll", o.poll, "seconds between reads of the connection table (at most --interval)")
        ->default_val(1)
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--prefix-v4", o.v4Bits, "IPv4 clients are grouped by this prefix length")
        ->default_val(24)
        ->check(CLI::Range(8, 32));
    app.add_option("--prefix-v6", o.v6Bits, "IPv6 clients are grouped by this prefix length")
        ->default_val(56)
        ->check(CLI::Range(16, 64));
    app.add_option("--max-prefixes", o.maxPrefixes,
                   "at most this many prefixes a report, the most active first")
        ->default_val(1000)
        ->check(CLI::Range(1, 10000));
    app.add_flag(
        "--load", o.load,
        "also report the site's load: connections on the ports as sessions_used, CPU from /proc/stat");
    app.add_option("--sessions-max", o.sessionsMax, "with --load: the site's session capacity (sessions_max)")
        ->check(CLI::Range(0.0, 1e12));
    app.add_flag("--once", o.once,
                 "one interval, one report, then exit: 0 when every report was taken (checks, scripts)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);    // prints the help, the version or the usage error
        return rc == 0 ? 0 : 2;  // CLI11's own codes (106 a missing option…) are not gslbd-agent(8)'s
    }
    return -1;
}

// --ports and --to into their lists: -1 to go on, else 2 (usage) after saying what is wrong.
int readLists(Options& o) {
    for (const auto& p : splitList(o.portsText)) {
        char* end = nullptr;
        long v = std::strtol(p.c_str(), &end, 10);
        if (*end || v < 1 || v > 65535) {
            fmt::print(stderr, "gslbd-agent: --ports: \"{}\" is not a port (1..65535)\n", p);
            return 2;
        }
        o.ports.push_back(uint16_t(v));
    }
    if (o.ports.empty() || o.ports.size() > 64) {
        fmt::print(stderr, "gslbd-agent: --ports wants 1 to 64 ports\n");
        return 2;
    }
    o.urls = splitList(o.toText);
    if (o.urls.empty()) {
        fmt::print(stderr, "gslbd-agent: --to names no URL\n");
        return 2;
    }
    o.poll = std::min(o.poll, o.interval);
    return -1;
}

// The token file's first line, without trailing white space: -1 to go on, else 1 (cannot run).
int readToken(Options& o) {
    std::ifstream f(o.tokenFile);
    std::getline(f, o.token);
    while (!o.token.empty() && std::isspace(uint8_t(o.token.back()))) o.token.pop_back();
    if (!f && o.token.empty()) {
        fmt::print(stderr, "gslbd-agent: cannot read the token file {}: {}\n", o.tokenFile,
                   std::strerror(errno));
        return 1;
    }
    if (o.token.empty()) {
        fmt::print(stderr, "gslbd-agent: the token file {} is empty\n", o.tokenFile);
        return 1;
    }
    return -1;
}

// One round of reports to every --to URL: the round-trip times, and with --load the site's load (`live`
// connections now, CPU since the last round). Logs a URL's failure once per change (`lastError`, per URL and
// path) and, with --once, what each URL took. Returns whether every report was taken.
bool sendReports(const Options& o, const std::vector<Figure>& figures, size_t live, CpuMeter& cpu,
                 std::map<std::string, std::string>& lastError) {
    std::vector<gslb::ctl::HttpCall> calls;
    const std::string base = "/v1/sites/" + gslb::ctl::pathSegment(o.site);
    for (const auto& url : o.urls) {
        calls.push_back({url, "POST", base + "/rtt", o.token, rttReportJson(figures), {}});
        if (o.load) {
            nlohmann::json r{{"sessions_used", live}};
            if (o.sessionsMax > 0) r["sessions_max"] = o.sessionsMax;
            if (double c = cpu.sample(); c == c) r["cpu"] = std::clamp(c, 0.0, 100.0);
            calls.push_back({url, "POST", base + "/report", o.token, r.dump(), {}});
        }
    }
    bool allTaken = true;
    auto results = gslb::ctl::httpRequests(calls, int(std::min(o.interval, 5.0) * 1000));
    for (size_t i = 0; i < calls.size(); ++i) {
        const auto& r = results[i];
        std::string what = !r.reached ? r.error
                           : r.status / 100 == 2
                               ? ""
                               : fmt::format("HTTP {}: {}", r.status, r.body.substr(0, 300));
        if (!what.empty()) allTaken = false;
        std::string key = calls[i].url + calls[i].path;
        if (o.once && what.empty())  // a check run says what it sent, not only what failed
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
    return allTaken;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (int rc = parseCommandLine(argc, argv, o); rc >= 0) return rc;
    if (int rc = readLists(o); rc >= 0) return rc;
    if (int rc = readToken(o); rc >= 0) return rc;
    std::vector<TcpConn> conns;
    std::string error;
    if (!dumpConnections(o.ports, conns, error)) {
        fmt::print(stderr, "gslbd-agent: {}\n", error);
        return 1;
    }
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    fmt::print(stderr, "gslbd-agent: site {} ports {} reporting every {} s to {}\n", o.site, o.portsText,
               o.interval, o.toText);
    Sampler sampler(o.v4Bits, o.v6Bits);
    CpuMeter cpu;
    cpu.sample();
    std::map<std::string, std::string> lastError;  // per URL: logged once per change, not every interval
    double next = monotonicS() + o.interval;
    bool dumpFailing = false;
    while (!g_stop) {
        conns.clear();
        if (dumpConnections(o.ports, conns, error)) {
            sampler.observe(conns);
            if (dumpFailing) fmt::print(stderr, "gslbd-agent: sock_diag reads again\n");
            dumpFailing = false;
        } else if (!dumpFailing) {
            fmt::print(stderr, "gslbd-agent: {}\n", error);
            dumpFailing = true;
        }
        if (monotonicS() + 1e-3 >= next) {
            const size_t live = conns.size();
            const bool allTaken = sendReports(o, sampler.take(o.maxPrefixes), live, cpu, lastError);
            // --once: its one round's reports all taken or not is the exit status a script checking a set-up
            // reads.
            if (o.once) return allTaken ? 0 : 1;
            next += o.interval;
            if (next < monotonicS()) next = monotonicS() + o.interval;  // a long stall: no burst of reports
        }
        pause(std::min(o.poll, next - monotonicS()));
    }
    return 0;
}
