// Dropping root after the listeners are bound ([server] user): a DNS server reads untrusted packets
// all day, so it should do so without the right to change the machine. NSD and Knot do the same (bind as
// root, then setgroups/setgid/setuid to their own user).
#pragma once
#include <sys/types.h>

#include <string>

namespace gslb::server::service {

struct UserInfo {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;  // the user's primary group (from the passwd entry)
};

/// Looks `name` up in the passwd database. False and `error` ("[server] user "x": no such user") when absent.
bool lookupUser(const std::string& name, UserInfo& out, std::string& error);

/// Becomes `user`: supplementary groups from the group database (initgroups), then setgid, then setuid, in
/// that order (after setuid the group calls would be refused). Checks afterwards that root cannot be taken
/// back. Must run before any thread that reads network input starts; glibc applies the ids to every thread
/// anyway. False and `error` when a step fails (the caller must not go on serving as root).
bool dropPrivileges(const UserInfo& user, std::string& error);

}  // namespace gslb::server::service
