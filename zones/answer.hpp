// The socket-free entry point of the DNS core (doc/design.md "Principles" 1): query bytes in, response bytes
// out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "zones/client.hpp"
#include "zones/packet.hpp"
#include "zones/zonedb.hpp"

namespace gslb::zones {

/// RFC 7873 server cookies, made and checked by whoever holds the secret (the server: RFC 9018 SipHash-2-4).
/// The answer path parses the COOKIE option, asks this hook, and writes the reply's option. Both calls run on
/// the query path of any worker at once: they must be thread-safe and must not block, allocate or throw.
class CookieHook {
  public:
    virtual ~CookieHook() = default;
    /// Checks the server cookie `server` (8..32 octets) that came with client cookie `client` (8 octets) from
    /// `ci.source` (never null here). Returns true when it is one of ours and still fresh; then it may also
    /// set `renew` to false to say that the same server cookie can be sent back (RFC 9018 §4.3: recent
    /// enough).
    virtual bool check(const uint8_t* client, const uint8_t* server, size_t len, const ClientInfo& ci,
                       bool& renew) const noexcept = 0;
    /// Writes a fresh server cookie for (client cookie, client address, ci.now) into `out` (room for 32
    /// octets) and returns its length (8..32).
    virtual size_t make(const uint8_t* client, const ClientInfo& ci, uint8_t* out) const noexcept = 0;
};

/// An Extended DNS Error (RFC 8914 §2) for a response: an INFO-CODE and an optional EXTRA-TEXT (UTF-8, not
/// NUL-terminated, §2). Sent in the response's OPT record, so only to a query that carried EDNS (§3); an
/// option that does not fit the message's size limit is left out, never the message truncated for it.
struct Ede {
    /// The INFO-CODEs this server sends (RFC 8914 §4 and the IANA registry it set up).
    enum Code : int32_t {
        kNone = -1,
        kOther = 0,              // §4.1: none fits; EXTRA-TEXT says what (a GSLB fallback, a transfer cap)
        kProhibited = 18,        // §4.19: refused by policy (axfr_allow; an identity not configured)
        kNotAuthoritative = 20,  // §4.21: the name is not in a zone of ours
        kNotSupported = 21,      // §4.22: the opcode, class or transport for the query type is not served
    };
    int32_t code = kNone;
    std::string_view text;  // must stay valid until the response is written

    bool set() const { return code >= 0; }
    /// Octets of the EDNS option: OPTION-CODE, OPTION-LENGTH, INFO-CODE, EXTRA-TEXT (§2).
    size_t size() const { return set() ? 6 + text.size() : 0; }
};

/// What the answer path knows of the server's configuration.
struct AnswerOptions {
    uint16_t udpPayloadMax = 1232;  // octets: the EDNS0 size we offer and our UDP cap (RFC 6891 §6.2.5)
    bool minimalResponses = true;  // positive answers without the zone's NS RRset in authority (and its glue)
    std::string identity;          // CH TXT id.server / hostname.bind (RFC 4892); empty: REFUSED
    std::string version;           // CH TXT version.bind / version.server; empty: REFUSED
    bool ecs = true;    // use and echo EDNS Client Subnet (RFC 7871); false: the option is ignored as unknown
    bool nsid = false;  // RFC 5001: answer an NSID request with `identity` (when set)
    const CookieHook* cookies =
        nullptr;  // RFC 7873 DNS Cookies; nullptr: COOKIE options are checked for form only
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
    // Set when the choice is a degraded one the client may want to know of (GSLB: the all-down fallback);
    // its text must stay valid until the hook's next call. Sent as an EDE option when the query had EDNS.
    Ede ede;
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
    // A zone transfer (AXFR or IXFR) the server must admit first. Over TCP: the server checks its ACL, then
    // writes it with XfrWriter (zones/axfr.hpp) or answers refuse(). Over UDP: an IXFR from a serial the
    // zone's journal holds, the SOA-only answer already written (len); the server may answer it again with
    // ClientInfo::transferAllowed when the ACL admits the client, else sends what is written.
    Transfer,
};

/// What a query's COOKIE option was worth (RFC 7873 §5.2).
enum class Cookie : uint8_t {
    None,        // no COOKIE option (or cookies are off)
    ClientOnly,  // a client cookie alone (§5.2.3)
    Invalid,     // a client cookie and a server cookie we did not make, or made too long ago (§5.2.4)
    Valid,       // a client cookie and a server cookie of ours, fresh (§5.2.5)
};

/// The kind of a response, as response rate limiting counts them (the BIND / NSD / Knot classes).
enum class ResponseKind : uint8_t {
    Answer,    // NOERROR with data: counted per QNAME (or the wildcard that made it) and QTYPE
    NoData,    // NOERROR without data: per QNAME and QTYPE as well
    NxDomain,  // per zone (a flood of random names under one zone is one flood)
    Referral,  // per delegation point
    Error,     // REFUSED, FORMERR, NOTIMP, SERVFAIL, BADVERS, BADCOOKIE…: per client prefix alone
};

struct AnswerResult {
    size_t len = 0;
    Action action = Action::Send;
    uint8_t rcode = 0;  // RCODE sent (extended RCODEs in full, e.g. 16 for BADVERS, 23 for BADCOOKIE)
    uint16_t qtype = 0;
    const Zone* zone = nullptr;  // for Transfer
    Cookie cookie = Cookie::None;
    ResponseKind kind = ResponseKind::Error;
    // The name `kind` is counted by, lower-case wire form: the QNAME's node (or the wildcard that answered),
    // the zone apex, the delegation point; nullptr for Error. It points into the zone database.
    const uint8_t* kindName = nullptr;
    uint8_t kindNameLen = 0;
    size_t questionEnd = 0;  // where the question ends in the output (12 when there is none)
    size_t optStart = 0;     // where the OPT record starts in the output; 0: the response has none
    size_t tsigAt = 0;  // the query is signed (RFC 8945): offset of its TSIG RR. The caller verifies it and
                        // signs the response (zones/tsig.hpp); answer() leaves room for that signature
    int32_t ede = Ede::kNone;  // the EDE INFO-CODE the response carries (kNone: none, or no room for it)
    // The query carried an EDNS Padding option (RFC 7830 §3): over an encrypted transport the response is
    // to be padded (pad()); answer() never pads, since it does not know the transport is encrypted.
    bool padding = false;
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
///
/// EDNS options (RFC 6891 §6.1.2): NSID (RFC 5001) is answered with `identity` when options.nsid is set. A
/// COOKIE option (RFC 7873) of a bad length is FORMERR (§5.2.2); with options.cookies and a known
/// `client.source`, the reply carries the client cookie and a server cookie (a fresh one unless the query's
/// may be reused), and AnswerResult::cookie says what the query's was worth. Without a valid server cookie
/// the query is answered normally all the same (§5.2.3 choice 3): rate limiting, not this function, decides
/// when to send BADCOOKIE instead (see slip()).
AnswerResult answer(const ZoneDb& db, const AnswerOptions& options, std::span<const uint8_t> query, bool tcp,
                    std::span<uint8_t> out, DynamicHook* hook, const ClientInfo& client = {}) noexcept;

/// The block of RFC 8467 §4.1's recommended "Block-Length Padding" policy for responses: 468 octets.
inline constexpr size_t kPaddingBlock = 468;

/// Pads the response `out[0, len)` with an EDNS Padding option (RFC 7830 §4: option 12, zero octets) added
/// to its OPT record, which starts at `optStart` and must be its last record (as answer() and slip() write
/// it: the TSIG RR, when the response is to be signed, is appended after, RFC 8945 §5.1). The padding makes
/// `len + trailer` (`trailer`: the octets that will follow the OPT, e.g. tsigRecordSize() of the key that
/// signs) the next multiple of `block` that has room for the option's 4-octet header, so a 464-octet
/// response becomes 468 and a 466-octet one 936 (RFC 8467 §4.1). Never beyond `limit` (the client's size
/// limit, at most out.size()): the message is then padded up to `limit` only, which RFC 8467 §4.1 allows, or
/// not at all when not even the option's header fits. Returns the new length (`len` when nothing was added
/// or `optStart` is 0). Call it only for a query that carried the option (AnswerResult::padding) and only
/// over an encrypted transport (DNS over TLS): RFC 7830 §6 and RFC 8467 §4 give no reason to pad in clear.
size_t pad(std::span<uint8_t> out, size_t len, size_t optStart, size_t trailer, size_t limit,
           size_t block = kPaddingBlock) noexcept;

/// Turns the response `res` in `out` (from answer() over UDP) into the short one rate limiting sends in its
/// place (the RRL "slip"): the header and question, TC set and nothing else but the OPT record, so that a
/// real client retries over TCP. With `badCookie` (the query carried a client cookie) the RCODE becomes
/// BADCOOKIE instead of setting TC, and the OPT record keeps the fresh server cookie: the client retries with
/// it and is no longer limited (RFC 7873 §5.2.3 choice 2; BIND does the same). Returns the new length.
size_t slip(std::span<uint8_t> out, const AnswerResult& res, bool badCookie) noexcept;

/// An error response to `query` with `rcode`, the question echoed (when exactly one parsed) and nothing else
/// but an OPT record (offering options.udpPayloadMax) when the query had one: REFUSED (5) for an AXFR from a
/// source outside axfr_allow, SERVFAIL (2) for one over the server's caps on concurrent transfers. The OPT
/// record carries `ede` when set (RFC 8914) and it fits in 512 octets less the room a TSIG RR of the
/// request's size needs (the response may be signed after). Returns its length; 0 when the query is to be
/// dropped (see parseQuery).
size_t refuse(const AnswerOptions& options, std::span<const uint8_t> query, std::span<uint8_t> out,
              uint8_t rcode = 5, Ede ede = {}) noexcept;

}  // namespace gslb::zones
