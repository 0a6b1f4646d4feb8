// DNSSEC key rollover (doc/dnssec.md -> "The rollover plan"): RFC 7583's timelines turned into the four
// timing values (Publish, Activate, Inactive, Delete) of the new and the old key, the TTLs those timelines
// need read from a compiled zone, the key a rollover replaces, and the key events (a time at which some key
// of a signed zone is published, activated, retired or removed) gslbd reloads at.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "zones/dnssec_keys.hpp"
#include "zones/zone.hpp"

namespace gslb::zones {

enum class KeyKind { Zsk, Ksk, Csk };
const char* kindName(KeyKind k);  // "ZSK", "KSK", "CSK"

/// RFC 7583 §2's intervals, all in seconds.
struct RolloverIntervals {
    int64_t dprp = 0;    // Dprp: propagation of a zone change to every secondary
    int64_t dprpP = 0;   // DprpP: the same at the parent, the registration delay included
    int64_t ttlKey = 0;  // TTLkey: the DNSKEY TTL
    int64_t ttlSig = 0;  // TTLsig: the largest TTL of any signed RRset (GSLB answers and NSEC included)
    int64_t ttlDs = 0;   // TTLds: the parent's DS TTL
    int64_t dsgn = 0;  // Dsgn: 0 for gslbd (every load signs the whole zone; online signatures per snapshot)
};

/// Both keys' times (unix seconds) and the parent's DS steps of one rollover starting at `start`.
struct RolloverPlan {
    KeyKind kind = KeyKind::Zsk;
    int64_t ipub = 0;   // Ipub = Dprp + TTLkey (ZSK, CSK)
    int64_t ipubP = 0;  // IpubP = DprpP + TTLds (KSK, CSK)
    int64_t iret = 0;   // ZSK Dsgn + Dprp + TTLsig; KSK Dprp + TTLkey; CSK Dsgn + Dprp + max(TTLsig, TTLkey)
    int64_t newPublish = 0, newActivate = 0;  // the new key's (its Inactive and Delete stay unset)
    int64_t oldInactive = 0, oldRemove = 0;   // the old key's
    int64_t dsAdd = 0;                        // the new key's DS goes to the parent (0: no DS change, a ZSK)
    int64_t dsRemove = 0;                     // the old key's DS may leave the parent (0: no DS change)
};

/// ZSK: pre-publication (RFC 7583 §3.2.1): new Publish = start, Activate = old Inactive = start + Ipub,
/// old Delete = that + Iret. KSK: double-DS (§3.3.2): new DS at start, the swap at start + IpubP (new
/// Publish = Activate = old Inactive = Delete), the old DS out Iret later. CSK: double-DS with
/// pre-publication (doc/dnssec.md's plan, step 3): new Publish and DS at start, the swap at start + max(Ipub,
/// IpubP), old Delete and DS out Iret later. Intervals must not be negative.
RolloverPlan planRollover(KeyKind kind, int64_t start, const RolloverIntervals& iv);

/// The TTLs a rollover of zone `z` (compiled unsigned, from its file) waits on, as gslbd signs it
/// (zones/dnssec.cpp compileSigned): the DNSKEY TTL (the SOA TTL, or a DNSKEY of the file with a longer one),
/// the largest TTL of an RRset that gets an RRSIG (authoritative data; at a cut only DS) and the NSEC/NSEC3
/// TTL (min(SOA TTL, MINIMUM), RFC 9077), with where that largest TTL is; and the SOA's refresh and retry.
struct ZoneTtls {
    uint32_t key = 0, sig = 0;
    std::string sigWhere;  // "www.example.com. A" or "NSEC/NSEC3"
    uint32_t refresh = 0, retry = 0;
};
ZoneTtls zoneTtls(const Zone& z);

/// A key's kind among the keys of its zone that are not deleted at `now`: a non-SEP key is a ZSK, a SEP key a
/// KSK when some live non-SEP key is there, else a CSK.
KeyKind keyKind(const DnssecKey& k, const std::vector<DnssecKey>& all, int64_t now);
/// Not deleted at `now` (Delete unset or later).
bool keyLive(const DnssecKey& k, int64_t now);

/// The index in `keys` of the one key of `kind` a rollover at `now` replaces: the only live key of that
/// kind, active, with no Publish/Activate still to come and no Inactive or Delete set. False and `error`
/// ("why", naming the key and the time) when there is no such key, several, or a rollover is under way.
bool rolloverKey(const std::vector<DnssecKey>& keys, KeyKind kind, int64_t now, size_t& index,
                 std::string& error);

/// One change of a key's state between two signings: key `tag` (its role among the zone's keys) `what`
/// ("is published", "becomes active", "becomes inactive", "is deleted").
struct KeyEvent {
    uint16_t tag = 0;
    std::string role;
    const char* what = "";
};
/// What changed from `before` signed at `beforeAt` to `after` signed at `afterAt` (keys matched by their
/// DNSKEY): each key's publication and activity compared, so a key that appeared in the directory with a
/// Publish already past still shows as published. Publications first, deletions last.
std::vector<KeyEvent> keyChanges(const std::vector<DnssecKey>& before, int64_t beforeAt,
                                 const std::vector<DnssecKey>& after, int64_t afterAt);
/// The earliest event of `keys` later than `now`; 0 when there is none.
int64_t nextKeyEvent(const std::vector<DnssecKey>& keys, int64_t now);

}  // namespace gslb::zones
