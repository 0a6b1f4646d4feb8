#include "server/daemon/privileges.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gslb::server::service {

bool lookupUser(const std::string& name, UserInfo& out, std::string& error) {
    passwd pw{}, *res = nullptr;
    std::vector<char> buf(16384);
    int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res);
    if (rc != 0 || !res) {
        error = rc != 0 ? fmt::format("[server] user \"{}\": {}", name, strerror(rc))
                        : fmt::format("[server] user \"{}\": no such user", name);
        return false;
    }
    out.name = name;
    out.uid = pw.pw_uid;
    out.gid = pw.pw_gid;
    return true;
}

bool dropPrivileges(const UserInfo& user, std::string& error) {
    if (initgroups(user.name.c_str(), user.gid) != 0) {
        error = fmt::format("user {}: setgroups: {}", user.name, strerror(errno));
        return false;
    }
    if (setgid(user.gid) != 0) {
        error = fmt::format("user {}: setgid({}): {}", user.name, user.gid, strerror(errno));
        return false;
    }
    if (setuid(user.uid) != 0) {
        error = fmt::format("user {}: setuid({}): {}", user.name, user.uid, strerror(errno));
        return false;
    }
    // setuid from root sets the real, effective and saved ids: there is no way back. Make sure of it.
    if (user.uid != 0 && (setuid(0) == 0 || geteuid() == 0)) {
        error = fmt::format("user {}: root could be regained after setuid", user.name);
        return false;
    }
    return true;
}

}  // namespace gslb::server::service
