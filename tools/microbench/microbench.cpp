// gslbd-microbench: the cost of one GSLB decision and of one in-process answer, in nanoseconds.
//
//   gslbd-microbench [--quick] [--json] [--dir DIR]
//
// Part 1 (select): metrics::select over 2, 16 and 64 synthetic candidates (all up, varied metrics) for the
// default policy and a few others. Each iteration copies the candidate array (select scrambles it, as the
// server refills it per query) and runs the pipeline; the copy alone is timed too ("copy" row).
// Part 2 (answer): zones::answer() with a Selector hook on a snapshot built from a generated config and zone
// (written to --dir, default a fresh directory under $TMPDIR): a static hit, an NXDOMAIN, and A queries for
// GSLB hostnames with 2, 16 and 64 services under the default policy — the whole query path minus sockets.
// Part 3 (rrl): RateLimiter::account() for one UDP response at a rate no bucket reaches, the cost RRL adds to
// every answer: one name again and again, and 10,000 names in turn (a bucket each, as the bench's static mix
// touches), in a table of the default size; and the control thread's sweep of that table.
// Part 4 (client): the client-aware lookups of a query: the topology nets table and the learned-RTT table
// (server/state/rtt_table.hpp), each over 100,000 client /24s.
// Each case runs for a fixed time budget (0.25 s, 0.05 s with --quick) after a warm-up, on steady_clock.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "metrics/candidate.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/policy.hpp"
#include "metrics/rng.hpp"
#include "metrics/select.hpp"
#include "server/responder/rrl.hpp"
#include "server/state/nets.hpp"
#include "server/state/rtt_table.hpp"
#include "server/state/gslb.hpp"
#include "server/state/snapshot.hpp"
#include "zones/answer.hpp"
#include "zones/dnssec_keys.hpp"

using namespace gslb;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::uint64_t g_sink = 0;  // keeps results observable so nothing is optimised away

// Runs `body` in batches until `budget` seconds have passed; returns ns per call.
template <class F>
double timeIt(double budget, F&& body, std::uint64_t* itersOut = nullptr) {
    for (int i = 0; i < 1000; ++i) body();  // warm-up
    std::uint64_t iters = 0;
    std::uint64_t batch = 1024;
    const auto start = Clock::now();
    double elapsed = 0;
    for (;;) {
        for (std::uint64_t i = 0; i < batch; ++i) body();
        iters += batch;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (elapsed >= budget) break;
        if (batch < (1u << 20)) batch *= 2;
    }
    if (itersOut) *itersOut = iters;
    return elapsed * 1e9 / double(iters);
}

std::vector<metrics::Candidate> makeCandidates(std::size_t n) {
    metrics::Rng r(42 + n);
    std::vector<metrics::Candidate> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        auto& c = v[i];
        c.index = std::uint16_t(i);
        c.health = metrics::Health::Up;
        c.preference = 128;
        c.connections = double(100 + r.uniform(900));
        c.cpu = double(10 + r.uniform(60));
        c.sessionsMax = 1000000;
        c.sessionsUsed = double(100000 + r.uniform(700000));
        c.l4Ms = 1.0 + double(r.uniform(1000)) / 1000.0;
        c.l7Ms = 5.0 + double(r.uniform(1000)) / 200.0;
        c.weight = double(1 + r.uniform(5));
        c.loadFactor = double(10 + r.uniform(80));
    }
    return v;
}

struct PolicyCase {
    const char* label;
    std::vector<std::string> stages;  // empty: Policy::defaultPolicy()
};

std::string jsonEscape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}

// A DNS query in wire form (RD clear); edns: an OPT record (1232 octets), with the DO bit when `dnssecOk`.
std::vector<std::uint8_t> makeQuery(const std::string& name, std::uint16_t qtype, bool edns = false,
                                    bool dnssecOk = false) {
    std::vector<std::uint8_t> q = {0x12, 0x34, 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    std::size_t pos = 0;
    while (pos < name.size()) {
        std::size_t dot = name.find('.', pos);
        if (dot == std::string::npos) dot = name.size();
        q.push_back(std::uint8_t(dot - pos));
        for (std::size_t i = pos; i < dot; ++i) q.push_back(std::uint8_t(name[i]));
        pos = dot + 1;
    }
    q.push_back(0);
    q.push_back(std::uint8_t(qtype >> 8));
    q.push_back(std::uint8_t(qtype));
    q.push_back(0);
    q.push_back(1);
    if (edns) {
        q[11] = 1;  // ARCOUNT
        const std::uint8_t opt[] = {0, 0, 41, 0x04, 0xd0, 0, 0, std::uint8_t(dnssecOk ? 0x80 : 0), 0, 0, 0};
        q.insert(q.end(), opt, opt + sizeof opt);
    }
    return q;
}

void writeZone(const std::string& dir, const std::string& origin);

// Writes mb.test.zone and gslbd.toml into `dir`: hostnames g2, g16, g64 over 8 sites, 1,000 static names;
// the same again as ms.test., signed (DNSSEC) with a CSK written into dir/keys.
std::string writeConfig(const std::string& dir) {
    writeZone(dir, "mb.test.");
    writeZone(dir, "ms.test.");
    std::filesystem::create_directories(dir + "/keys");
    gslb::zones::DnssecKey key;
    std::string error;
    if (!gslb::zones::generateKey("ms.test.", 13, 257, 0, key, error) ||
        !gslb::zones::writeKeyFiles(key, dir + "/keys", error))
        std::fprintf(stderr, "microbench: no key for ms.test.: %s\n", error.c_str());
    std::ofstream t(dir + "/gslbd.toml");
    t << "[server]\nlisten = [\"127.0.0.1:10053\"]\nworkers = 1\n\n[[zone]]\nname = \"mb.test.\"\n"
         "file = \"mb.test.zone\"\n\n[[zone]]\nname = \"ms.test.\"\nfile = \"ms.test.zone\"\ndnssec = true\n"
         "key_dir = \"keys\"\n\n";
    for (int s = 0; s < 8; ++s) t << "[site.s" << s << "]\n";
    for (const char* zone : {"mb.test.", "ms.test."})
        for (int n : {2, 16, 64}) {
            t << "\n[hostname.\"g" << n << "." << zone << "\"]\n";
            for (int i = 0; i < n; ++i)
                t << "[[hostname.\"g" << n << "." << zone << "\".service]]\naddress = \"192.0." << n << '.'
                  << (i + 1) << "\"\nsite = \"s" << i % 8 << "\"\nweight = " << 1 + i % 3 << "\n";
        }
    t.close();
    return dir + "/gslbd.toml";
}

// <origin>zone in `dir`: 1,000 static names h0..h999 and the GSLB candidates of g2, g16, g64.
void writeZone(const std::string& dir, const std::string& origin) {
    std::ofstream z(dir + "/" + origin + "zone");
    z << "$ORIGIN " << origin
      << "\n$TTL 3600\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\n@ NS ns2\n"
         "ns1 A 127.0.0.1\nns2 A 127.0.0.2\n";
    for (int i = 0; i < 1000; ++i)
        z << "h" << i << " A 10." << (i >> 16) % 256 << '.' << (i >> 8) % 256 << '.' << i % 256 << "\n";
    const int sizes[] = {2, 16, 64};
    for (int n : sizes)
        for (int i = 0; i < n; ++i) z << "g" << n << " 30 A 192.0." << n << '.' << (i + 1) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, json = false;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--dir" && i + 1 < argc) {
            dir = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--quick] [--json] [--dir DIR]\n", argv[0]);
            return 2;
        }
    }
    const double budget = quick ? 0.05 : 0.25;

    std::vector<PolicyCase> policies = {
        {"default", {}},
        {"health,least-connections,random", {"health", "least-connections", "random"}},
        {"health,weighted-random", {"health", "weighted-random"}},
        {"health,round-robin", {"health", "round-robin"}},
        {"health,weighted-round-robin", {"health", "weighted-round-robin"}},
        {"health,least-selected", {"health", "least-selected"}},
        {"health,best-server", {"health", "best-server"}},
        {"health,cpu,preference,load-factor", {"health", "cpu", "preference", "load-factor"}},
    };
    struct Row {
        std::string part, label;
        std::size_t n;
        double ns;
        std::uint64_t iters;
    };
    std::vector<Row> rows;

    // ---- Part 1: metrics::select ----
    for (std::size_t n : {std::size_t(2), std::size_t(16), std::size_t(64)}) {
        const auto tmpl = makeCandidates(n);
        std::vector<metrics::Candidate> work(n);
        std::uint64_t it = 0;
        double ns = timeIt(
            budget,
            [&] {
                std::memcpy(work.data(), tmpl.data(), n * sizeof(metrics::Candidate));
                g_sink = g_sink + work[n - 1].index;
            },
            &it);
        rows.push_back({"select", "copy candidates only", n, ns, it});
        for (const auto& pc : policies) {
            metrics::Params params;
            metrics::Policy pol = metrics::Policy::defaultPolicy();
            std::string why;
            if (!pc.stages.empty() && !metrics::Policy::compile(pc.stages, params, pol, why)) {
                std::fprintf(stderr, "policy %s: %s\n", pc.label, why.c_str());
                return 1;
            }
            metrics::ChooserState state(n);
            metrics::Rng rng(7);
            std::uint16_t out[metrics::kMaxServices];
            ns = timeIt(
                budget,
                [&] {
                    std::memcpy(work.data(), tmpl.data(), n * sizeof(metrics::Candidate));
                    auto r = metrics::select(pol, {work.data(), n}, state, rng, {out, 1});
                    g_sink = g_sink + out[0] + r.count;
                },
                &it);
            rows.push_back({"select", pc.label, n, ns, it});
        }
    }

    // ---- Part 2: zones::answer with the GSLB hook ----
    bool made = false;
    if (dir.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string tpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/gslbd-microbench.XXXXXX";
        std::vector<char> buf(tpl.begin(), tpl.end());
        buf.push_back('\0');
        if (!mkdtemp(buf.data())) {
            std::perror("mkdtemp");
            return 1;
        }
        dir = buf.data();
        made = true;
    } else {
        std::filesystem::create_directories(dir);
    }
    std::string error;
    auto snap = server::buildSnapshot(writeConfig(dir), nullptr, error);
    if (made) std::filesystem::remove_all(dir);
    if (!snap) {
        std::fprintf(stderr, "microbench: cannot build the snapshot: %s\n", error.c_str());
        return 1;
    }
    server::Selector sel(0, 1234);
    sel.rebind(&snap->gslb);
    std::vector<std::uint8_t> out(65535);
    struct QCase {
        const char* label;
        std::string name;
        std::uint16_t type;
        std::size_t n;
        bool edns = false, dnssecOk = false;
    };
    const QCase qcases[] = {
        {"static A hit", "h777.mb.test", 1, 0},
        {"NXDOMAIN", "nx777.mb.test", 1, 0},
        {"NODATA (AAAA of an A name)", "h777.mb.test", 28, 0},
        {"GSLB A, default policy", "g2.mb.test", 1, 2},
        {"GSLB A, default policy", "g16.mb.test", 1, 16},
        {"GSLB A, default policy", "g64.mb.test", 1, 64},
        // The DNSSEC work: the signed zone's answers with DO (RRSIGs, NSEC proofs; GSLB: the online signature
        // from the cache) beside the same unsigned answers to an EDNS query (an OPT record in both: like for
        // like).
        {"static A hit, EDNS", "h777.mb.test", 1, 0, true},
        {"static A hit, signed, DO", "h777.ms.test", 1, 0, true, true},
        {"NXDOMAIN, EDNS", "nx777.mb.test", 1, 0, true},
        {"NXDOMAIN, signed, DO", "nx777.ms.test", 1, 0, true, true},
        {"GSLB A, EDNS", "g2.mb.test", 1, 2, true},
        {"GSLB A, signed, DO", "g2.ms.test", 1, 2, true, true},
        {"GSLB A, signed, no DO", "g2.ms.test", 1, 2, true, false},
        {"GSLB A, EDNS", "g16.mb.test", 1, 16, true},
        {"GSLB A, signed, DO", "g16.ms.test", 1, 16, true, true},
    };
    for (const auto& qc : qcases) {
        auto q = makeQuery(qc.name, qc.type, qc.edns, qc.dnssecOk);
        auto r = zones::answer(snap->db, snap->answer, q, false, out, &sel);
        if (r.action != zones::Action::Send || r.len < 12) {
            std::fprintf(stderr, "microbench: %s gave no answer\n", qc.name.c_str());
            return 1;
        }
        std::uint64_t it = 0;
        double ns = timeIt(
            budget,
            [&] {
                auto rr = zones::answer(snap->db, snap->answer, q, false, out, &sel);
                g_sink = g_sink + rr.len + out[rr.len - 1];
            },
            &it);
        rows.push_back({"answer", qc.label, qc.n, ns, it});
    }

    // ---- Part 3: response rate limiting's accounting ----
    {
        server::RrlConf conf;
        conf.enabled = true;
        conf.responsesPerSecond = 1000000;
        server::RateLimiter rrl(size_t(conf.tableSize), 99);
        sockaddr_in client{};
        client.sin_family = AF_INET;
        inet_pton(AF_INET, "198.51.100.7", &client.sin_addr);
        std::vector<std::string> names;
        for (int i = 0; i < 10000; ++i) {
            std::string label = "h" + std::to_string(i);
            names.push_back(std::string(1, char(label.size())) + label + "\2mb\4test");
            names.back().push_back('\0');
        }
        for (std::size_t n : {std::size_t(1), names.size()}) {
            std::size_t i = 0;
            std::uint32_t slip = 0;
            std::uint64_t it = 0, calls = 0, now = 0;
            double ns = timeIt(
                budget,
                [&] {
                    const std::string& nm = names[i];
                    i = i + 1 == n ? 0 : i + 1;
                    zones::AnswerResult res;
                    res.kind = zones::ResponseKind::Answer;
                    res.qtype = 1;
                    res.kindName = reinterpret_cast<const std::uint8_t*>(nm.data());
                    res.kindNameLen = std::uint8_t(nm.size());
                    if ((calls++ & 63) == 0) {  // the worker reads the clock once per batch of 64
                        timespec t;
                        clock_gettime(CLOCK_MONOTONIC, &t);
                        now = std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);
                    }
                    auto v = rrl.account(conf, reinterpret_cast<const sockaddr*>(&client), res, now, slip);
                    g_sink = g_sink + std::uint64_t(v);
                },
                &it);
            rows.push_back({"rrl", n == 1 ? "account, one name" : "account, 10000 names in turn", 0, ns, it});
        }
        // The control thread's once-a-second walk over the whole table (log lines, the limited gauge).
        std::uint64_t it = 0;
        double ns = timeIt(
            budget / 4, [&] { g_sink = g_sink + rrl.sweep(conf, 1, [](const std::string&) {}); }, &it);
        rows.push_back({"rrl", "sweep of the table, once a second", 0, ns, it});
    }

    // ---- Part 4: where a client is: a topology nets lookup and a learned-RTT lookup ----
    // The two client-aware lookups a query may make, each over 100,000 client /24s (the nets table as a
    // [topology] nets_file holds them; the RTT table as agents filled it, three sites a prefix), queried by
    // 4,096 clients in turn, every one of them in the table.
    {
        metrics::Rng r(7);
        std::vector<zones::ClientSubnet> clients(4096);
        std::vector<server::NetTable::Entry> nets;
        server::RttTable rtt(131072, 3, 24, 56);
        for (std::uint32_t i = 0; i < 100000; ++i) {
            const std::uint32_t net = std::uint32_t(0x0A000000u + (i << 8));  // 10.0.0.0/24, 10.0.1.0/24, …
            server::NetTable::Entry e;
            e.family = zones::kFamilyIPv4;
            e.bits = 24;
            for (int k = 0; k < 4; ++k) e.addr[k] = std::uint8_t(net >> (24 - 8 * k));
            e.value = i % 7;
            e.text = std::to_string(i);
            zones::ClientSubnet p;
            p.family = zones::kFamilyIPv4;
            p.bits = 24;
            std::memcpy(p.addr, e.addr, 4);
            for (std::uint32_t site = 0; site < 3; ++site)
                rtt.update(rtt.prefixKey(p), site, float(10 + r.uniform(90)), 5, 1);
            nets.push_back(std::move(e));
        }
        server::NetTable table;
        std::string err;
        if (!table.build(std::move(nets), err)) {
            std::fprintf(stderr, "microbench: nets: %s\n", err.c_str());
            return 1;
        }
        for (auto& c : clients) {
            const std::uint32_t host =
                std::uint32_t(0x0A000000u + (std::uint32_t(r.uniform(100000)) << 8) + 7);
            c.family = zones::kFamilyIPv4;
            c.bits = 32;
            for (int k = 0; k < 4; ++k) c.addr[k] = std::uint8_t(host >> (24 - 8 * k));
        }
        std::size_t i = 0;
        std::uint64_t it = 0;
        double ns = timeIt(
            budget,
            [&] {
                auto m = table.lookup(clients[i]);
                i = (i + 1) & 4095;
                g_sink = g_sink + std::uint64_t(m.entry);
            },
            &it);
        rows.push_back({"client", "topology nets lookup, 100k prefixes", 0, ns, it});
        const std::uint32_t sites[] = {0, 1, 2};
        server::RttTable::Figure f[3];
        ns = timeIt(
            budget,
            [&] {
                bool found = rtt.lookup(rtt.key(clients[i]), sites, f);
                i = (i + 1) & 4095;
                g_sink = g_sink + std::uint64_t(found) + f[2].samples;
            },
            &it);
        rows.push_back({"client", "rtt lookup, 100k prefixes x 3 sites", 3, ns, it});
    }

    if (json) {
        std::printf("{\"rows\": [");
        for (std::size_t i = 0; i < rows.size(); ++i)
            std::printf(
                "%s\n  {\"part\": \"%s\", \"case\": \"%s\", \"services\": %zu, \"ns\": %.1f, \"iterations\": "
                "%llu}",
                i ? "," : "", rows[i].part.c_str(), jsonEscape(rows[i].label).c_str(), rows[i].n, rows[i].ns,
                (unsigned long long)rows[i].iters);
        std::printf("\n], \"sink\": %llu}\n", (unsigned long long)(g_sink & 1));
    } else {
        std::printf("%-8s %-36s %8s %12s %12s\n", "part", "case", "services", "ns/op", "iterations");
        for (const auto& r : rows)
            std::printf("%-8s %-36s %8s %12.1f %12llu\n", r.part.c_str(), r.label.c_str(),
                        r.n ? std::to_string(r.n).c_str() : "-", r.ns, (unsigned long long)r.iters);
    }
    return 0;
}
