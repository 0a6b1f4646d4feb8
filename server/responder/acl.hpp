// Who may transfer a zone (AXFR, RFC 5936 §6 leaves the policy to the operator): axfr_allow, per zone or in
// [server], where an entry may also require a TSIG key (RFC 8945). Pure functions, for the workers and tests.
#pragma once
#include <sys/socket.h>

#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "zones/tsig.hpp"

namespace gslb::server::xfr {

/// The access list that governs zone `name` (presentation form, any case): its own axfr_allow when the
/// [[zone]] has one (even an empty one: nobody), else [server]'s.
const std::vector<AxfrAllow>& axfrAcl(const Config& config, const std::string& name);

/// How a transfer request came (RFC 9103): over TLS 1.3 or not, and with a client certificate that verified.
/// A transfer over TLS 1.2 is not XoT (RFC 9103 §5.1: TLS 1.3 or later only): `tls` is false for it, and
/// `tls12` makes the refusal say why.
struct XfrTransport {
    bool tls = false;
    bool clientCert = false;  // the TLS client's certificate chained to [server] tls_client_ca
    bool tls12 = false;       // it came over TLS 1.2
};

/// Empty when `peer` may transfer under `acl`, else why not (for the log): no entry covers the source, or
/// the entries that do require a key the request was not signed with, TLS (`tls = true`) it did not come
/// over, or a client certificate (`client_cert = true`, RFC 9103 §9.3.3) it did not show. `signedWith` is
/// the key the request's TSIG verified with (nullptr: unsigned); it points into config.keys. An entry
/// without a key admits signed and unsigned requests alike; one without `tls` admits both transports.
std::string axfrRefusal(const Config& config, const std::vector<AxfrAllow>& acl, const sockaddr* peer,
                        const zones::TsigKey* signedWith, const XfrTransport& via = {});

}  // namespace gslb::server::xfr
