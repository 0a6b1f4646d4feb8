// gslbd's configuration: one TOML file (DESIGN.md "The config file"), read with toml++ against a declarative
// schema (STYLE.md 8): every key has a type, a range and a default; an unknown key or a bad value is an error
// that names the file, the line and the key's full path.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gslb::server {

/// An address and port to listen on ("127.0.0.1:5353", "[::1]:5353", "0.0.0.0:53").
struct ListenAddr {
    std::string text;
    sockaddr_storage addr{};
    socklen_t len = 0;
    bool wildcard = false;  // 0.0.0.0 or ::: replies need the destination address of each query (IP_PKTINFO)
};

/// An address prefix ("127.0.0.1", "10.0.0.0/8", "2001:db8::/32") for access lists.
struct Prefix {
    int family = AF_INET;
    uint8_t bytes[16]{};
    int bits = 0;
    bool matches(const sockaddr* sa) const;
};

struct ServerConf {
    std::vector<ListenAddr> listen;
    int workers = 2;                // UDP/TCP worker threads, each with its own SO_REUSEPORT sockets
    uint16_t udpPayloadMax = 1232;  // octets (RFC 6891 §6.2.5; 1232 is the DNS Flag Day 2020 value)
    int tcpIdleTimeout = 10;        // s
    int tcpMaxConnections = 1024;
    std::vector<Prefix> axfrAllow;  // empty: nobody may transfer
    std::string identity;           // CH TXT id.server; empty: REFUSED
    std::string version;            // CH TXT version.bind; empty: REFUSED
};

struct ControlConf {
    bool enabled = false;   // only when a [control] table is present
    ListenAddr listen;      // default 127.0.0.1:8053
    std::string tokenFile;  // absolute path; required when [control] is present
};

struct ZoneConf {
    std::string name;  // presentation form, absolute ("gslb.example.com.")
    std::string file;  // path, resolved against the config file's directory
};

struct Config {
    std::string path;
    ServerConf server;
    ControlConf control;
    std::vector<ZoneConf> zones;
};

/// Reads and checks `path`. On failure returns false and sets `error` to "file:line: path: message".
bool loadConfig(const std::string& path, Config& out, std::string& error);

/// Parses "host:port" / "[v6]:port" into `out`; false when it is not an address with a port.
bool parseListen(const std::string& text, ListenAddr& out);

}  // namespace gslb::server
