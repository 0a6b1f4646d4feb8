// What gslbd reads from and writes to etcd (doc/ns-set.md "Shared state in etcd"): the shapes of etcd's v3
// JSON gateway (etcd 3.4, `etcdserverpb` over grpc-gateway: keys and values base64, 64-bit integers as
// decimal strings, a watch as a stream of {"result": …} objects) and the keys gslbd keeps under its prefix.
// Pure functions, no I/O: server/cluster/etcd_client.hpp sends and receives, server/cluster/etcd_sync.hpp
// decides what a key means for the daemon. Everything here reads untrusted bytes (a shared etcd, another NS
// set's prefix, a hostile writer): every function returns an error instead of throwing, and a refused item is
// never half-applied.
//
// Keys under PREFIX (`[cluster] etcd_prefix`, default "/gslbd/"; each path component percent-encoded where it
// holds '/', '%' or a byte outside 0x21..0x7e, so a site or address never splits a key):
//   PREFIX admin/site/SITE                 {"enabled": false, "origin": "http://192.0.2.53:8053"}
//   PREFIX admin/service/SITE/ADDRESS      the same, for one service
//   PREFIX report/SITE                     {"origin": URL, "body": {…the POST /v1/sites/SITE/report body…}}
//   PREFIX verdict/SITE/ADDRESS/MEMBER     {"health": "up"|"down", "l4_ms": 1.2, "l7_ms": 3.4}, under
//   MEMBER's
//                                          lease: it disappears when MEMBER stops renewing it
//   PREFIX owner/SITE/ADDRESS/N            MEMBER (a JSON string): who probes this service, N < max(1,
//                                          health_quorum); under the owner's lease
//   PREFIX member/MEMBER                   {"config_digest": "…", "serials": {"zone.": 2026…}, "etcd":
//   "live",
//                                          "drained": ["site east", …], "health": {"SITE/ADDRESS": "up"}},
//                                          under its lease
// MEMBER is the member's [cluster] URL ("http://192.0.2.53:8053").
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gslb::server::cluster {

/// The largest value taken from etcd (octets, before base64): a report body is a few KiB, a member's entry
/// grows with its zones and services; anything larger is refused, not parsed.
inline constexpr size_t kMaxEtcdValue = 256 * 1024;
/// The largest gateway response or watch message parsed (octets): the whole prefix at start-up.
inline constexpr size_t kMaxEtcdBody = 64 * 1024 * 1024;

/// RFC 4648 §4 base64 (with padding), as the gateway writes bytes fields.
std::string base64Encode(std::string_view bytes);
/// False on anything but canonical base64 (no whitespace, padding where due).
bool base64Decode(std::string_view text, std::string& out);

/// The range_end that selects every key starting with `prefix` (etcd's "prefix end": the prefix with its last
/// byte below 0xff incremented and what follows dropped; "\0" when there is none).
std::string prefixEnd(std::string_view prefix);

/// One key-value as the gateway gives it (mvccpb.KeyValue), decoded.
struct EtcdKv {
    std::string key, value;
    int64_t createRevision = 0, modRevision = 0, version = 0, lease = 0;
    /// The value was larger than kMaxEtcdValue: not decoded (`value` empty). The key alone is refused, not
    /// the answer it came in: one huge value must not keep a member from reading everything else.
    bool tooLarge = false;
};

/// One watch event (mvccpb.Event): a put, or a delete (value empty).
struct EtcdEvent {
    bool deleted = false;
    EtcdKv kv;
};

/// A gateway answer, whichever call it was.
struct EtcdReply {
    int64_t revision = 0;     // header.revision: the store's revision when it answered
    std::vector<EtcdKv> kvs;  // range (and a txn's range responses)
    bool succeeded = false;   // txn: the compare held
    int64_t leaseId = 0;      // lease grant / keepalive: ID
    int64_t ttl = 0;          // lease grant / keepalive: TTL (s); 0 after a keepalive: the lease is gone
    // watch
    bool created = false, canceled = false;
    int64_t watchId = 0;
    int64_t compactRevision = 0;  // the watch started below what etcd still keeps: read everything again
    std::vector<EtcdEvent> events;
};

/// Parses a unary gateway answer (range, put, txn, lease grant) or one message of a stream (watch,
/// keepalive: {"result": {…}}); `{"error": …, "message": …}` (or {"error": {…}} in a stream) is an error
/// with etcd's message. Returns "" or why it is refused (then `out` is left as it was given). Keys larger
/// than kMaxEtcdValue, more than 1,000,000 kvs or events, a body larger than kMaxEtcdBody, and revisions or
/// ids that are not non-negative int64 decimal strings are refused; a larger value is kept as tooLarge.
std::string parseEtcdReply(std::string_view body, EtcdReply& out);

/// Splits a watch stream's buffered bytes into whole JSON messages (the gateway writes one object per
/// message, each followed by a newline; chunks may cut anywhere). Appends each complete message to `out` and
/// erases it from `buf`. Returns "" or why the stream is broken (a message over kMaxEtcdBody, bytes between
/// messages that are not whitespace).
std::string splitWatchMessages(std::string& buf, std::vector<std::string>& out);

// ---- gslbd's keys

/// Percent-encodes one key component ('/', '%', bytes outside 0x21..0x7e; upper-case hex) and back; decoding
/// fails on a bad escape, an unescaped byte that needs one, or an escape of a byte that needs none (so one
/// name has exactly one key).
std::string keyEscape(std::string_view part);
bool keyUnescape(std::string_view part, std::string& out);

/// PREFIX admin/…: a drain or enable.
struct SharedAdmin {
    std::string site, address;  // address empty: the site
    bool enabled = true;
    std::string origin;  // the member that took the request
};
/// PREFIX report/SITE.
struct SharedReport {
    std::string site, origin;
    std::string body;  // the report's JSON text, to be validated by the same code as a POST
};
/// PREFIX verdict/SITE/ADDRESS/MEMBER.
struct SharedVerdict {
    std::string site, address, member;
    bool up = false;
    double l4Ms = -1, l7Ms = -1;  // FlashBack times (ms); -1: none
};
/// PREFIX owner/SITE/ADDRESS/N.
struct SharedOwner {
    std::string site, address, member;
    int slot = 0;
};
/// PREFIX member/MEMBER.
struct SharedMember {
    std::string member;
    std::string configDigest, etcdState;
    std::map<std::string, uint32_t> serials;
    std::vector<std::string> drained;
    std::map<std::string, std::string> health;  // "SITE/ADDRESS" -> up | down | unknown
};

using SharedItem = std::variant<SharedAdmin, SharedReport, SharedVerdict, SharedOwner, SharedMember>;

/// The largest health_quorum (owner slots N) and the longest site, address or member name taken (octets).
inline constexpr int kMaxOwnerSlots = 64;
inline constexpr size_t kMaxNameLength = 255;

/// Decodes one key of the store: `key` must start with `prefix`, name a known kind with the right number of
/// components, and `value` must be that kind's JSON with every field of its type (unknown fields are refused
/// too: a writer that is not this gslbd version, or not gslbd, must not be half-understood). A deleted key
/// (`deleted`) needs no value: out gets the kind and names only. Returns "" or why the item is refused.
std::string decodeSharedKey(std::string_view prefix, std::string_view key, std::string_view value,
                            bool deleted, SharedItem& out);
/// The same for a key-value as read (a tooLarge value is refused as such).
std::string decodeSharedKv(std::string_view prefix, const EtcdKv& kv, bool deleted, SharedItem& out);

/// The key and value gslbd writes for each item (the inverse of decodeSharedKey).
std::string sharedKey(std::string_view prefix, const SharedItem& item);
std::string sharedValue(const SharedItem& item);

/// After etcd confirmed the delete of owner key `key` that `self` released: takes it out of `cache` (key ->
/// item as the watch keeps it) only while `cache` still names `self` its holder. An owner key's name has no
/// member in it, and the watch is a stream of its own: the next holder's claim of the same key can arrive
/// before the delete's answer, and erasing it then would leave this member seeing a free key for ever (no
/// later event comes), probing a service another member owns. Nothing else is touched.
void forgetReleasedOwner(std::map<std::string, SharedItem>& cache, const std::string& key,
                         std::string_view self);

}  // namespace gslb::server::cluster
