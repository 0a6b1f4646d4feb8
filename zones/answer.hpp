// The socket-free entry point of the DNS core (STYLE.md 1): query bytes in, response bytes out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "zones/client.hpp"
#include "zones/packet.hpp"
#include "zones/zonedb.hpp"

namespace gslb::zones {

/// What the answer path knows of the server's configuration.
struct AnswerOptions {
    uint16_t udpPayloadMax = 1232;  // octets: the EDNS0 size we offer and our UDP cap (RFC 6891 §6.2.5)
    bool minimalResponses = true;  // positive answers without the zone's NS RRset in authority (and its glue)
    std::string identity;          // CH TXT id.server / hostname.bind (RFC 4892); empty: REFUSED
    std::string version;           // CH TXT version.bind / version.server; empty: REFUSED
    bool ecs = true;  // use and echo EDNS Client Subnet (RFC 7871); false: the option is ignored as unknown
};

/// One record chosen by a dynamic (GSLB) answer: its rdata, which must stay valid during the call.
struct DynRecord {
    const uint8_t* data;
    uint16_t len;
};
inline constexpr size_t kMaxDynRecords = 64;

struct DynAnswer {
    uint32_t ttl = 0;
    uint16_t count = 0;  // 0: NODATA (the hostname's `fallback = "none"`)
    uint8_t scope = 0;   // ECS SCOPE PREFIX-LENGTH: how much of the client's address decided (0: none of it)
    DynRecord recs[kMaxDynRecords];
};

/// Chooses the records of a GSLB hostname. Called on the query path for A and AAAA queries at a node whose
/// `dynamic` id is set: must not block, allocate or throw. `set` is the name's static RRset of `qtype` in the
/// zone (nullptr when it has none). `client` is where the query comes from (family 0 or a 0-bit prefix:
/// unknown); the hook sets `out.scope` to the prefix length its choice depended on (RFC 7871 §7.2.1).
class DynamicHook {
  public:
    virtual ~DynamicHook() = default;
    virtual void select(int32_t dynamic, uint16_t qtype, const Zone& zone, const RRset* set,
                        const Client& client, DynAnswer& out) noexcept = 0;
};

enum class Action : uint8_t {
    Send,  // send `len` octets of the output
    Drop,  // send nothing (a response, or a runt)
    Axfr,  // a zone transfer over TCP: the server checks its ACL, then writes it with AxfrWriter
           // (zones/axfr.hpp) or answers refuse()
};

struct AnswerResult {
    size_t len = 0;
    Action action = Action::Send;
    uint8_t rcode = 0;  // RCODE sent (extended RCODEs in full, e.g. 16 for BADVERS)
    uint16_t qtype = 0;
    const Zone* zone = nullptr;  // for Axfr
};

/// Answers one query. `tcp` selects the size limit: 65535 over TCP; over UDP 512 without EDNS0, else the
/// requestor's size (at least 512, RFC 6891 §6.2.5) capped by options.udpPayloadMax. `out` must hold 65535
/// octets. Never throws; malformed input yields FORMERR or Drop (see parseQuery). The rules followed are
/// RFC 1034 §4.3.2 (with RFC 4592 wildcards, RFC 2308 negative answers, CNAME and RFC 6672 DNAME chasing),
/// RFC 6891, RFC 8482 (one RRset answers ANY, on every transport) and RFC 9471 (in-domain glue is required:
/// TC when it does not fit). With options.ecs, an ECS option (RFC 7871) is the client's location (else
/// `client.source` is), a malformed one or two of them get FORMERR (§7.1.2), and a valid one is echoed with
/// the scope the hook reported (0 for every answer that does not depend on the client: static names, errors,
/// referrals).
AnswerResult answer(const ZoneDb& db, const AnswerOptions& options, std::span<const uint8_t> query, bool tcp,
                    std::span<uint8_t> out, DynamicHook* hook, const ClientInfo& client = {}) noexcept;

/// An error response to `query` with `rcode`, the question echoed and nothing else: REFUSED (5) for an AXFR
/// from a source outside axfr_allow, SERVFAIL (2) for one over the server's cap on concurrent transfers.
/// Returns its length; 0 when the query has no question to echo.
size_t refuse(std::span<const uint8_t> query, std::span<uint8_t> out, uint8_t rcode = 5) noexcept;

}  // namespace gslb::zones
