// Where a client is (doc/design.md "Client-aware answers"): the `[topology]` nets table (longest prefix wins)
// and an optional MaxMind DB, turned into a Location per query: region labels, most specific first, and
// coordinates for `nearest`. Built once per snapshot, read-only on the query path.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "server/state/geoip.hpp"
#include "server/state/nets.hpp"
#include "zones/client.hpp"

namespace gslb::server {

/// One thing a client location can be matched on. Codes are upper-case ASCII packed into `value` (at most 8
/// characters); a nets region is its id; an ASN its number.
struct RegionLabel {
    enum Kind : uint8_t { None = 0, Net, Asn, Subdivision, Country, Continent };
    Kind kind = None;
    uint64_t value = 0;
    bool operator==(const RegionLabel&) const = default;
};

/// A client's location. labels[0..count) in the order a topology map is searched: the nets region, the
/// ASN, the subdivision ("US-NY"), the country ("US"), the continent ("NA").
struct Location {
    RegionLabel labels[5];
    uint8_t count = 0;
    double latitude = std::numeric_limits<double>::quiet_NaN();
    double longitude = std::numeric_limits<double>::quiet_NaN();
    uint8_t scope = 0;      // ECS scope of this lookup: the longest of the nets' and the database's
    int32_t netEntry = -1;  // the nets prefix that matched (NetTable::entries() index), -1 none
    GeoResult geo;          // what the database said (found = false without one)
    bool known() const { return count > 0 || hasCoordinates(); }
    bool hasCoordinates() const { return !std::isnan(latitude); }
};

struct TopologyConf;

class Topology {
  public:
    /// Builds from the config's [topology]. False and `error` ("file:line: [topology] …") on a bad prefix,
    /// an unreadable nets_file or a database that does not open.
    bool build(const TopologyConf& conf, const std::string& configPath, std::string& error);
    bool configured() const { return !nets_.empty() || geoip_ != nullptr; }
    bool hasGeoIp() const { return geoip_ != nullptr; }
    /// Locates `client` (family 0 or a 0-bit prefix: unknown, nothing looked up). noexcept, no allocation.
    void locate(const zones::ClientSubnet& client, Location& out) const noexcept;

    /// Parses a region key of a topology map or a site's `region`: "continent:EU", "country:US",
    /// "subdivision:US-NY", "asn:64500" or "AS64500", or a plain name, which matches a nets region of that
    /// name, a subdivision ("US-NY"), a country or a continent code (all that apply, case-insensitive).
    /// False when it can match nothing (an unknown kind, a code longer than 8 characters).
    bool parseKey(const std::string& text, std::vector<RegionLabel>& out, std::string& error) const;
    /// "nets eu", "country US", "asn 64500": for explain.
    std::string labelText(const RegionLabel& l) const;
    const NetTable& nets() const { return nets_; }
    const GeoIp* geoip() const { return geoip_.get(); }

  private:
    NetTable nets_;
    std::unique_ptr<GeoIp> geoip_;
    std::vector<std::string> regions_;  // nets region names, by id
};

/// Packs an ASCII code (at most 8 characters) upper-case into a label value; 0 when it does not fit.
uint64_t packCode(const char* s, size_t n) noexcept;

/// Great-circle distance in km between two points given in degrees (haversine, mean Earth radius 6371 km).
double greatCircleKm(double lat1, double lon1, double lat2, double lon2) noexcept;

}  // namespace gslb::server
