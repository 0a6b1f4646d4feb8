// A MaxMind DB (GeoIP2 / GeoLite2 City, Country or ASN, or any database in their layout) read with
// libmaxminddb: memory-mapped once at load, looked up read-only from every worker (libmaxminddb's lookups
// are thread-safe and do not allocate).
#pragma once
#include <maxminddb.h>

#include <cstdint>
#include <string>

#include "zones/client.hpp"

namespace gslb::server {

/// What the database says of one address. Strings are ISO codes as the database holds them ("EU", "US",
/// "NY"); empty when absent.
struct GeoResult {
    bool found = false;
    uint8_t scope = 0;         // the database's network length for the address (IPv4 in IPv4 bits)
    char continent[4] = {};    // continent.code
    char country[4] = {};      // country.iso_code
    char subdivision[8] = {};  // subdivisions[0].iso_code
    uint32_t asn = 0;          // autonomous_system_number; 0 when absent
    double latitude = 0, longitude = 0;
    bool hasLocation = false;  // location.latitude / longitude
};

class GeoIp {
  public:
    GeoIp() = default;
    ~GeoIp();
    GeoIp(const GeoIp&) = delete;
    GeoIp& operator=(const GeoIp&) = delete;

    /// Opens `path`. False and `error` ("PATH: why") when it is missing or not a MaxMind DB.
    bool open(const std::string& path, std::string& error);
    /// Looks `client` up (its address with the bits past its prefix zero). noexcept, no allocation.
    GeoResult lookup(const zones::ClientSubnet& client) const noexcept;
    /// "GeoLite2-City, built 2024-01-01, IPv6, 123456 nodes": for logs and explain.
    std::string describe() const;
    const std::string& path() const { return path_; }

  private:
    MMDB_s db_{};
    bool open_ = false;
    std::string path_;
};

}  // namespace gslb::server
