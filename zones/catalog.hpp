// A catalog zone (RFC 9432, schema version 2) built from the zones a server serves, so that secondaries
// that consume catalogs (Knot's catalog-role interpret, NSD 4.9's catalog consumer, BIND's catalog-zones,
// PowerDNS 4.7+) add and drop member zones by themselves, with no edit of their configuration.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zones/zone.hpp"

namespace gslb::zones {

struct CatalogMember {
    std::string name;   // presentation form, absolute
    std::string group;  // RFC 9432 §4.4.2 group property; empty: none
};

/// A member's unique ID (RFC 9432 §4.1: a single label, unique within the catalog): 16 lower-case hex digits
/// of the SHA-256 of the member's lower-case wire name. The same name always gets the same ID, across
/// restarts and on every server of an NS set that has the same zones (Knot derives its IDs from a hash of
/// the name the same way), and a member that leaves and comes back is the same member.
std::string catalogMemberId(std::string_view memberWire);

/// The records of catalog `apex` (lower-case wire) with `members`, serial `serial`, into `out` (as if read
/// from a file named `file`): RFC 9432 §4.1's zone with TTL 0 throughout:
///   @ SOA invalid. invalid. SERIAL 3600 600 2147483646 0   (the values of RFC 9432 Appendix A)
///   @ NS invalid.                                           (§4.1: never used for resolution)
///   version TXT "2"                                         (§4.2.1)
///   ID.zones PTR member.                                    (§4.2, one per member, in `members` order)
///   group.ID.zones TXT "group"                              (§4.4.2, when the member has a group)
/// False and `error` when a member's name is not a domain name, or two members are one zone.
bool catalogRecords(std::string_view apex, const std::vector<CatalogMember>& members, uint32_t serial,
                    const std::string& file, SourceSet& out, std::string& error);

}  // namespace gslb::zones
