#include "zones/dnssec_rollover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "zones/ldns.hpp"
#include "zones/rrtype.hpp"
#include "zones/rrtype_text.hpp"

namespace gslb::zones {
namespace {

constexpr uint16_t kDnskeyType = 48;  // RFC 4034 §2 (named apart from zones/dnssec.cpp's: a unity build)

uint32_t get32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

std::string when(int64_t t) {
    return utcText(t, "%Y-%m-%dT%H:%M:%SZ");
}

}  // namespace

const char* kindName(KeyKind k) {
    return k == KeyKind::Zsk ? "ZSK" : k == KeyKind::Ksk ? "KSK" : "CSK";
}

RolloverPlan planRollover(KeyKind kind, int64_t start, const RolloverIntervals& iv) {
    RolloverPlan p;
    p.kind = kind;
    p.ipub = iv.dprp + iv.ttlKey;
    p.ipubP = iv.dprpP + iv.ttlDs;
    switch (kind) {
        case KeyKind::Zsk:
            // §3.2.1: the new DNSKEY reaches every cache (Ipub) before anything is signed with it; the old
            // one stays until the last signature it made has left every cache (Iret).
            p.ipubP = 0;
            p.iret = iv.dsgn + iv.dprp + iv.ttlSig;
            p.newPublish = start;
            p.newActivate = p.oldInactive = start + p.ipub;
            p.oldRemove = p.oldInactive + p.iret;
            break;
        case KeyKind::Ksk:
            // §3.3.2: both DS at the parent for IpubP, then one load swaps the keys; the old DS goes once no
            // cached DNSKEY RRset holds only the old key (Iret).
            p.ipub = 0;
            p.iret = iv.dprp + iv.ttlKey;
            p.dsAdd = start;
            p.newPublish = p.newActivate = p.oldInactive = p.oldRemove = start + p.ipubP;
            p.dsRemove = p.oldRemove + p.iret;
            break;
        case KeyKind::Csk:
            // A CSK signs the DNSKEY RRset (double-DS) and the zone (pre-publication): the swap waits for
            // both, the removal for the longer of the two retirements.
            p.iret = iv.dsgn + iv.dprp + std::max(iv.ttlSig, iv.ttlKey);
            p.dsAdd = p.newPublish = start;
            p.newActivate = p.oldInactive = start + std::max(p.ipub, p.ipubP);
            p.oldRemove = p.dsRemove = p.oldInactive + p.iret;
            break;
    }
    return p;
}

ZoneTtls zoneTtls(const Zone& z) {
    ZoneTtls t;
    const RRset& soa = z.soa();
    const Rdata& rd = z.rdata(soa.first);
    if (rd.len >= 20) {
        const uint8_t* tail = z.bytes(rd) + rd.len - 20;  // serial refresh retry expire minimum
        t.refresh = get32(tail + 4);
        t.retry = get32(tail + 8);
    }
    t.key = soa.ttl;
    // NSEC and NSEC3 (and the online NODATA of a `none` fallback) have the negative TTL.
    t.sig = z.negativeTtl();
    t.sigWhere = "NSEC/NSEC3: min(SOA TTL, MINIMUM)";
    for (uint32_t i = 0; i < z.nodeCount(); ++i) {
        const Node& n = z.node(i);
        if (n.flags & kNodeOccluded) continue;  // glue: never signed
        const bool cut = n.flags & kNodeDelegation;
        for (const RRset* s = z.rrsetsBegin(n); s != z.rrsetsEnd(n); ++s) {
            if (s->type == kDnskeyType && s->ttl > t.key) t.key = s->ttl;  // kept from the file
            if (cut && s->type != kTypeDS) continue;  // at a cut only DS is signed (RFC 4035 §2.2)
            // The file's own signatures and chains are dropped at signing (gslbd makes its own).
            if (s->type == kTypeRRSIG || s->type == kTypeNSEC || s->type == kTypeNSEC3 ||
                s->type == kTypeNSEC3PARAM)
                continue;
            if (s->ttl > t.sig) {
                t.sig = s->ttl;
                t.sigWhere = nameToText(z.nodeName(n)) + " " + typeText(s->type);
            }
        }
    }
    return t;
}

bool keyLive(const DnssecKey& k, int64_t now) {
    return k.timing.remove == 0 || now < k.timing.remove;
}

KeyKind keyKind(const DnssecKey& k, const std::vector<DnssecKey>& all, int64_t now) {
    if (!k.sep()) return KeyKind::Zsk;
    for (const auto& o : all)
        if (!o.sep() && keyLive(o, now)) return KeyKind::Ksk;
    return KeyKind::Csk;
}

bool rolloverKey(const std::vector<DnssecKey>& keys, KeyKind kind, int64_t now, size_t& index,
                 std::string& error) {
    std::vector<size_t> found;
    for (size_t i = 0; i < keys.size(); ++i) {
        const DnssecKey& k = keys[i];
        if (!keyLive(k, now) || keyKind(k, keys, now) != kind) continue;
        // Any time still to come, or a retirement already set, is a rollover that has not finished.
        const KeyTiming& t = k.timing;
        const char* what = nullptr;
        int64_t at = 0;
        if (t.publish > now)
            what = "is published", at = t.publish;
        else if (t.activate > now)
            what = "becomes active", at = t.activate;
        else if (t.inactive)
            what = t.inactive > now ? "becomes inactive" : "has been inactive since", at = t.inactive;
        else if (t.remove)
            what = "is deleted", at = t.remove;
        if (what) {
            error = fmt::format(
                "a {} rollover is already under way: key {} {} {}; let it finish first (gslbctl dnssec list)",
                kindName(kind), k.tag, what, when(at));
            return false;
        }
        if (!k.active(now)) {
            error = fmt::format("key {} ({}) is not active; nothing to roll", k.tag, kindName(kind));
            return false;
        }
        found.push_back(i);
    }
    if (found.empty()) {
        std::string have;
        for (const auto& k : keys)
            if (keyLive(k, now))
                have +=
                    fmt::format("{}{} {}", have.empty() ? "" : ", ", kindName(keyKind(k, keys, now)), k.tag);
        error = fmt::format("the zone has no {} to roll (its keys: {})", kindName(kind),
                            have.empty() ? "none" : have);
        return false;
    }
    if (found.size() > 1) {
        std::string tags;
        for (size_t i : found) tags += fmt::format("{}{}", tags.empty() ? "" : ", ", keys[i].tag);
        error = fmt::format(
            "the zone has {} active {}s ({}); a rollover replaces one key, so retire the others first",
            found.size(), kindName(kind), tags);
        return false;
    }
    index = found[0];
    return true;
}

std::vector<KeyEvent> keyChanges(const std::vector<DnssecKey>& before, int64_t beforeAt,
                                 const std::vector<DnssecKey>& after, int64_t afterAt) {
    auto find = [](const std::vector<DnssecKey>& keys, const DnssecKey& k) -> const DnssecKey* {
        for (const auto& o : keys)
            if (o.dnskey == k.dnskey) return &o;
        return nullptr;
    };
    std::vector<KeyEvent> out[4];  // published, active, inactive, deleted: in that order
    for (const auto& k : after) {
        const DnssecKey* o = find(before, k);
        bool wasPub = o && o->published(beforeAt), wasAct = o && o->active(beforeAt);
        std::string role = kindName(keyKind(k, after, afterAt));
        if (k.published(afterAt) && !wasPub) out[0].push_back({k.tag, role, "is published"});
        if (k.active(afterAt) && !wasAct) out[1].push_back({k.tag, role, "becomes active"});
        if (!k.active(afterAt) && wasAct) out[2].push_back({k.tag, role, "becomes inactive"});
        if (!k.published(afterAt) && wasPub) out[3].push_back({k.tag, role, "is deleted"});
    }
    for (const auto& o : before) {  // keys whose files are gone
        if (find(after, o)) continue;
        std::string role = kindName(keyKind(o, before, beforeAt));
        if (o.active(beforeAt)) out[2].push_back({o.tag, role, "becomes inactive"});
        if (o.published(beforeAt)) out[3].push_back({o.tag, role, "is deleted"});
    }
    for (int i = 1; i < 4; ++i) out[0].insert(out[0].end(), out[i].begin(), out[i].end());
    return out[0];
}

int64_t nextKeyEvent(const std::vector<DnssecKey>& keys, int64_t now) {
    int64_t next = 0;
    for (const auto& k : keys)
        for (int64_t t : {k.timing.publish, k.timing.activate, k.timing.inactive, k.timing.remove})
            if (t > now && (!next || t < next)) next = t;
    return next;
}

}  // namespace gslb::zones
