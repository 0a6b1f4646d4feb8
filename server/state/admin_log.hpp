// The last drain or enable of each site and service, with who took it and when: what state_dir's
// admin-state.json keeps beside the drained lists (server/state/admin_state.hpp), so a restart knows which
// drains were this member's alone (`?scope=member`) and which came from the NS set.
//
// Nothing here orders changes between members: with [cluster] etcd, etcd's revision is the order (the watch
// applies the changes in it on every member, server/cluster/etcd_sync.hpp); without etcd the members share
// nothing and each takes its own changes in the order they come. A change is recorded with the wall clock of
// the member that took it, for the operator (GET /v1/status, the status page), never to decide anything.
//
// Control thread only.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace gslb::server::cluster {

/// One admin change of a site or a service.
struct AdminChange {
    bool enabled = true;
    int64_t timeMs = 0;  // Unix ms when it was taken; 0 = from a file written before changes had times
    std::string origin;  // the member URL that took the request ("" outside a [cluster])
    bool local = false;  // ?scope=member: this member only (never written to etcd)
};

/// What an admin change is about: a site (address empty) or a service (site, address).
struct AdminKey {
    std::string site, address;
    bool operator<(const AdminKey& o) const { return site != o.site ? site < o.site : address < o.address; }
    bool operator==(const AdminKey& o) const { return site == o.site && address == o.address; }
};

/// A change as read back from admin-state.json.
struct RemoteChange {
    AdminKey key;
    AdminChange change;
};

/// The largest time_ms read back (2^53, what a JSON number holds exactly; year 287396).
inline constexpr int64_t kMaxTimeMs = int64_t(1) << 53;

class AdminLog {
  public:
    /// Records a change taken at wall clock `nowMs` (Unix ms) and returns it; it replaces the key's last one.
    const AdminChange& record(const AdminKey& key, bool enabled, int64_t nowMs, const std::string& origin,
                              bool local);
    /// Sets the change of `key` as read back from state_dir.
    void put(const AdminKey& key, const AdminChange& change) { entries_[key] = change; }
    const AdminChange* find(const AdminKey& key) const;
    /// Forgets the changes whose key `keep` says is gone (a reload removed the site or service).
    template <typename F>
    void retain(F&& keep) {
        for (auto it = entries_.begin(); it != entries_.end();)
            it = keep(it->first) ? std::next(it) : entries_.erase(it);
    }
    const std::map<AdminKey, AdminChange>& entries() const { return entries_; }

  private:
    std::map<AdminKey, AdminChange> entries_;
};

/// One change as JSON, the admin-state.json shape: {"site": "east", "address": "192.0.2.10" (absent for a
/// site), "enabled": false, "time_ms": 1764624000123, "origin": "http://192.0.2.53:8053", "local": false};
/// and back: nullopt for a missing or mistyped field, an empty site, or a time_ms outside 0..kMaxTimeMs.
/// Never throws.
nlohmann::json changeJson(const AdminKey& key, const AdminChange& c);
std::optional<RemoteChange> changeFromJson(const nlohmann::json& j);

}  // namespace gslb::server::cluster
