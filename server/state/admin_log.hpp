// Drains and enables that converge across the [cluster] members (doc/ns-set.md,
// "Drains converge"). gslbctl sends a drain to every member, but a member that is down, hung or cut off at
// that moment misses it; without this it would answer with the drained site until an operator noticed. So
// every admin change carries what orders it, each member publishes its changes (GET /v1/admin) and adopts a
// peer's change that orders after its own (server/cluster/admin_sync.hpp polls them).
//
// The rule (last writer wins, Dynamo / Cassandra style, with a hybrid logical clock):
// - A change is (enabled, time_ms, origin): time_ms is the wall clock (Unix ms) of the member that took the
//   request, but never less than 1 + the greatest time that member has seen (its own changes and every
//   change it adopted). So a change made after a member learnt another always orders after it, whatever
//   the clocks say; only changes made on two members without either having seen the other's are ordered by
//   their wall clocks (keep the members on NTP: a member 10 s behind loses a race of 10 s).
// - Order: the greater time_ms; at equal times the greater origin (the member URL, compared as octets); at
//   equal (time, origin), drained over enabled (one member never makes two changes with one time, so this
//   only settles a forged or corrupted entry, in the cautious direction).
// - A member adopts a peer's change only when it orders after the member's own for that site or service
//   (or the member has none): an older remote change never undoes a newer local one.
// - A change made with `?scope=member` (gslbctl --member) is local: published with "local": true, never
//   adopted by a peer, and undone here only by a newer change of the cluster. It is how one member is made
//   to differ on purpose.
// - No entry is the state before any change: enabled, older than every change.
// - A change time more than kMaxAheadMs ahead of this member's clock is refused (a peer whose clock is far
//   off would otherwise win every race for as long as that and drag this member's clock along).
//
// Control thread only.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gslb::server::cluster {

/// One admin change of a site or a service.
struct AdminChange {
    bool enabled = true;
    int64_t timeMs = 0;  // Unix ms (hybrid: see above); 0 = from a file written before changes had times
    std::string origin;  // the member URL that took the request ("" outside a [cluster])
    bool local = false;  // ?scope=member: this member only
};

/// What an admin change is about: a site (address empty) or a service (site, address).
struct AdminKey {
    std::string site, address;
    bool operator<(const AdminKey& o) const { return site != o.site ? site < o.site : address < o.address; }
    bool operator==(const AdminKey& o) const { return site == o.site && address == o.address; }
};

/// A peer's change as read from its GET /v1/admin.
struct RemoteChange {
    AdminKey key;
    AdminChange change;
};

inline constexpr int64_t kMaxAheadMs = 24LL * 3600 * 1000;  // 1 day
/// The largest time_ms read from a peer (2^53, what a JSON number holds exactly; year 287396).
inline constexpr int64_t kMaxTimeMs = int64_t(1) << 53;

/// True when `a` orders after `b` (the rule above). A strict order: never both orderedAfter(a, b) and
/// orderedAfter(b, a); neither only when a and b are the same change.
bool orderedAfter(const AdminChange& a, const AdminChange& b);

/// The merge rule as a pure function: whether a member whose own change for a key is `mine` (nullptr: none)
/// takes `theirs`, a peer's change for that key, when its clock reads `nowMs`. Local changes of a peer are
/// never taken; neither is one more than kMaxAheadMs ahead of `nowMs`.
bool adopts(const AdminChange* mine, const AdminChange& theirs, int64_t nowMs);

/// Parses a peer's GET /v1/admin body: {"changes": [{"site": "east", "address": "192.0.2.10" (absent for a
/// site), "enabled": false, "time_ms": 1764624000123, "origin": "http://192.0.2.53:8053", "local": false}]}.
/// Entries with a missing or mistyped field, an empty site, or a time_ms outside 0..kMaxTimeMs are skipped.
/// Returns "" or why the whole body is unusable (not JSON, no "changes" array). Never throws: the body comes
/// from the network.
std::string parseAdminChanges(std::string_view body, std::vector<RemoteChange>& out);

class AdminLog {
  public:
    /// Records a change taken by this member at wall clock `nowMs` and returns it: time = max(nowMs, 1 +
    /// the greatest time seen).
    const AdminChange& record(const AdminKey& key, bool enabled, int64_t nowMs, const std::string& origin,
                              bool local);
    /// Sets the change of `key` as read back from state_dir (or adopted): no new time, the clock moves up to
    /// it.
    void put(const AdminKey& key, const AdminChange& change);
    const AdminChange* find(const AdminKey& key) const;
    /// Applies adopts() to each of a peer's changes, puts the ones taken and returns them (in key order,
    /// later duplicates of a key in `theirs` compete with the earlier ones like any other change).
    std::vector<RemoteChange> merge(const std::vector<RemoteChange>& theirs, int64_t nowMs);
    /// Forgets the changes whose key `keep` says is gone (a reload removed the site or service).
    template <typename F>
    void retain(F&& keep) {
        for (auto it = entries_.begin(); it != entries_.end();)
            it = keep(it->first) ? std::next(it) : entries_.erase(it);
    }
    const std::map<AdminKey, AdminChange>& entries() const { return entries_; }
    int64_t clockMs() const { return clockMs_; }

  private:
    std::map<AdminKey, AdminChange> entries_;
    int64_t clockMs_ = 0;  // the greatest time seen
};

/// One change as JSON (the GET /v1/admin and admin-state.json shape above), and back (nullopt: skipped).
nlohmann::json changeJson(const AdminKey& key, const AdminChange& c);
std::optional<RemoteChange> changeFromJson(const nlohmann::json& j);

}  // namespace gslb::server::cluster
