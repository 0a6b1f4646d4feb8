#include "server/conf/restart_only.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gslb::server {

namespace {

std::string listenText(const std::vector<ListenAddr>& l) {
    std::vector<std::string> t;
    for (const auto& a : l) t.push_back(a.text);
    return fmt::format("[{}]", fmt::join(t, ", "));
}

std::string quoted(const std::string& s) {
    return s.empty() ? "unset" : fmt::format("\"{}\"", s);
}

}  // namespace

std::vector<std::string> restartOnlyChanges(const Config& old, const Config& now) {
    std::vector<std::string> out;
    auto diff = [&](const char* key, const std::string& a, const std::string& b) {
        if (a != b) out.push_back(fmt::format("{} ({} -> {})", key, a, b));
    };
    const ServerConf &o = old.server, &n = now.server;
    diff("[server] listen", listenText(o.listen), listenText(n.listen));
    diff("[server] workers", std::to_string(o.workers), std::to_string(n.workers));
    diff("[server] tls_listen", listenText(o.tlsListen), listenText(n.tlsListen));
    diff("[server] user", quoted(o.user), quoted(n.user));
    diff("[server] state_dir", quoted(o.stateDir), quoted(n.stateDir));
    diff("[server] log", quoted(o.log), quoted(n.log));
    diff("[server] xdp", fmt::format("[{}]", fmt::join(o.xdp, ", ")),
         fmt::format("[{}]", fmt::join(n.xdp, ", ")));
    if (old.control.enabled != now.control.enabled)
        out.push_back(now.control.enabled ? "[control] (added)" : "[control] (removed)");
    else if (now.control.enabled)
        diff("[control] listen", old.control.listen.text, now.control.listen.text);
    // The RRL table is sized once, from the first config (an [rrl] added later gets the size made at start).
    if (now.rrl.enabled)
        diff("[rrl] table_size", std::to_string(old.rrl.tableSize), std::to_string(now.rrl.tableSize));
    return out;
}

}  // namespace gslb::server
