// Signing a zone at load (RFC 4033-4035): DNSKEY at the apex, an NSEC chain in canonical order (RFC 4034
// §6.1), an RRSIG over every authoritative RRset (DS and NSEC at a zone cut; never NS or glue there), all as
// ordinary records of the compiled zone, so lookups, AXFR and the answer path stay what they were. And the
// signatures made on the query path for the RRsets a GSLB hostname chooses per query: signed once, then
// served from a bounded, lock-free cache (a worker that misses signs itself: it never waits for another).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zones/dnssec_keys.hpp"
#include "zones/zone.hpp"

namespace gslb::zones {

struct SignOptions {
    int64_t now = 0;                 // unix seconds: the signing time
    uint32_t validity = 14 * 86400;  // s: expiration = now + validity, less a spread (compileSigned)
    uint32_t inceptionSkew = 3600;   // s: inception = now - skew (clocks of validators that run behind)
    bool nsec3 = false;  // NSEC3 (RFC 5155) in RFC 9276's profile: SHA-1, iterations 0, no salt, no opt-out
    // The signed zone this one replaces (nullptr: none): its signatures over RRsets that did not change are
    // kept while they are not due (compileSigned), so a reload or a re-sign changes only what it must and
    // its IXFR is small.
    const Zone* previous = nullptr;
};

/// RFC 5155 §5 hash of a lower-case wire name with RFC 9276's parameters (no salt, no extra iteration).
void nsec3Hash(std::string_view lowerWire, uint8_t out[20]) noexcept;

/// The DNSSEC side of a signed zone, owned by the Zone: keys, the validity window of every signature of this
/// snapshot, the NSEC chain as an index for denial proofs, and the online signature cache.
class ZoneSigner {
  public:
    ZoneSigner(std::vector<DnssecKey> keys, const SignOptions& opt, std::string_view apex);

    uint32_t inception() const { return inception_; }
    uint32_t expiration() const { return expiration_; }
    /// Unix seconds at which this snapshot should be re-signed: when its first signature reaches half its
    /// validity (compileSigned).
    int64_t refreshAt() const { return refreshAt_; }
    /// Moves refreshAt() to `t` when that is sooner.
    void refreshBy(int64_t t) {
        if (t < refreshAt_) refreshAt_ = t;
    }
    /// Unix seconds this snapshot was signed at (SignOptions::now).
    int64_t signedAt() const { return signedAt_; }
    /// Unix seconds of the next key event after signedAt (a Publish, Activate, Inactive or Delete of one of
    /// the keys, zones/dnssec_rollover.hpp): the snapshot no longer shows the keys' state from then on, so
    /// gslbd rebuilds it then. 0: none.
    int64_t keyEventAt() const { return keyEventAt_; }
    const std::vector<DnssecKey>& keys() const { return keys_; }
    /// Keys that sign `type` (DNSKEY: the active SEP keys; else the active non-SEP keys, or the SEP keys when
    /// there is none: a CSK signs everything).
    const std::vector<const DnssecKey*>& signers(uint16_t type) const {
        return type == 48 ? keySigners_ : zoneSigners_;
    }

    /// RRSIG rdata (RFC 4034 §3.1) over the RRset (owner: lower-case wire, the name the records are at; a
    /// wildcard owner keeps its '*' and the Labels field leaves it out). `rdatas` need not be sorted or
    /// canonical: this does both (RFC 4034 §6.2, §6.3). False when the key cannot sign.
    bool sign(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl,
              std::vector<std::string_view> rdatas, std::string& out, uint32_t expiration = 0) const;

    /// The RRSIG header (everything before the signature) for `type` at `owner` with `key`, into `out`
    /// (18 + the apex's length octets); returns its length.
    size_t header(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl, uint8_t* out,
                  uint32_t expiration = 0) const;

    /// Online signature of an RRset chosen on the query path (GSLB answers, the NSEC of a `none` fallback):
    /// the 64-octet signature of `key` over (owner, type, ttl, rdatas), from the cache or made now and
    /// cached. Thread-safe, no lock, no allocation; a miss costs one signature on the calling thread.
    /// `rdatas` are `n` records of `len` octets each ... as pointers and lengths; sorted here.
    bool onlineSignature(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl,
                         const uint8_t* const* rdatas, const uint16_t* lens, size_t n,
                         uint8_t sig[64]) const noexcept;
    /// Signatures made by onlineSignature (cache misses), for tests and /v1/status.
    uint64_t onlineSigned() const { return onlineSigned_.load(std::memory_order_relaxed); }
    size_t cacheSlots() const { return slots_; }

    /// The NSEC chain: node indices in canonical order (RFC 4034 §6.1). Filled by compileSigned.
    std::vector<uint32_t> chain;

    /// NSEC3 instead of NSEC: chain3 holds each NSEC3 owner's hash and node, sorted by hash.
    bool nsec3 = false;
    struct Hashed {
        uint8_t hash[20];
        uint32_t node;
    };
    std::vector<Hashed> chain3;
    /// The node of the NSEC3 that matches `name` (its hash is the owner's), or kNone.
    uint32_t nsec3Match(std::string_view lowerWire) const noexcept;
    /// The node of the NSEC3 that covers `name` (the last hash before the name's, wrapping around).
    uint32_t nsec3Cover(std::string_view lowerWire) const noexcept;

  private:
    struct Slot {
        std::atomic<uint32_t> seq{0};  // a seqlock: odd while written
        std::atomic<uint64_t> k0{0}, k1{0};
        std::atomic<uint64_t> sig[8];
    };
    std::vector<DnssecKey> keys_;
    std::vector<const DnssecKey*> keySigners_, zoneSigners_;
    std::string apex_;
    uint32_t inception_ = 0, expiration_ = 0;
    int64_t refreshAt_ = 0, signedAt_ = 0, keyEventAt_ = 0;
    size_t slots_ = 0;
    std::unique_ptr<Slot[]> cache_;
    mutable std::atomic<uint64_t> onlineSigned_{0};
};

/// Canonical order of two lower-case wire names (RFC 4034 §6.1): <0, 0, >0.
int canonicalCompare(std::string_view a, std::string_view b);

/// Compiles `set` as zone `apex`, signed with `keys` (those published get a DNSKEY, those active sign):
/// RRSIG/NSEC/NSEC3/NSEC3PARAM records of the file are dropped (we make our own), DNSKEYs of the file kept.
/// Each RRset's signatures expire `validity` after signing less a spread of up to a quarter of it, fixed
/// by the owner and type (so signing times spread over the zone, as BIND's sig-validity-interval jitter and
/// Knot's rrsig-refresh spread them). A signature of opt.previous is kept when the RRset it covers is the
/// same (owner, type, TTL and records), the key that made it still signs that type, and it is not due: more
/// than half its validity left a sixteenth of the validity from now. So a reload re-signs only what
/// changed, a re-sign only the signatures due (about a quarter of them each time), and the differences
/// (IXFR) stay well below the zone. The signer's refreshAt() is then when the first signature becomes due,
/// at least a sixteenth of the validity away (21 h at the default 14 days).
/// nullptr and `error` when the zone does not compile or no key can sign. `set` gets the new records.
std::unique_ptr<Zone> compileSigned(const WireName& apex, SourceSet& set, const std::string& file,
                                    std::vector<DnssecKey> keys, const SignOptions& opt, std::string& error);

/// The rdata of `type` with the domain names RFC 4034 §6.2 lists lower-cased (the form signatures cover).
std::string canonicalRdata(uint16_t type, std::string_view rdata);

}  // namespace gslb::zones
