#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "tools/agent/sockdiag.hpp"

using namespace gslb::agent;

TEST_CASE("portFilter: accepts exactly the listed ports, as the kernel runs it") {
    const uint16_t ports[] = {80, 443};
    auto prog = portFilter(ports);
    CHECK(prog.size() == 40);  // 20 octets a port: S_GE, S_LE (8 each, with their operand), JMP (4)
    for (uint16_t p : {80, 443}) CHECK(runPortFilter(prog, p));
    for (uint16_t p : {0, 79, 81, 442, 444, 8080, 65535}) CHECK_FALSE(runPortFilter(prog, p));

    const uint16_t one[] = {53};
    auto single = portFilter(one);
    CHECK(runPortFilter(single, 53));
    CHECK_FALSE(runPortFilter(single, 52));
    CHECK_FALSE(runPortFilter(single, 54));

    // 64 ports: the jumps to the end pass 255 octets (a one-octet `yes` could not hold them: the JMP's 16-bit
    // `no` does).
    std::vector<uint16_t> many;
    for (uint16_t p = 1000; p < 1064; ++p) many.push_back(p);
    auto big = portFilter(many);
    CHECK(big.size() == 64 * 20);
    for (uint16_t p : many) CHECK(runPortFilter(big, p));
    CHECK_FALSE(runPortFilter(big, 999));
    CHECK_FALSE(runPortFilter(big, 1064));
}

namespace {

// A dump message as the kernel writes it: nlmsghdr, inet_diag_msg, one INET_DIAG_INFO attribute holding
// `infoLen` octets of tcp_info.
void addMessage(std::vector<uint8_t>& buf, int family, const char* remote, uint16_t sport, uint8_t state,
                uint32_t rttUs, uint32_t minRttUs, size_t infoLen = sizeof(tcp_info)) {
    inet_diag_msg m{};
    m.idiag_family = uint8_t(family);
    m.idiag_state = state;
    m.id.idiag_sport = htons(sport);
    m.id.idiag_dport = htons(40000);
    inet_pton(family, remote, m.id.idiag_dst);
    tcp_info ti{};
    ti.tcpi_rtt = rttUs;
    ti.tcpi_min_rtt = minRttUs;
    rtattr ra{};
    ra.rta_type = INET_DIAG_INFO;
    ra.rta_len = uint16_t(RTA_LENGTH(infoLen));
    nlmsghdr h{};
    h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    h.nlmsg_len = uint32_t(NLMSG_LENGTH(NLMSG_ALIGN(sizeof m) + RTA_ALIGN(ra.rta_len)));
    size_t at = buf.size();
    buf.resize(at + NLMSG_ALIGN(h.nlmsg_len));
    std::memcpy(&buf[at], &h, sizeof h);
    std::memcpy(&buf[at + sizeof h], &m, sizeof m);
    std::memcpy(&buf[at + sizeof h + NLMSG_ALIGN(sizeof m)], &ra, sizeof ra);
    std::memcpy(&buf[at + sizeof h + NLMSG_ALIGN(sizeof m) + RTA_LENGTH(0)], &ti, infoLen);
}

void addDone(std::vector<uint8_t>& buf) {
    nlmsghdr h{};
    h.nlmsg_type = NLMSG_DONE;
    h.nlmsg_len = NLMSG_LENGTH(4);
    size_t at = buf.size();
    buf.resize(at + NLMSG_ALIGN(h.nlmsg_len));
    std::memcpy(&buf[at], &h, sizeof h);
}

}  // namespace

TEST_CASE("parseDump: established connections on watched ports, v4-mapped peers as IPv4") {
    const uint16_t ports[] = {443};
    std::vector<uint8_t> buf;
    addMessage(buf, AF_INET, "198.51.100.7", 443, 1, 12000, 9000);
    addMessage(buf, AF_INET6, "::ffff:203.0.113.9", 443, 1, 30000, 25000);
    addMessage(buf, AF_INET6, "2001:db8::5", 443, 1, 40000, 0);     // no min RTT
    addMessage(buf, AF_INET, "198.51.100.8", 80, 1, 1000, 1000);    // a port not watched
    addMessage(buf, AF_INET, "198.51.100.9", 443, 10, 1000, 1000);  // LISTEN, not ESTABLISHED
    // An old kernel's tcp_info that ends before tcpi_min_rtt.
    addMessage(buf, AF_INET, "192.0.2.1", 443, 1, 7000, 6000, offsetof(tcp_info, tcpi_min_rtt));
    addMessage(buf, AF_INET, "192.0.2.2", 443, 1, 0, 5000);  // no smoothed RTT yet: the minimum
    addDone(buf);
    std::vector<TcpConn> out;
    std::string error;
    REQUIRE(parseDump(buf, ports, out, error) == 1);
    REQUIRE(out.size() == 5);
    CHECK(out[0].family == 4);
    CHECK(out[0].rttUs == 12000);
    CHECK(out[0].minRttUs == 9000);
    CHECK(out[0].sampleUs() == 12000);
    CHECK(out[0].localPort == 443);
    CHECK(out[0].remotePort == 40000);
    CHECK(out[1].family == 4);
    CHECK(std::memcmp(out[1].remote, "\xcb\x00\x71\x09", 4) == 0);  // 203.0.113.9
    CHECK(out[1].sampleUs() == 30000);
    CHECK(out[2].family == 6);
    CHECK(out[2].sampleUs() == 40000);
    CHECK(out[3].minRttUs == 0);
    CHECK(out[3].sampleUs() == 7000);
    CHECK(out[4].sampleUs() == 5000);
}

TEST_CASE("parseDump: a length past the buffer is an error, not a read past it") {
    const uint16_t ports[] = {443};
    std::vector<uint8_t> buf;
    addMessage(buf, AF_INET, "198.51.100.7", 443, 1, 12000, 9000);
    uint32_t len = 100000;
    std::memcpy(buf.data(), &len, sizeof len);
    std::vector<TcpConn> out;
    std::string error;
    CHECK(parseDump(buf, ports, out, error) == -1);
    CHECK(error.find("100000") != std::string::npos);
    CHECK(out.empty());

    // An attribute whose length runs past its message is ignored with the message (no figure).
    std::vector<uint8_t> bad;
    addMessage(bad, AF_INET, "198.51.100.7", 443, 1, 12000, 9000);
    rtattr ra;
    size_t at = sizeof(nlmsghdr) + NLMSG_ALIGN(sizeof(inet_diag_msg));
    std::memcpy(&ra, &bad[at], sizeof ra);
    ra.rta_len = 60000;
    std::memcpy(&bad[at], &ra, sizeof ra);
    CHECK(parseDump(bad, ports, out, error) == 0);
    CHECK(out.empty());
}

TEST_CASE("dumpConnections: the running kernel takes the port filter and reports a loopback connection") {
    int l = socket(AF_INET, SOCK_STREAM, 0), other = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    REQUIRE(bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(l, 4) == 0);
    REQUIRE(getsockname(l, reinterpret_cast<sockaddr*>(&a), &alen) == 0);
    sockaddr_in b = a;
    b.sin_port = 0;
    REQUIRE(bind(other, reinterpret_cast<sockaddr*>(&b), sizeof b) == 0);
    REQUIRE(listen(other, 4) == 0);
    REQUIRE(getsockname(other, reinterpret_cast<sockaddr*>(&b), &alen) == 0);
    int c1 = socket(AF_INET, SOCK_STREAM, 0), c2 = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(c1, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(connect(c2, reinterpret_cast<sockaddr*>(&b), sizeof b) == 0);
    int s1 = accept(l, nullptr, nullptr), s2 = accept(other, nullptr, nullptr);
    REQUIRE(s1 >= 0);
    REQUIRE(s2 >= 0);
    REQUIRE(write(c1, "x", 1) == 1);  // an exchange gives the server side an RTT sample
    char ch;
    REQUIRE(read(s1, &ch, 1) == 1);
    REQUIRE(write(s1, "y", 1) == 1);
    REQUIRE(read(c1, &ch, 1) == 1);

    const uint16_t ports[] = {ntohs(a.sin_port)};
    std::vector<TcpConn> out;
    std::string error;
    bool filtered = false;
    REQUIRE_MESSAGE(dumpConnections(ports, out, error, &filtered), error);
    CHECK(filtered);  // the kernel audited and ran our program: no unfiltered fallback
    REQUIRE(out.size() == 1);
    CHECK(out[0].localPort == ntohs(a.sin_port));
    CHECK(out[0].family == 4);
    CHECK(std::memcmp(out[0].remote, "\x7f\x00\x00\x01", 4) == 0);
    CHECK(out[0].sampleUs() > 0);
    CHECK(out[0].sampleUs() < 1000000);
    for (int fd : {l, other, c1, c2, s1, s2}) close(fd);
}
