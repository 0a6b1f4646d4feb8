// DNSSEC keys (RFC 4034 §2, RFC 6781): made, written and read in BIND's key file format, which ldns,
// BIND's dnssec-* tools and Knot's keymgr read and write: K<zone>+<alg>+<tag>.key holds the DNSKEY record,
// K<zone>+<alg>+<tag>.private the private key ("Private-key-format: v1.x", "Algorithm:", "PrivateKey:") and
// the key's timing metadata (BIND's "Created:", "Publish:", "Activate:", "Inactive:", "Delete:",
// YYYYMMDDHHMMSS in UTC), which is the state a rollover works from (doc/dnssec.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zones/name.hpp"

typedef struct evp_pkey_st EVP_PKEY;

namespace gslb::zones {

inline constexpr uint8_t kAlgEcdsaP256Sha256 = 13;  // RFC 6605
inline constexpr uint8_t kAlgEd25519 = 15;          // RFC 8080
inline constexpr uint16_t kDnskeyZone = 0x0100;     // the Zone Key flag (RFC 4034 §2.1.1)
inline constexpr uint16_t kDnskeySep = 0x0001;      // Secure Entry Point: a KSK (or a CSK)

/// Timing metadata of a key, unix seconds; 0: not set (a key without any is published and active).
struct KeyTiming {
    int64_t created = 0, publish = 0, activate = 0, inactive = 0, remove = 0;
};

struct DnssecKey {
    std::string zone;    // presentation form, absolute, as the .key file names it ("gslb.example.com.")
    std::string dnskey;  // DNSKEY rdata, wire: flags, protocol 3, algorithm, public key
    uint16_t flags = 0;
    uint8_t algorithm = 0;
    uint16_t tag = 0;                // RFC 4034 Appendix B
    std::shared_ptr<EVP_PKEY> pkey;  // the private key (null for a public-only key)
    KeyTiming timing;
    std::string file;  // the base path K<zone>+<alg>+<tag> it was read from or written to

    bool sep() const { return flags & kDnskeySep; }
    /// Publish/Activate/Inactive/Delete against `now` (unix seconds).
    bool published(int64_t now) const;
    bool active(int64_t now) const;
    /// "CSK", "KSK" or "ZSK": the role it plays among `all` the zone's keys (a SEP key is a CSK when no
    /// non-SEP key is there).
    std::string role(const std::vector<DnssecKey>& all) const;
};

/// `t` (unix seconds) as UTC text in strftime's `format` ("%Y%m%d%H%M%S": BIND's timing metadata).
std::string utcText(int64_t t, const char* format);

/// RFC 4034 Appendix B key tag of DNSKEY rdata.
uint16_t keyTag(std::string_view dnskeyRdata);
/// "13 (ECDSAP256SHA256)" style names; "" for algorithms we cannot sign with.
const char* algorithmName(uint8_t alg);
/// ecdsap256sha256 | ed25519 (case-insensitive), or 13 | 15; 0 when unknown.
uint8_t algorithmFromText(std::string_view text);

/// A new key of `algorithm` for `zone` (absolute, presentation form) with `flags` (257 KSK/CSK, 256 ZSK),
/// Created/Publish/Activate set to `now`. False and `error` when the algorithm is not supported.
bool generateKey(const std::string& zone, uint8_t algorithm, uint16_t flags, int64_t now, DnssecKey& out,
                 std::string& error);

/// The two files' text, as BIND writes them: the .key's timing as comments ("; Publish: YYYYMMDDHHMMSS
/// (Wed Dec  2 00:30:00 2026)"), the .private's as "Publish: YYYYMMDDHHMMSS" lines (what gslbd, ldns and
/// BIND's dnssec-settime read); unset times are left out.
std::string keyFileText(const DnssecKey& k);
std::string privateFileText(const DnssecKey& k);
/// Writes <dir>/K<zone>+<alg>+<tag>.key (0644) and .private (0600, never over an existing file); sets
/// k.file. The .key appears whole (written aside, then renamed): gslbd may list the directory meanwhile.
bool writeKeyFiles(DnssecKey& k, const std::string& dir, std::string& error);

/// `privText` (a .private file's text) with its Created/Publish/Activate/Inactive/Delete lines replaced by
/// `t`'s (unset ones left out); every other line (the key, BIND's other metadata) kept as it was.
std::string withTiming(std::string_view privText, const KeyTiming& t);
/// `keyText` (a .key file's text) with its timing comments replaced by `t`'s, placed before the record.
std::string withTimingComments(std::string_view keyText, const KeyTiming& t);
/// Rewrites the timing of the key files at `k.file` (.private, then .key) to `k.timing`, each file replaced
/// whole by a rename, its mode kept; the result must parse back as the same key with that timing. False and
/// `error` when a file cannot be read or written (the files are then as they were, or the .private new).
bool rewriteTiming(const DnssecKey& k, std::string& error);

/// A fingerprint of the K<zone>+*.key and .private files of `dir` (names, sizes, modification times,
/// inodes): it changes when a key is added, removed or rewritten (gslbctl dnssec rollover, dnssec-settime,
/// an editor). 1 when the directory cannot be read.
uint64_t keyFilesStamp(const std::string& dir, const std::string& zone);

/// Parses one key from the text of its .key and .private files (outside input: the operator's files or
/// another tool's). The .key holds one DNSKEY record (comment lines allowed); the private key must be of the
/// same algorithm and match the public key. `zone` non-empty: the key's owner must be that zone. Bounded:
/// either text over 64 KiB is refused. Never throws. False and `error` ("why") when anything is wrong.
bool parseKey(std::string_view keyText, std::string_view privateText, const std::string& zone, DnssecKey& out,
              std::string& error);

/// Every K<zone>+*+*.key / .private pair in `dir` for `zone`, sorted by tag. `error` names the file.
bool loadKeys(const std::string& dir, const std::string& zone, std::vector<DnssecKey>& out,
              std::string& error);

/// DS rdata (RFC 4034 §5.1) of `k` with SHA-256 (digest type 2, RFC 4509).
std::string dsRdata(const DnssecKey& k);
/// "zone. IN DS tag alg 2 HEX" (the way dnssec-dsfromkey prints it).
std::string dsText(const DnssecKey& k);

/// Signs `data` with `k`: 64 octets r||s for ECDSA P-256 (RFC 6605 §4), 64 for Ed25519 (RFC 8080 §4).
/// Thread-safe (one key may sign on every worker at once). False when OpenSSL fails.
bool signData(const DnssecKey& k, std::string_view data, uint8_t out[64]) noexcept;

}  // namespace gslb::zones
