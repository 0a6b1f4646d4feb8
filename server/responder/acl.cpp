#include "server/responder/acl.hpp"

#include <fmt/format.h>
#include <strings.h>

namespace gslb::server::xfr {

const std::vector<AxfrAllow>& axfrAcl(const Config& config, const std::string& name) {
    for (const auto& z : config.zones)
        if (z.axfrAllowSet && strcasecmp(z.name.c_str(), name.c_str()) == 0) return z.axfrAllow;
    return config.server.axfrAllow;
}

std::string axfrRefusal(const Config& config, const std::vector<AxfrAllow>& acl, const sockaddr* peer,
                        const zones::TsigKey* signedWith, const XfrTransport& via) {
    std::string wanted;  // keys of the entries that cover the source (and the transport)
    bool needTls = false, needCert = false;
    for (const auto& e : acl) {
        if (!e.prefix.matches(peer)) continue;
        if (e.tls && !via.tls) {
            needTls = true;
            continue;
        }
        if (e.clientCert && !via.clientCert) {
            needCert = true;
            continue;
        }
        if (e.key < 0) return {};
        const zones::TsigKey& k = config.keys[size_t(e.key)];
        if (signedWith == &k) return {};
        if (wanted.find(" " + k.label + ",") == std::string::npos) wanted += " " + k.label + ",";
    }
    if (wanted.empty()) {
        if (needTls)
            return via.tls12
                       ? "axfr_allow requires TLS (XoT, RFC 9103) from this source, which is TLS 1.3 or "
                         "later (RFC 9103 §5.1); the request came over TLS 1.2"
                       : "axfr_allow requires TLS (XoT, RFC 9103) from this source; the request came over "
                         "TCP";
        if (needCert)
            return "axfr_allow requires a client certificate that verifies against tls_client_ca; the client "
                   "showed none";
        return "the source is not in axfr_allow";
    }
    wanted.pop_back();
    // Entries the transport ruled out are alternatives too: say so, or the operator looks for the wrong fix.
    std::string also = needTls ? ", or TLS (XoT, RFC 9103)" : needCert ? ", or a client certificate" : "";
    if (!signedWith) return fmt::format("unsigned; axfr_allow requires TSIG key{}{}", wanted, also);
    return fmt::format("signed with key {}; axfr_allow requires key{}{}", signedWith->label, wanted, also);
}

}  // namespace gslb::server::xfr
