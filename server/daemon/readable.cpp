#include "server/daemon/readable.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gslb::server::service {

namespace {

bool endsWith(const std::string& s, const char* tail) {
    size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

}  // namespace

std::vector<ReadPath> pathsReadAtReload(const Config& cfg) {
    std::vector<ReadPath> out;
    auto add = [&](std::string what, const std::string& path, bool dir = false) {
        if (!path.empty()) out.push_back({std::move(what), path, dir});
    };
    add("the config file", cfg.path);
    for (const auto& z : cfg.zones) {
        add(fmt::format("zone {} file", z.name), z.file);
        if (!z.dnssec) continue;
        add(fmt::format("zone {} key_dir", z.name), z.keyDir, true);
        // The key files gslbctl dnssec keygen (or BIND's dnssec-keygen) wrote: .private at 0600 of whoever
        // made them.
        std::vector<std::string> names;
        if (DIR* d = opendir(z.keyDir.c_str())) {
            while (dirent* e = readdir(d)) {
                std::string n = e->d_name;
                if (endsWith(n, ".key") || endsWith(n, ".private")) names.push_back(n);
            }
            closedir(d);
        }
        std::sort(names.begin(), names.end());
        for (const auto& n : names) add(fmt::format("zone {} key file", z.name), z.keyDir + "/" + n);
    }
    if (cfg.control.enabled) add("[control] token_file", cfg.control.tokenFile);
    add("[server] cookie_secret_file", cfg.server.cookieSecretFile);
    // Read again at a reload that finds them changed (server/state/snapshot.cpp), after privileges were
    // dropped.
    add("[server] tls_certificate", cfg.server.tlsCertificate);
    add("[server] tls_key", cfg.server.tlsKey);
    add("[server] tls_client_ca", cfg.server.tlsClientCa);
    for (const auto& [what, path] : cfg.keySecretFiles) add(what, path);
    add("[topology] geoip", cfg.topology.geoip);
    add("[topology] nets_file", cfg.topology.netsFile);
    for (const auto& [name, c] : cfg.checks) add(fmt::format("[check.{}] ca_file", name), c.caFile);
    return out;
}

std::vector<Unreadable> unreadable(const std::vector<ReadPath>& paths) {
    std::vector<Unreadable> out;
    for (const auto& p : paths) {
        if (access(p.path.c_str(), p.dir ? R_OK | X_OK : R_OK) == 0) continue;
        int e = errno;
        if (e == ENOENT) continue;  // the reload names a missing file itself, as the start did
        out.push_back({fmt::format("{} {}", p.what, p.path), strerror(e)});
    }
    return out;
}

bool unreadableAs(const UserInfo& user, const std::vector<ReadPath>& paths, std::vector<Unreadable>& out,
                  std::string& error) {
    int fds[2];
    if (pipe(fds) != 0) {
        error = fmt::format("pipe: {}", strerror(errno));
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        error = fmt::format("fork: {}", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        std::string why, text;
        int code = 0;
        if (!dropPrivileges(user, why)) {
            text = why;
            code = 2;
        } else {
            // Names and reasons hold no tab or newline of ours; a path with one is cut short, nothing worse.
            for (const auto& u : unreadable(paths)) text += u.name + "\t" + u.why + "\n";
        }
        for (size_t off = 0; off < text.size();) {
            ssize_t n = write(fds[1], text.data() + off, text.size() - off);
            if (n <= 0) break;
            off += size_t(n);
        }
        _exit(code);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        text.append(buf, size_t(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error = text.empty() ? fmt::format("the check as user {} did not finish", user.name) : text;
        return false;
    }
    out.clear();
    for (size_t start = 0; start < text.size();) {
        size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(start, nl - start);
        size_t tab = line.rfind('\t');
        if (tab == std::string::npos)
            out.push_back({line, ""});
        else
            out.push_back({line.substr(0, tab), line.substr(tab + 1)});
        start = nl + 1;
    }
    return true;
}

}  // namespace gslb::server::service
