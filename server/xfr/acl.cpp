#include "server/xfr/acl.hpp"

#include <fmt/format.h>
#include <strings.h>

namespace gslb::server::xfr {

const std::vector<AxfrAllow>& axfrAcl(const Config& config, const std::string& name) {
    for (const auto& z : config.zones)
        if (z.axfrAllowSet && strcasecmp(z.name.c_str(), name.c_str()) == 0) return z.axfrAllow;
    return config.server.axfrAllow;
}

std::string axfrRefusal(const Config& config, const std::vector<AxfrAllow>& acl, const sockaddr* peer,
                        const zones::TsigKey* signedWith) {
    std::string wanted;  // keys of the entries that cover the source
    for (const auto& e : acl) {
        if (!e.prefix.matches(peer)) continue;
        if (e.key < 0) return {};
        const zones::TsigKey& k = config.keys[size_t(e.key)];
        if (signedWith == &k) return {};
        if (wanted.find(" " + k.label + ",") == std::string::npos) wanted += " " + k.label + ",";
    }
    if (wanted.empty()) return "the source is not in axfr_allow";
    wanted.pop_back();
    if (!signedWith) return fmt::format("unsigned; axfr_allow requires TSIG key{}", wanted);
    return fmt::format("signed with key {}; axfr_allow requires key{}", signedWith->label, wanted);
}

}  // namespace gslb::server::xfr
