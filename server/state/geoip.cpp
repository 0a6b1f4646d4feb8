#include "server/state/geoip.hpp"

#include <fmt/format.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <ctime>

namespace gslb::server {

GeoIp::~GeoIp() {
    if (open_) MMDB_close(&db_);
}

bool GeoIp::open(const std::string& path, std::string& error) {
    if (open_) {  // opening again replaces the database; the old mapping and its metadata are released
        MMDB_close(&db_);
        open_ = false;
    }
    int rc = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &db_);
    if (rc != MMDB_SUCCESS) {
        error = fmt::format("{}: {}", path, MMDB_strerror(rc));
        return false;
    }
    open_ = true;
    path_ = path;
    return true;
}

std::string GeoIp::describe() const {
    if (!open_) return "";
    time_t t = time_t(db_.metadata.build_epoch);
    char date[32];
    tm tmv;
    gmtime_r(&t, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    return fmt::format("{}, built {}, IPv{}, {} nodes",
                       db_.metadata.database_type ? db_.metadata.database_type : "?", date,
                       db_.metadata.ip_version, db_.metadata.node_count);
}

namespace {

void copyString(const MMDB_entry_data_s& d, char* out, size_t cap) {
    if (!d.has_data || d.type != MMDB_DATA_TYPE_UTF8_STRING) return;
    size_t n = std::min<size_t>(d.data_size, cap - 1);
    std::memcpy(out, d.utf8_string, n);
    out[n] = 0;
}

}  // namespace

GeoResult GeoIp::lookup(const zones::ClientSubnet& c) const noexcept {
    GeoResult r;
    if (!open_ || c.family == 0) return r;
    sockaddr_storage ss{};
    if (c.family == zones::kFamilyIPv4) {
        auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
        s4->sin_family = AF_INET;
        std::memcpy(&s4->sin_addr, c.addr, 4);
    } else {
        if (db_.metadata.ip_version != 6) return r;  // an IPv4-only database knows nothing of IPv6 clients
        auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
        s6->sin6_family = AF_INET6;
        std::memcpy(&s6->sin6_addr, c.addr, 16);
    }
    int err = 0;
    MMDB_lookup_result_s res = MMDB_lookup_sockaddr(&db_, reinterpret_cast<const sockaddr*>(&ss), &err);
    if (err != MMDB_SUCCESS) return r;
    // An IPv4 address is looked up below ::/96 in an IPv6 tree: the netmask counts those 96 bits.
    int mask = res.netmask;
    if (c.family == zones::kFamilyIPv4 && db_.metadata.ip_version == 6) mask -= 96;
    r.scope = uint8_t(std::clamp(mask, 0, 128));
    if (!res.found_entry) return r;
    r.found = true;
    MMDB_entry_data_s d;
    if (MMDB_get_value(&res.entry, &d, "continent", "code", nullptr) == MMDB_SUCCESS)
        copyString(d, r.continent, sizeof r.continent);
    if (MMDB_get_value(&res.entry, &d, "country", "iso_code", nullptr) == MMDB_SUCCESS)
        copyString(d, r.country, sizeof r.country);
    if (MMDB_get_value(&res.entry, &d, "subdivisions", "0", "iso_code", nullptr) == MMDB_SUCCESS)
        copyString(d, r.subdivision, sizeof r.subdivision);
    if (MMDB_get_value(&res.entry, &d, "autonomous_system_number", nullptr) == MMDB_SUCCESS && d.has_data &&
        d.type == MMDB_DATA_TYPE_UINT32)
        r.asn = d.uint32;
    MMDB_entry_data_s lat, lon;
    if (MMDB_get_value(&res.entry, &lat, "location", "latitude", nullptr) == MMDB_SUCCESS &&
        MMDB_get_value(&res.entry, &lon, "location", "longitude", nullptr) == MMDB_SUCCESS && lat.has_data &&
        lon.has_data && lat.type == MMDB_DATA_TYPE_DOUBLE && lon.type == MMDB_DATA_TYPE_DOUBLE) {
        r.latitude = lat.double_value;
        r.longitude = lon.double_value;
        r.hasLocation = true;
    }
    return r;
}

}  // namespace gslb::server
