#include "server/state/admin_state.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "zones/read_file.hpp"

namespace gslb::server::service {
namespace {

std::string pathIn(const std::string& dir, const char* name) {
    return dir + "/" + name;
}

bool writeAll(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = write(fd, s.data() + off, s.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        off += size_t(n);
    }
    return true;
}

}  // namespace

bool saveAdminState(const metrics::StateTable& table, const std::string& dir, std::string& error,
                    const cluster::AdminLog* log) {
    nlohmann::json sites = nlohmann::json::array(), services = nlohmann::json::array();
    for (uint32_t i = 0; i < table.siteCount(); ++i)
        if (!table.siteEnabled(i)) sites.push_back(table.siteName(i));
    for (uint32_t i = 0; i < table.serviceCount(); ++i)
        if (!table.serviceEnabled(i)) {
            const auto& k = table.serviceKey(i);
            services.push_back({{"site", k.site}, {"address", k.address}});
        }
    nlohmann::json j{{"version", 1}, {"drained_sites", sites}, {"drained_services", services}};
    if (log) {
        nlohmann::json changes = nlohmann::json::array();
        for (const auto& [key, c] : log->entries())
            if (key.address.empty() ? table.findSite(key.site).has_value()
                                    : table.findService(key.site, key.address).has_value())
                changes.push_back(cluster::changeJson(key, c));
        j["changes"] = std::move(changes);
    }
    return writeStateFile(dir, kAdminStateFile, j.dump(1) + "\n", error);
}

bool writeStateFile(const std::string& dir, const char* name, const std::string& text, std::string& error) {
    std::string final = pathIn(dir, name);
    std::string tmp = final + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) {
        error = fmt::format("{}: {}", tmp, strerror(errno));
        return false;
    }
    // fsync before rename: otherwise a crash may leave the new name pointing at an empty file.
    if (!writeAll(fd, text) || fsync(fd) != 0) {
        error = fmt::format("{}: {}", tmp, strerror(errno));
        close(fd);
        unlink(tmp.c_str());
        return false;
    }
    close(fd);
    if (rename(tmp.c_str(), final.c_str()) != 0) {
        error = fmt::format("{}: rename: {}", final, strerror(errno));
        unlink(tmp.c_str());
        return false;
    }
    // The rename itself is durable only once the directory is synced.
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return true;
}

bool loadStateFile(const std::string& dir, const char* name, const char* what, const char* hint,
                   const std::function<void(const nlohmann::json&)>& apply, std::string& error) {
    std::string file = pathIn(dir, name), text;
    if (!zones::readFile(file, text, error)) return errno == ENOENT;
    try {
        nlohmann::json j = nlohmann::json::parse(text);
        if (!j.is_object() || j.value("version", 0) != 1)
            throw std::runtime_error(std::string("not a version 1 ") + what);
        apply(j);
    } catch (const std::exception& e) {
        error = fmt::format("{}: {}{}", file, e.what(), hint);
        return false;
    }
    return true;
}

bool loadAdminState(metrics::StateTable& table, const std::string& dir, AdminStateLoad& out,
                    std::string& error, cluster::AdminLog* log) {
    out = AdminStateLoad{};
    return loadStateFile(
        dir, kAdminStateFile, "admin state", "",
        [&](const nlohmann::json& j) {
            auto drop = [&](const cluster::AdminKey& k) {
                out.dropped.push_back(
                    k.address.empty()
                        ? fmt::format("site {} (no longer configured)", k.site)
                        : fmt::format("service {} ({}) (no longer configured)", k.address, k.site));
            };
            // One entry: a drain (or, from "changes", an enable) with who took it.
            auto apply = [&](const cluster::AdminKey& k, const cluster::AdminChange& c) {
                auto site = table.findSite(k.site);
                auto slot = k.address.empty() ? site : table.findService(k.site, k.address);
                if (!slot) {
                    if (!c.enabled) drop(k);
                    return;
                }
                if (k.address.empty())
                    table.setSiteEnabled(*slot, c.enabled);
                else
                    table.setServiceEnabled(*slot, c.enabled);
                if (!c.enabled) ++out.applied;
                if (log) log->put(k, c);
            };
            if (auto changes = j.find("changes"); changes != j.end()) {
                for (const auto& c : changes->get_ref<const nlohmann::json::array_t&>()) {
                    auto r = cluster::changeFromJson(c);
                    if (!r) throw std::runtime_error("a change without site, enabled, time_ms or origin");
                    apply(r->key, r->change);
                }
                return;
            }
            // A file from before changes were recorded: each drain was this member's own, so it stays local
            // (never written to etcd).
            cluster::AdminChange drained{false, 0, "", true};
            for (const auto& s : j.at("drained_sites")) apply({s.get<std::string>(), ""}, drained);
            for (const auto& s : j.at("drained_services"))
                apply({s.at("site").get<std::string>(), s.at("address").get<std::string>()}, drained);
        },
        error);
}

bool prepareStateDir(const std::string& dir, int uid, int gid, std::string& error) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) {
        if (errno != ENOENT || mkdir(dir.c_str(), 0750) != 0) {
            error = fmt::format("[server] state_dir {}: {}", dir, strerror(errno));
            return false;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        error = fmt::format("[server] state_dir {}: not a directory", dir);
        return false;
    }
    if (uid >= 0 && chown(dir.c_str(), uid_t(uid), gid_t(gid)) != 0) {
        error = fmt::format("[server] state_dir {}: chown: {}", dir, strerror(errno));
        return false;
    }
    return true;
}

}  // namespace gslb::server::service
