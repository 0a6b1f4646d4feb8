// TSIG (RFC 8945): HMAC signatures over DNS messages with a shared secret, for zone transfers and NOTIFY.
// Socket-free (doc/design.md "Principles" 1) and clock-free: every function that checks or writes a time
// takes `now` (UNIX seconds), so tests and the fuzzer are deterministic. The MACs are OpenSSL's HMAC
// (libcrypto, which ldns already links): ldns' own TSIG functions work on parsed ldns_pkt objects, while the
// server signs the wire messages it writes, an AXFR one 64 KiB message at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zones/name.hpp"
#include "zones/rrtype.hpp"

namespace gslb::zones {

inline constexpr uint16_t kTsigFudge = 300;  // s: the clock skew we allow and ask for (RFC 8945 §10)
inline constexpr size_t kTsigMaxMac = 64;    // octets: HMAC-SHA512

/// TSIG errors (RFC 8945 §3, the TSIG RR's Error field; the message's RCODE is then NOTAUTH, 9).
enum TsigError : uint16_t {
    kTsigNoError = 0,
    kTsigBadSig = 16,
    kTsigBadKey = 17,
    kTsigBadTime = 18,
    kTsigBadTrunc = 22,
};

/// "BADSIG", "BADKEY", "BADTIME", "BADTRUNC", "NOERROR" or "TSIG error N": for logs.
std::string tsigErrorText(uint16_t error);

/// RFC 8945 §6's algorithms (HMAC-MD5 only for old peers; GSS-TSIG is not supported).
enum class TsigAlgorithm : uint8_t { HmacMd5, HmacSha1, HmacSha224, HmacSha256, HmacSha384, HmacSha512 };

/// "hmac-sha256" and the others, as BIND and Knot write them (case-insensitive; "hmac-md5" too). False
/// when unknown.
bool tsigAlgorithmFromName(std::string_view name, TsigAlgorithm& out);
/// The config name ("hmac-sha256").
const char* tsigAlgorithmName(TsigAlgorithm a);
/// The algorithm's domain name in wire form (RFC 8945 §6: "\x0bhmac-sha256\0", HMAC-MD5.SIG-ALG.REG.INT.).
std::string_view tsigAlgorithmWire(TsigAlgorithm a);
/// Octets of the full MAC (16 for MD5 … 64 for SHA-512).
size_t tsigMacSize(TsigAlgorithm a);

struct TsigKey {
    WireName name;      // the key's name, lower-case wire form; what peers send in the TSIG RR's owner
    std::string label;  // the name as configured ([key.NAME]), for logs
    TsigAlgorithm algorithm = TsigAlgorithm::HmacSha256;
    std::vector<uint8_t> secret;
    /// The shortest MAC a request may carry (octets; RFC 8945 §5.2.4's local policy, [key.NAME]
    /// min_mac_size); 0: the full hash, as BIND requires of a key not configured for truncation.
    uint16_t minMacSize = 0;
};

/// Decodes base64 (RFC 4648 §4) as tsig-keygen and keymgr print secrets; whitespace is skipped. False on any
/// other character, on bad padding, or when nothing is left.
bool decodeBase64(std::string_view text, std::vector<uint8_t>& out);

/// Reads a key's secret from the text of a secret file: the base64 alone, or the `secret "…";` line of a
/// tsig-keygen / BIND key clause, or the `secret: …` line of `keymgr -t` output. False and `error` when no
/// secret is found or it is not base64.
bool parseSecretText(std::string_view text, std::vector<uint8_t>& out, std::string& error);

/// The TSIG RR of a message (RFC 8945 §4.2). Pointers point into the message.
struct TsigRecord {
    size_t start = 0;  // offset of the record (its owner name) in the message; the record ends the message
    uint8_t keyName[kMaxNameLen]{};  // lower-case, uncompressed wire form
    uint8_t keyNameLen = 0;
    uint8_t algorithm[kMaxNameLen]{};  // lower-case, uncompressed wire form
    uint8_t algorithmLen = 0;
    uint64_t timeSigned = 0;  // 48 bits, UNIX seconds
    uint16_t fudge = 0;
    const uint8_t* mac = nullptr;
    uint16_t macLen = 0;
    uint16_t originalId = 0;
    uint16_t error = 0;
    const uint8_t* other = nullptr;
    uint16_t otherLen = 0;
};

/// Parses the TSIG RR at `at`, which must be the last record of `msg` (RFC 8945 §5.1) with class ANY and
/// TTL 0 (§4.2) and rdata that fills its RDLENGTH exactly. Names may be compressed (pointers strictly
/// backwards). False when anything is malformed: the message then gets FORMERR. Bounded work, no allocation.
bool parseTsig(std::span<const uint8_t> msg, size_t at, TsigRecord& out) noexcept;

enum class TsigFind { None, Found, Malformed };
/// Walks any DNS message (query or response) to its last record and parses it when it is a TSIG RR. A TSIG
/// anywhere else, or a message that does not parse to its end, is Malformed. Bounded work.
TsigFind findTsig(std::span<const uint8_t> msg, TsigRecord& out) noexcept;

/// One signed exchange: the key and the last MAC, which the next signature covers (the request's for the
/// first response, each response's for the one after it in an AXFR, RFC 8945 §5.3.1).
struct TsigSession {
    const TsigKey* key = nullptr;  // nullptr: the exchange is not signed (or its key was not found)
    uint8_t mac[kTsigMaxMac]{};
    uint16_t macLen = 0;
    uint16_t originalId = 0;
    uint64_t requestTime = 0;  // the request's Time Signed
    uint16_t error = 0;        // the TSIG error the request earned (0: it verified)
    int64_t skew = 0;          // s, now minus the request's time (for logs of BADTIME)
    size_t messages = 0;       // responses signed so far
};

/// Verifies a request's TSIG (RFC 8945 §5.2: key, then MAC, then time) and fills `s` for signing the
/// response. Returns false when the TSIG RR is malformed or its MAC size is impossible (FORMERR,
/// §5.2.2.1); otherwise true, with s.error 0 (verified) or BADKEY (unknown key name or another
/// algorithm), BADSIG (wrong MAC), BADTIME (|now - Time Signed| > Fudge) or BADTRUNC (§5.2.4: a MAC
/// truncated below the key's minMacSize, which verified as truncated; checked last, as the RFC orders). A MAC
/// shorter than max(10, half the hash) or longer than the hash is FORMERR (§5.2.2.1).
bool verifyRequest(std::span<const uint8_t> msg, size_t at, std::span<const TsigKey> keys, uint64_t now,
                   TsigSession& s) noexcept;

/// Octets a TSIG RR made with `key` takes (full MAC, `otherLen` octets of Other Data).
size_t tsigRecordSize(const TsigKey& key, size_t otherLen = 0);

/// Signs the response in `buf[0, len)` for session `s` (whose request verified): appends the TSIG RR and
/// raises ARCOUNT. The first response's MAC covers the request MAC, the message and every TSIG variable
/// (§5.3); each later message of the same exchange (an AXFR's) covers the prior MAC, the message and the
/// timers only (§5.3.1). Returns the new length, or 0 (and the message is unchanged) when `buf` has no room.
size_t signResponse(std::span<uint8_t> buf, size_t len, TsigSession& s, uint64_t now) noexcept;

/// The error response to a request whose TSIG failed (s.error != 0, §5.3.2): `reply` is an error reply
/// already written (header, question, maybe OPT) whose RCODE this sets to NOTAUTH; a TSIG RR with the error
/// is appended. BADKEY and BADSIG get an unsigned one (MAC size 0: we cannot sign with a key we do not
/// know, or for a client that does not hold it); BADTIME is signed and carries our time in Other Data so
/// that the client can see the skew; BADTRUNC is signed (its MAC verified, §5.3.2), with the full MAC.
/// Returns the new length, 0 when it does not fit or `reply` is shorter than a header.
size_t tsigErrorResponse(std::span<uint8_t> buf, size_t len, const TsigRecord& request, TsigSession& s,
                         uint64_t now) noexcept;

/// Signs a request (a NOTIFY) with `key`: appends the TSIG RR, raises ARCOUNT, and keeps its MAC in `s` to
/// verify the reply with. Returns the new length, 0 when `buf` has no room.
size_t signRequest(std::span<uint8_t> buf, size_t len, const TsigKey& key, uint64_t now,
                   TsigSession& s) noexcept;

/// Verifies a reply to a request signed with signRequest (RFC 8945 §5.4). Returns kTsigNoError when the
/// reply is signed with the session's key and its MAC and time are good; the TSIG error the peer sent
/// (BADKEY, BADSIG, BADTIME, …) when it reports one; otherwise BADSIG for a wrong or missing signature
/// (an unsigned reply to a signed request must be discarded, §5.4.1) or BADTIME for a reply out of the
/// fudge window; BADKEY when signed with another key.
uint16_t verifyResponse(std::span<const uint8_t> msg, const TsigSession& s, uint64_t now) noexcept;

}  // namespace gslb::zones
