#include <arpa/inet.h>
#include <doctest/doctest.h>

#include "tools/agent/sampler.hpp"

using namespace gslb::agent;

namespace {

// A connection whose smoothed RTT is `rttUs` (its kernel minimum half that).
TcpConn conn(const char* remote, uint16_t port, uint32_t rttUs) {
    TcpConn c;
    bool v6 = std::string(remote).find(':') != std::string::npos;
    c.family = v6 ? 6 : 4;
    inet_pton(v6 ? AF_INET6 : AF_INET, remote, c.remote);
    c.localPort = 443;
    c.remotePort = port;
    c.rttUs = rttUs;
    c.minRttUs = rttUs / 2;
    return c;
}

}  // namespace

TEST_CASE("median: the middle value, or the mean of the two middle ones") {
    std::vector<uint32_t> odd{30, 10, 20};
    CHECK(median(odd) == 20);
    std::vector<uint32_t> even{40, 10, 20, 30};
    CHECK(median(even) == 25);
    std::vector<uint32_t> one{7};
    CHECK(median(one) == 7);
    std::vector<uint32_t> none;
    CHECK(median(none) == 0);
}

TEST_CASE("Sampler: per /24 and /56 the median of the connections' least RTT, most active first") {
    Sampler s(24, 56);
    s.observe({conn("198.51.100.7", 1000, 10000), conn("198.51.100.200", 1001, 30000),
               conn("198.51.100.9", 1002, 20000), conn("203.0.113.5", 1003, 5000),
               conn("2001:db8:0:1ff::1", 1004, 42000), conn("2001:db8:0:100::2", 1005, 44000)});
    // The same connection in a later poll, busier: counted once, with its least sample of the interval.
    s.observe({conn("198.51.100.7", 1000, 50000)});
    CHECK(s.connections() == 6);
    auto f = s.take(10);
    REQUIRE(f.size() == 3);
    CHECK(prefixText(f[0].prefix) == "198.51.100.0/24");
    CHECK(f[0].samples == 3);
    CHECK(f[0].rttMs == doctest::Approx(20.0));  // median of 10, 30, 20 ms (of 50, 30, 20 it would be 30)
    CHECK(prefixText(f[1].prefix) == "2001:db8:0:100::/56");
    CHECK(f[1].samples == 2);
    CHECK(f[1].rttMs == doctest::Approx(43.0));
    CHECK(prefixText(f[2].prefix) == "203.0.113.0/24");
    CHECK(f[2].rttMs == doctest::Approx(5.0));
    // A new interval starts empty, and forgets the last one's least samples: a path that grew longer shows
    // in the next report, where the kernel's five-minute minimum would hide it.
    CHECK(s.connections() == 0);
    CHECK(s.take(10).empty());
    s.observe({conn("198.51.100.7", 1000, 50000)});
    f = s.take(10);
    REQUIRE(f.size() == 1);
    CHECK(f[0].rttMs == doctest::Approx(50.0));
}

TEST_CASE("Sampler: the report is bounded; the least active prefixes are dropped") {
    Sampler s(24, 56);
    std::vector<TcpConn> cs;
    for (int net = 0; net < 5; ++net)
        for (int i = 0; i <= net; ++i)
            cs.push_back(conn(("10.0." + std::to_string(net) + "." + std::to_string(i + 1)).c_str(),
                              uint16_t(2000 + i), 1000));
    s.observe(cs);
    auto f = s.take(2);
    REQUIRE(f.size() == 2);
    CHECK(prefixText(f[0].prefix) == "10.0.4.0/24");
    CHECK(f[0].samples == 5);
    CHECK(prefixText(f[1].prefix) == "10.0.3.0/24");
}

TEST_CASE("Sampler: other prefix lengths; a connection without a smoothed RTT reports its minimum") {
    Sampler s(20, 48);
    TcpConn noSrtt = conn("198.51.111.7", 1, 16000);
    noSrtt.rttUs = 0;  // its minimum (8 ms) is what is left
    s.observe({noSrtt, conn("2001:db8:1:ffff::1", 2, 3000)});
    auto f = s.take(10);
    REQUIRE(f.size() == 2);
    CHECK(prefixText(f[0].prefix) == "198.51.96.0/20");
    CHECK(f[0].rttMs == doctest::Approx(8.0));
    CHECK(prefixText(f[1].prefix) == "2001:db8:1::/48");
}

TEST_CASE("rttReportJson: the body gslbd's POST /v1/sites/SITE/rtt reads") {
    Sampler s(24, 56);
    s.observe({conn("198.51.100.7", 1000, 12345)});
    CHECK(rttReportJson(s.take(10)) ==
          R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":12.345,"samples":1}]})");
    CHECK(rttReportJson({}) == R"({"prefixes":[]})");
}
