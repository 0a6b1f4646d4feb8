// Parsing a DNS query message (RFC 1035 §4.1) with bounded work, for the answer path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "zones/client.hpp"
#include "zones/name.hpp"

namespace gslb::zones {

/// A parsed query. Everything points into the caller's packet or lives inline: no allocation.
struct Query {
    uint16_t id = 0;
    uint8_t opcode = 0;
    bool rd = false;  // copied into the response (RFC 1035 §4.1.1)
    bool cd = false;  // copied into the response (RFC 4035 §3.1.6)
    uint16_t qtype = 0;
    uint16_t qclass = 0;
    const uint8_t* qname = nullptr;  // the QNAME as it came, case preserved (RFC 1035 §7.1 / RFC 4343 §4.1)
    uint8_t qnameLen = 0;            // octets, root label included
    uint8_t labels = 0;              // labels before the root
    // Set by the parse up to `labels` and `qnameLen` (not cleared beyond: 383 octets a query to zero).
    uint8_t labelOff[kMaxLabels];  // offset of each label in the name, leftmost first
    uint8_t lower[kMaxNameLen];    // lower-cased copy of the QNAME
    uint16_t qdcount = 0;          // QDCOUNT as sent
    size_t questionEnd = 0;        // offset just after the question; 0 when none parsed
    bool questionOk = false;       // exactly one question came and parsed: it is echoed, even in errors
    bool edns = false;  // an OPT record came and the whole message parsed (RFC 6891 §6.1.1): reply with one
    uint16_t ednsSize = 0;  // requestor's UDP payload size, as sent
    uint8_t ednsVersion = 0;
    bool ednsDo = false;  // DNSSEC OK (RFC 3225)
    // EDNS Client Subnet (RFC 7871), parsed whatever [server] ecs says; answer() decides whether to use it.
    uint8_t ecsCount = 0;   // ECS options seen (more than one is malformed: the location is ambiguous)
    bool ecsValid = false;  // exactly one, and parseEcs accepted it
    EcsOption ecs;          // valid when ecsValid

    // EDNS options this server acts on, found by parseEdnsOptions (the first of each kind counts).
    bool nsid = false;                // RFC 5001 §2.1: the requestor asks for our NSID
    const uint8_t* cookie = nullptr;  // RFC 7873 §4: the COOKIE option's data, in the packet
    uint8_t cookieLen = 0;            // 8 (client cookie only) or 16..40 (client + server cookie); 0: none
    bool padding = false;  // RFC 7830 §3: a Padding option came; the server pads over an encrypted transport
    size_t tsigAt = 0;     // offset of the TSIG RR (RFC 8945), the message's last record; 0: unsigned
};

inline constexpr uint16_t kOptNsid = 3;      // RFC 5001
inline constexpr uint16_t kOptCookie = 10;   // RFC 7873
inline constexpr uint16_t kOptPadding = 12;  // RFC 7830
inline constexpr uint16_t kOptEde = 15;      // RFC 8914 Extended DNS Error
inline constexpr size_t kClientCookieLen = 8;
inline constexpr size_t kServerCookieMin = 8, kServerCookieMax = 32;  // RFC 7873 §4.2

enum class ParseStatus {
    Ok,
    Drop,        // not a query we answer at all: too short for a header, or QR=1 (a response)
    FormErr,     // RFC 1035 §4.1.1 format error: QDCOUNT != 1, bad name, truncated, bad or misplaced OPT
    NotImp,      // an opcode other than QUERY (RFC 1035 §4.1.1), whatever follows the header
    CookieOnly,  // QDCOUNT 0 with an OPT record holding a COOKIE option: asking for a server cookie (RFC
                 // 7873 §5.4); without the cookie such a query is FormErr
};

/// Parses `pkt`. Names are checked for labels > 63 octets, names > 255 octets, pointers past the end or not
/// strictly backwards (which also rules out loops); the QNAME must not be compressed (nothing precedes it).
/// Any QDCOUNT is walked over, but only a single question is kept (`questionOk`); records in the answer and
/// authority sections are skipped; the additional section is scanned for OPT (RFC 6891 §6.1.1: at most one,
/// owner root, additional section only). The sections are parsed for every opcode, so that a NOTIMP or
/// FORMERR reply can carry an OPT when the query had a sound one (§7). Whatever the status, `questionOk`
/// says whether a question may be echoed and `edns` whether an OPT must be sent; with FormErr, `qdcount`
/// 0 and `edns`, the rest of the message was sound (RFC 7873 §5.4's cookie-only query). A TSIG RR is
/// located (`tsigAt`), not checked; one that is not the last record of the additional section is FormErr
/// (RFC 8945 §5.1). Work is O(packet size).
ParseStatus parseQuery(std::span<const uint8_t> pkt, Query& q) noexcept;

/// Reads the options of an OPT record's RDATA (`rdata` is exactly RDLENGTH octets) into `q`: ECS, NSID,
/// COOKIE and Padding; unknown options are skipped (RFC 6891 §6.1.2). False (FORMERR) when the options do not
/// tile the RDATA exactly, or a COOKIE option has a length other than 8 or 16..40 (RFC 7873 §5.2.2). Work is
/// O(rdata).
bool parseEdnsOptions(std::span<const uint8_t> rdata, Query& q) noexcept;

}  // namespace gslb::zones
