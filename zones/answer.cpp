#include "zones/answer.hpp"

#include <cstring>

#include "zones/axfr.hpp"
#include "zones/dnssec.hpp"
#include "zones/serial.hpp"
#include "zones/rrtype.hpp"
#include "zones/writer.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kHeader = 12;
constexpr size_t kOptSize = 11;   // root owner, type, class, TTL, RDLENGTH 0 (RFC 6891 §6.1.2)
constexpr size_t kNsidMax = 255;  // octets of `identity` sent as NSID, as for CH TXT
constexpr int kMaxChase = 16;     // CNAME hops followed inside our zones before we stop
constexpr size_t kMaxExtra = 32;  // distinct names considered for additional-section processing

inline const uint8_t* u8(std::string_view s) {
    return reinterpret_cast<const uint8_t*>(s.data());
}

inline std::string_view sv(const uint8_t* p, size_t n) {
    return {reinterpret_cast<const char*>(p), n};
}

// Writes the header of a response to `q` at the start of `buf` (ID, opcode, RD and CD copied).
void putHeader(uint8_t* buf, uint16_t id, uint8_t opcode, bool rd, bool cd, bool aa, bool tc, uint8_t rcode,
               uint16_t qd, const Writer& w) {
    buf[0] = uint8_t(id >> 8);
    buf[1] = uint8_t(id);
    buf[2] = uint8_t(0x80 | (opcode << 3) | (aa ? 0x04 : 0) | (tc ? 0x02 : 0) | (rd ? 0x01 : 0));
    buf[3] = uint8_t((cd ? 0x10 : 0) | (rcode & 0x0F));
    buf[4] = 0;
    buf[5] = uint8_t(qd);
    buf[6] = uint8_t(w.count(kAnswer) >> 8);
    buf[7] = uint8_t(w.count(kAnswer));
    buf[8] = uint8_t(w.count(kAuthority) >> 8);
    buf[9] = uint8_t(w.count(kAuthority));
    buf[10] = uint8_t(w.count(kAdditional) >> 8);
    buf[11] = uint8_t(w.count(kAdditional));
}

struct Ctx {
    Ctx(const ZoneDb& d, const AnswerOptions& o, const Query& qq, Writer& ww, DynamicHook* h, bool t,
        const Client& cl)
        : db(d), opt(o), q(qq), w(ww), hook(h), tcp(t), client(cl) {}
    const ZoneDb& db;
    const AnswerOptions& opt;
    const Query& q;
    Writer& w;
    DynamicHook* hook;
    bool tcp;
    const Client& client;
    uint8_t scope = 0;  // ECS scope of the answer: the longest any dynamic answer in it depended on
    bool aa = true;
    bool tc = false;
    uint8_t rcode = kRcodeNoError;
    Ede ede;  // RFC 8914: what the response says of its error or of a degraded answer (the first one set)
    // An error response (no AA) with its EDE.
    void fail(uint8_t rc, Ede::Code code) {
        aa = false;
        rcode = rc;
        ede.code = code;
    }
    // What rate limiting counts this response by (AnswerResult::kind, kindName).
    bool referral = false;
    const uint8_t* kindName = nullptr;
    uint8_t kindNameLen = 0;
    void countBy(std::string_view name) {
        kindName = u8(name);
        kindNameLen = uint8_t(name.size());
    }

    // Names that become owners during a CNAME chase; the Writer keeps pointers to them for compression.
    uint8_t chase[kMaxChase + 1][kMaxNameLen];
    uint8_t wildcard[kMaxNameLen];
    struct Extra {
        const Zone* zone;
        uint32_t node;
        bool glue;         // NS targets: glue below a cut is wanted (RFC 1034 §4.3.2 step 3b)
        bool required;     // in-domain glue of a referral (RFC 9471 §3)
        uint16_t svcType;  // SVCB/HTTPS AliasMode target: its RRset of this type goes too (0: none)
    };
    Extra extra[kMaxExtra];
    size_t nextra = 0;
    struct Seen {
        const Zone* zone;
        uint32_t node;
    };
    Seen seen[kMaxChase + 1];
    size_t nseen = 0;

    // Writes one RRset into `s`, all or nothing.
    bool addSet(Section s, const Zone& z, const uint8_t* owner, size_t olen, const RRset& set, uint32_t ttl) {
        auto m = w.mark();
        for (uint32_t i = set.first; i < set.first + set.count; ++i) {
            const Rdata& rd = z.rdata(i);
            if (!w.rr(s, owner, olen, set.type, ttl, z.bytes(rd), rd.len)) {
                w.rollback(m);
                return false;
            }
        }
        return true;
    }
    // DNSSEC (RFC 4035 §3.1): with DO set and a signed zone, the RRSIGs beside every authoritative RRset and
    // the NSEC proofs of denial and of wildcard expansion. Without DO nothing of it is written (§3.1.1).
    bool dnssecOk(const Zone& z) const { return q.ednsDo && z.signer(); }

    // The RRSIGs at node `nodeIdx` covering `type`, written at `owner` with the RRset's TTL.
    bool addSigs(Section s, const Zone& z, uint32_t nodeIdx, const uint8_t* owner, size_t olen, uint16_t type,
                 uint32_t ttl) {
        if (!dnssecOk(z)) return true;
        const RRset* rs = z.rrset(z.node(nodeIdx), kTypeRRSIG);
        if (!rs) return true;
        for (uint32_t i = rs->first; i < rs->first + rs->count; ++i) {
            const Rdata& rd = z.rdata(i);
            const uint8_t* b = z.bytes(rd);
            if (rd.len < 2 || uint16_t(b[0] << 8 | b[1]) != type) continue;
            if (!w.rr(s, owner, olen, kTypeRRSIG, ttl, b, rd.len)) return false;
        }
        return true;
    }
    // must() with the RRset's signatures: both, or TC (RFC 4035 §3.1.1: never the RRset without them).
    bool mustSigned(Section s, const Zone& z, uint32_t nodeIdx, const uint8_t* owner, size_t olen,
                    const RRset& set, uint32_t ttl) {
        if (tc) return false;
        auto m = w.mark();
        if (!addSet(s, z, owner, olen, set, ttl) || !addSigs(s, z, nodeIdx, owner, olen, set.type, ttl)) {
            w.rollback(m);
            tc = true;
            return false;
        }
        return true;
    }

    // NSEC records owed to the authority section (deduplicated), written before anything goes to additional.
    struct Proof {
        const Zone* zone;
        uint32_t node;
    };
    Proof proofs[8];
    size_t nproofs = 0;
    void addProof(const Zone& z, uint32_t node) {
        if (node == kNone) return;
        for (size_t i = 0; i < nproofs; ++i)
            if (proofs[i].zone == &z && proofs[i].node == node) return;
        if (nproofs < 8) proofs[nproofs++] = Proof{&z, node};
    }
    // The node whose NSEC matches or covers `name`: the last owner of the chain at or before it in canonical
    // order (RFC 4034 §6.1), the last one (whose NSEC wraps to the apex) when `name` sorts after every owner.
    uint32_t nsecFor(const Zone& z, const uint8_t* name, size_t len) {
        const auto& chain = z.signer()->chain;
        std::string_view n(reinterpret_cast<const char*>(name), len);
        size_t lo = 0, hi = chain.size();
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (canonicalCompare(z.nodeName(z.node(chain[mid])), n) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (chain.empty()) return kNone;
        return lo == 0 ? chain.back() : chain[lo - 1];
    }
    void writeProofs() {
        for (size_t i = 0; i < nproofs; ++i) {
            const Zone& z = *proofs[i].zone;
            const Node& n = z.node(proofs[i].node);
            const RRset* ns = z.rrset(n, z.signer()->nsec3 ? kTypeNSEC3 : kTypeNSEC);
            std::string_view nm = z.nodeName(n);
            if (ns) mustSigned(kAuthority, z, proofs[i].node, u8(nm), nm.size(), *ns, ns->ttl);
        }
        nproofs = 0;
    }

    // NODATA for a GSLB name whose fallback chose nothing although the zone (and so its NSEC) has records of
    // the type: the NSEC of the name without the type's bit, signed online (doc/dnssec.md: `none`).
    void onlineNsec(const Zone& z, uint32_t nodeIdx, uint16_t type) {
        const bool n3 = z.signer()->nsec3;
        if (n3) nodeIdx = z.signer()->nsec3Match(z.nodeName(z.node(nodeIdx)));  // its NSEC3, at the hash
        if (nodeIdx == kNone) return;
        const uint16_t denialType = n3 ? uint16_t(kTypeNSEC3) : uint16_t(kTypeNSEC);
        const Node& n = z.node(nodeIdx);
        const RRset* ns = z.rrset(n, denialType);
        if (!ns || tc) return;
        const Rdata& rd = z.rdata(ns->first);
        const uint8_t* b = z.bytes(rd);
        // Where the type bit maps start: after the next name (NSEC), after the hash fields (NSEC3).
        size_t nl = 0;
        if (!n3)
            nl = wireNameLen(b, rd.len);
        else if (rd.len >= 5 && size_t(6) + b[4] <= rd.len && size_t(6) + b[4] + b[5 + b[4]] <= rd.len)
            nl = size_t(6) + b[4] + b[5 + b[4]];
        if (!nl || rd.len > 512) return;
        uint8_t nsec[512];
        std::memcpy(nsec, b, rd.len);
        // Clear `type` in its window; drop trailing zero octets and a window left empty (RFC 4034 §4.1.2).
        size_t out = nl;
        for (size_t p = nl; p + 2 <= rd.len;) {
            uint8_t win = b[p], blen = b[p + 1];
            if (blen > 32 || p + 2 + blen > rd.len) return;
            uint8_t bits[32] = {};
            std::memcpy(bits, b + p + 2, blen);
            if (win == (type >> 8) && (type & 0xFF) / 8 < blen)
                bits[(type & 0xFF) / 8] &= uint8_t(~(0x80 >> (type % 8)));
            size_t l = blen;
            while (l > 0 && bits[l - 1] == 0) --l;
            if (l > 0) {
                nsec[out] = win;
                nsec[out + 1] = uint8_t(l);
                std::memcpy(nsec + out + 2, bits, l);
                out += 2 + l;
            }
            p += 2 + blen;
        }
        std::string_view owner = z.nodeName(n);
        auto m = w.mark();
        bool ok = w.rr(kAuthority, u8(owner), owner.size(), denialType, ns->ttl, nsec, out);
        const uint8_t* rds[1] = {nsec};
        uint16_t lens[1] = {uint16_t(out)};
        for (const DnssecKey* k : z.signer()->signers(denialType)) {
            uint8_t sig[18 + kMaxNameLen + 64];
            size_t hl = z.signer()->header(*k, owner, denialType, ns->ttl, sig);
            if (!ok || !z.signer()->onlineSignature(*k, owner, denialType, ns->ttl, rds, lens, 1, sig + hl))
                break;
            ok = w.rr(kAuthority, u8(owner), owner.size(), kTypeRRSIG, ns->ttl, sig, hl + 64);
        }
        if (!ok) {
            w.rollback(m);
            tc = true;
        }
    }

    // A record that must be there: when it does not fit, the message is truncated (RFC 2181 §9).
    // An IXFR's differences over UDP (RFC 1995 §2, §4): new SOA, the changeset's records (old SOA, removed,
    // new SOA, added), new SOA, all in the answer section, or nothing (false) when they do not fit whole.
    bool ixfr(const Zone& z, const IxfrPlan& plan) {
        if (plan.style != XfrStyle::Incremental) return false;
        const Rdata& soa = z.rdata(z.soa().first);
        const uint8_t* apex = u8(z.apex());
        auto m = w.mark();
        bool ok = w.rr(kAnswer, apex, z.apex().size(), kTypeSOA, z.soa().ttl, z.bytes(soa), soa.len);
        DiffReader rd(plan.diff->records);
        DiffRecord r;
        while (ok && rd.next(r))
            ok = w.rr(kAnswer, u8(r.owner), r.owner.size(), r.type, r.ttl, u8(r.rdata), r.rdata.size());
        ok = ok && w.rr(kAnswer, apex, z.apex().size(), kTypeSOA, z.soa().ttl, z.bytes(soa), soa.len);
        if (!ok) w.rollback(m);
        return ok;
    }

    bool must(Section s, const Zone& z, const uint8_t* owner, size_t olen, const RRset& set, uint32_t ttl) {
        if (tc) return false;
        if (!addSet(s, z, owner, olen, set, ttl)) {
            tc = true;
            return false;
        }
        return true;
    }

    // `depth` bounds how far AliasMode SVCB/HTTPS records are followed (each alias target's own RRset
    // goes in the additional section, and the names it targets are noted in turn).
    void noteTargets(const Zone& z, const RRset& set, bool glue, std::string_view requiredUnder = {},
                     int depth = 0) {
        const bool svc = set.type == kTypeSVCB || set.type == kTypeHTTPS;
        for (uint32_t i = set.first; i < set.first + set.count; ++i) {
            const Rdata& rd = z.rdata(i);
            uint32_t t = rd.target;
            if (t == kNone) continue;
            // RFC 9460 §2.4.2: SvcPriority 0 is AliasMode; the client asks the target for this type next
            // (§4.1: the server SHOULD add it). A ServiceMode target is an endpoint: its addresses only.
            const bool alias = svc && z.bytes(rd)[0] == 0 && z.bytes(rd)[1] == 0;
            size_t k = 0;
            while (k < nextra && !(extra[k].zone == &z && extra[k].node == t)) ++k;
            if (k == nextra) {
                if (nextra == kMaxExtra) continue;
                bool req = !requiredUnder.empty() && isSubdomain(z.nodeName(z.node(t)), requiredUnder);
                extra[nextra++] = Extra{&z, t, glue, req, 0};
            }
            if (!alias || extra[k].svcType == set.type) continue;
            extra[k].svcType = set.type;
            const RRset* next = z.rrset(z.node(t), set.type);
            if (next && depth < kMaxChase) noteTargets(z, *next, false, {}, depth + 1);
        }
    }

    // RRsets already in the answer section are not repeated in the additional section (NSD and BIND alike).
    struct Written {
        const Zone* zone;
        uint32_t node;
        uint16_t type;
    };
    Written answered[kMaxChase + 2];
    size_t nanswered = 0;
    void noteAnswered(const Zone& z, uint32_t node, uint16_t type) {
        if (nanswered < kMaxChase + 2) answered[nanswered++] = Written{&z, node, type};
    }
    bool inAnswer(const Zone* z, uint32_t node, uint16_t type) const {
        for (size_t i = 0; i < nanswered; ++i)
            if (answered[i].zone == z && answered[i].node == node && answered[i].type == type) return true;
        return false;
    }

    void writeExtra() {
        if (nextra == 0 && nproofs == 0) return;  // most answers: nothing to add
        writeProofs();                            // authority comes before additional
        // A records of every target first, then AAAA: the order NSD uses, and the one that keeps the most
        // useful addresses when space runs short.
        for (uint16_t type : {uint16_t(kTypeA), uint16_t(kTypeAAAA)}) {
            for (size_t k = 0; k < nextra; ++k) {
                const Zone& z = *extra[k].zone;
                const Node& n = z.node(extra[k].node);
                if ((n.flags & kNodeOccluded) && !extra[k].glue) continue;
                if (n.dynamic >= 0) continue;  // a GSLB name: its address is chosen per query, not here
                const RRset* s = z.rrset(n, type);
                if (!s || inAnswer(&z, extra[k].node, type)) continue;
                std::string_view nm = z.nodeName(n);
                if (!addSet(kAdditional, z, u8(nm), nm.size(), *s, s->ttl) && extra[k].required) tc = true;
            }
        }
        // Then the SVCB/HTTPS RRsets of AliasMode targets (RFC 9460 §4.1), the least needed: a client that
        // misses one asks for it.
        for (size_t k = 0; k < nextra; ++k) {
            if (!extra[k].svcType) continue;
            const Zone& z = *extra[k].zone;
            const Node& n = z.node(extra[k].node);
            if (n.flags & kNodeOccluded) continue;
            const RRset* s = z.rrset(n, extra[k].svcType);
            if (!s || inAnswer(&z, extra[k].node, extra[k].svcType)) continue;
            std::string_view nm = z.nodeName(n);
            addSet(kAdditional, z, u8(nm), nm.size(), *s, s->ttl);
        }
    }

    void writeSoa(const Zone& z) {
        std::string_view apex = z.apex();
        mustSigned(kAuthority, z, z.apexNode(), u8(apex), apex.size(), z.soa(), z.negativeTtl());
    }

    void writeReferral(const Zone& z, uint32_t cut) {
        const Node& n = z.node(cut);
        std::string_view nm = z.nodeName(n);
        const RRset* ns = z.rrset(n, kTypeNS);
        if (!must(kAuthority, z, u8(nm), nm.size(), *ns, ns->ttl)) return;
        // A signed parent proves the child secure (DS and its RRSIG) or insecure (the cut's NSEC, no DS bit:
        // RFC 4035 §3.1.4); the NS and glue are the child's and stay unsigned.
        if (dnssecOk(z)) {
            const RRset* ds = z.rrset(n, kTypeDS);
            if (ds) {
                if (!mustSigned(kAuthority, z, cut, u8(nm), nm.size(), *ds, ds->ttl)) return;
            } else if (z.signer()->nsec3) {
                addProof(z, z.signer()->nsec3Match(nm));  // RFC 5155 §7.2.7 (no opt-out)
                writeProofs();
            } else if (const RRset* nsec = z.rrset(n, kTypeNSEC)) {
                if (!mustSigned(kAuthority, z, cut, u8(nm), nm.size(), *nsec, nsec->ttl)) return;
            }
        }
        noteTargets(z, *ns, true, nm);
    }

    // Positive answers carry the zone's NS RRset in authority when it fits (NSD and BIND do; it is optional).
    void apexNs(const Zone& z) {
        const Node& apex = z.node(z.apexNode());
        const RRset* ns = z.rrset(apex, kTypeNS);
        std::string_view nm = z.apex();
        if (!ns || tc) return;
        auto m = w.mark();
        if (addSet(kAuthority, z, u8(nm), nm.size(), *ns, ns->ttl) &&
            addSigs(kAuthority, z, z.apexNode(), u8(nm), nm.size(), kTypeNS, ns->ttl))
            noteTargets(z, *ns, true);
        else
            w.rollback(m);
    }

    // A GSLB name's A or AAAA records: what the hook chose. False when it chose nothing (NODATA).
    bool dynamicAnswer(const Zone& z, const Node& n, const uint8_t* owner, size_t olen, uint16_t type) {
        DynAnswer da;
        hook->select(n.dynamic, type, z, z.rrset(n, type), client, da);
        if (da.scope > scope) scope = da.scope;
        if (da.ede.set() && !ede.set()) ede = da.ede;  // e.g. the all-down fallback answered
        if (da.count == 0) return false;
        auto m = w.mark();
        for (uint16_t i = 0; i < da.count; ++i)
            if (!w.rr(kAnswer, owner, olen, type, da.ttl, da.recs[i].data, da.recs[i].len)) {
                w.rollback(m);
                tc = true;
                return true;
            }
        if (dnssecOk(z)) {
            // The chosen RRset's own signature, made once per distinct set and then cached
            // (zones/dnssec.hpp).
            const ZoneSigner& sg = *z.signer();
            std::string_view signOwner = z.nodeName(n);
            const uint8_t* rds[kMaxDynRecords];
            uint16_t lens[kMaxDynRecords];
            for (uint16_t i = 0; i < da.count; ++i) {
                rds[i] = da.recs[i].data;
                lens[i] = da.recs[i].len;
            }
            for (const DnssecKey* k : sg.signers(type)) {
                uint8_t sig[18 + kMaxNameLen + 64];
                size_t hl = sg.header(*k, signOwner, type, da.ttl, sig);
                if (!sg.onlineSignature(*k, signOwner, type, da.ttl, rds, lens, da.count, sig + hl)) continue;
                if (!w.rr(kAnswer, owner, olen, kTypeRRSIG, da.ttl, sig, hl + 64)) {
                    w.rollback(m);
                    tc = true;
                    return true;
                }
            }
        }
        return true;
    }

    enum class Kind { Exact, Wildcard, NxDomain, Referral, Dname };

    // RFC 1034 §4.3.2 step 3 with RFC 4592 §3.3.1: walk down from the apex; the first zone cut met is a
    // referral (except a DS query for the cut itself, answered from this, the parent, side: RFC 4035
    // §3.1.4.1); otherwise an exact match, or the source of synthesis *.<closest encloser>, or NXDOMAIN.
    uint32_t ce = kNone;                  // the closest encloser of the last NXDOMAIN or wildcard lookup
    size_t wildcardLen = 0;               // octets of `wildcard` (*.<closest encloser>) when it was built
    const uint8_t* nextCloser = nullptr;  // the closest encloser plus one label of the name (RFC 5155 §1.3)
    size_t nextCloserLen = 0;
    Kind lookup(const Zone& z, const uint8_t* name, size_t len, uint32_t& node) {
        wildcardLen = 0;
        // The QNAME's label offsets are known from the parse; a name met while chasing is walked here.
        uint8_t offBuf[kMaxLabels];
        const uint8_t* off = q.labelOff;
        size_t n = q.labels;
        if (name != q.lower) {
            n = 0;
            for (size_t p = 0; p < len && name[p] != 0; p += size_t(name[p]) + 1) offBuf[n++] = uint8_t(p);
            off = offBuf;
        }
        size_t apexLabels = n - z.apexLabels();
        uint32_t cur = z.apexNode();
        if (apexLabels > 0 && (z.node(cur).flags & kNodeDname)) {
            node = cur;  // RFC 6672 §3.3: a DNAME strictly above the name redirects it
            return Kind::Dname;
        }
        for (size_t i = apexLabels; i-- > 0;) {
            uint32_t idx = z.find({reinterpret_cast<const char*>(name) + off[i], len - off[i]});
            if (idx == kNone) {
                // cur is the closest encloser; its wildcard child, if any, is the source of synthesis.
                std::string_view cen = z.nodeName(z.node(cur));
                this->ce = cur;
                nextCloser = name + off[i];
                nextCloserLen = len - off[i];
                wildcard[0] = 1;
                wildcard[1] = '*';
                if (cen.size() > kMaxNameLen - 2) return Kind::NxDomain;
                std::memcpy(wildcard + 2, cen.data(), cen.size());
                wildcardLen = cen.size() + 2;
                uint32_t wc = z.find({reinterpret_cast<const char*>(wildcard), cen.size() + 2});
                if (wc == kNone) return Kind::NxDomain;
                node = wc;
                return Kind::Wildcard;
            }
            cur = idx;
            if ((z.node(cur).flags & kNodeDelegation) && !(i == 0 && q.qtype == kTypeDS)) {
                node = cur;
                return Kind::Referral;
            }
            if (i > 0 && (z.node(cur).flags & kNodeDname)) {
                node = cur;
                return Kind::Dname;
            }
        }
        node = cur;
        return Kind::Exact;
    }

    void writeAny(const Zone& z, uint32_t nodeIdx, const Node& n, const uint8_t* owner, size_t olen) {
        if (n.setCount == 0) {
            writeSoa(z);
            return;
        }
        // RFC 8482 §4.1: one RRset of the name answers ANY, on every transport. The SOA at an apex (as NSD),
        // else the first RRset by type.
        const RRset* s = z.rrset(n, kTypeSOA);
        if (!s) s = z.rrsetsBegin(n);
        // A GSLB name answers ANY with the address it would give for A (or AAAA), never every candidate.
        if (n.dynamic >= 0 && hook && (s->type == kTypeA || s->type == kTypeAAAA)) {
            if (!dynamicAnswer(z, n, owner, olen, s->type)) writeSoa(z);
            return;
        }
        mustSigned(kAnswer, z, nodeIdx, owner, olen, *s, s->ttl);
    }

    void resolve() {
        resolveChain();
        writeProofs();  // for the paths that end without additional data
    }

    // RFC 1034 §4.3.2 from step 2: the zone, then the name and each CNAME or DNAME target in turn (at most
    // kMaxChase hops, every RR once) until a referral, a name error, the answer or NODATA.
    void resolveChain() {
        const uint8_t* name = q.lower;
        size_t len = q.qnameLen;
        const Zone* z = zoneForQuery();
        if (!z) {
            fail(kRcodeRefused, Ede::kNotAuthoritative);  // RFC 8914 §4.21
            return;
        }
        for (int hop = 0;; ++hop) {
            uint32_t node = kNone;
            Kind k = lookup(*z, name, len, node);
            if (hop == 0) countFirst(*z, k, node);
            if (k == Kind::Referral) {
                if (hop == 0) aa = false;
                writeReferral(*z, node);
                writeExtra();
                return;
            }
            if (k == Kind::NxDomain) {
                nameError(*z, name, len);
                return;
            }
            if (k == Kind::Wildcard && dnssecOk(*z)) wildcardProof(*z, name, len);
            if (k == Kind::Dname) {
                if (!followDname(z, node, hop, name, len)) return;
                continue;
            }
            const Node& n = z->node(node);
            if (q.qtype == kTypeANY) {
                writeAny(*z, node, n, name, len);
                return;
            }
            const RRset* cname = z->rrset(n, kTypeCNAME);
            if (cname && q.qtype != kTypeCNAME) {
                if (!followCname(z, node, *cname, hop, name, len)) return;
                continue;
            }
            answerNode(*z, node, name, len, k == Kind::Wildcard);
            return;
        }
    }

    // The zone of the QNAME, or for DS at a zone's apex the parent's when we serve it; nullptr: none of ours.
    const Zone* zoneForQuery() {
        const uint8_t* name = q.lower;
        size_t len = q.qnameLen;
        const Zone* z = db.findZone(q.lower, q.qnameLen, q.labelOff, q.labels);
        if (z && q.qtype == kTypeDS && len == z->apex().size() && len > 1) {
            // DS lives on the parent side of a cut (RFC 4035 §2.4): answer from the parent if we serve it.
            const Zone* parent =
                db.findZone({reinterpret_cast<const char*>(name) + name[0] + 1, len - name[0] - 1});
            if (parent) z = parent;
        }
        return z;
    }

    // Counts the query for RRL and the statistics by the first name looked up (and notes a referral).
    void countFirst(const Zone& z, Kind k, uint32_t node) {
        // A name a DNAME redirects counts by the DNAME's owner, as a wildcard's does by the wildcard:
        // a flood of random names under it is one flood.
        if (k == Kind::Referral || k == Kind::Exact || k == Kind::Wildcard || k == Kind::Dname)
            countBy(z.nodeName(z.node(node)));
        else
            countBy(z.apex());
        referral = k == Kind::Referral;
    }

    // A name error (NXDOMAIN), also at the end of a CNAME chain: the SOA, and the denial proofs when signed.
    void nameError(const Zone& z, const uint8_t* name, size_t len) {
        rcode = kRcodeNxDomain;  // also at the end of a CNAME chain (RFC 6604 §3)
        countBy(z.apex());
        writeSoa(z);
        if (dnssecOk(z) && z.signer()->nsec3) {
            // RFC 5155 §7.2.2: the closest encloser proof, and no wildcard at the closest encloser.
            const ZoneSigner& sg = *z.signer();
            if (ce != kNone) addProof(z, sg.nsec3Match(z.nodeName(z.node(ce))));
            if (nextCloser) addProof(z, sg.nsec3Cover(sv(nextCloser, nextCloserLen)));
            if (wildcardLen) addProof(z, sg.nsec3Cover(sv(wildcard, wildcardLen)));
        } else if (dnssecOk(z)) {
            // RFC 4035 §3.1.3.2: no such name, and no wildcard at the closest encloser to expand.
            addProof(z, nsecFor(z, name, len));
            if (wildcardLen) addProof(z, nsecFor(z, wildcard, wildcardLen));
        }
    }

    // An answer synthesised from a wildcard, signed: the proof that the name itself does not exist.
    void wildcardProof(const Zone& z, const uint8_t* name, size_t len) {
        if (!z.signer()->nsec3)
            addProof(z, nsecFor(z, name, len));  // §3.1.3.3: the name itself does not exist
        else if (nextCloser)
            addProof(z, z.signer()->nsec3Cover(sv(nextCloser, nextCloserLen)));  // RFC 5155 §7.2.6
    }

    // A DNAME at `node`: written, with the CNAME it synthesises; `name`, `len` and `z` move to the new
    // name. False when the chain ends here (a loop, a name too long: YXDOMAIN, a CNAME query, the hop
    // limit, a name outside our zones, a signature that does not fit).
    bool followDname(const Zone*& z, uint32_t node, int hop, const uint8_t*& name, size_t& len) {
        // RFC 6672 §3.3 step 3c: the DNAME, then a CNAME from the name to the name with the DNAME's
        // owner replaced by its target (TTL the DNAME's), then on with the new name like a CNAME.
        for (size_t i = 0; i < nseen; ++i)
            if (seen[i].zone == z && seen[i].node == node) return false;  // a loop: every RR once
        seen[nseen++] = Seen{z, node};
        const Node& dn = z->node(node);
        const RRset* dname = z->rrset(dn, kTypeDNAME);
        std::string_view owner = z->nodeName(dn);
        if (!mustSigned(kAnswer, *z, node, u8(owner), owner.size(), *dname, dname->ttl)) return false;
        const Rdata& rd = z->rdata(dname->first);
        size_t tl = wireNameLen(z->bytes(rd), rd.len);
        if (!tl) return false;
        size_t prefix = len - owner.size();  // the labels of the name below the owner
        if (tl > kMaxNameLen - prefix) {
            rcode = kRcodeYxDomain;  // §2.2: the substituted name would exceed 255 octets
            return false;
        }
        std::memcpy(chase[hop], name, prefix);
        std::memcpy(chase[hop] + prefix, z->bytes(rd), tl);
        lowerName(chase[hop], prefix + tl);
        if (!w.rr(kAnswer, name, len, kTypeCNAME, dname->ttl, chase[hop], prefix + tl)) {
            tc = true;
            return false;
        }
        if (hop == kMaxChase || q.qtype == kTypeCNAME) return false;  // a CNAME query has its answer
        name = chase[hop];
        len = prefix + tl;
        const Zone* next = db.findZone({reinterpret_cast<const char*>(name), len});
        if (!next) return false;  // leaves our zones: the resolver follows it
        z = next;
        return true;
    }

    // A CNAME at `node` (not asked for): written; `name`, `len` and `z` move to its target. False when the
    // chain ends here (a loop, the hop limit, a bad target, a name outside our zones, a signature that does
    // not fit).
    bool followCname(const Zone*& z, uint32_t node, const RRset& cname, int hop, const uint8_t*& name,
                     size_t& len) {
        for (size_t i = 0; i < nseen; ++i)
            if (seen[i].zone == z && seen[i].node == node) return false;  // a loop: every RR once
        seen[nseen++] = Seen{z, node};
        if (!mustSigned(kAnswer, *z, node, name, len, cname, cname.ttl)) return false;
        if (hop == kMaxChase) return false;
        const Rdata& rd = z->rdata(cname.first);
        size_t tl = wireNameLen(z->bytes(rd), rd.len);
        if (!tl) return false;
        std::memcpy(chase[hop], z->bytes(rd), tl);
        lowerName(chase[hop], tl);
        name = chase[hop];
        len = tl;
        const Zone* next = db.findZone({reinterpret_cast<const char*>(name), len});
        if (!next) return false;  // leaves our zones: the resolver follows it
        z = next;
        return true;
    }

    // The end of the chain at `node`: the RRset asked for (or the GSLB answer), else NODATA with its proofs;
    // then the authority and additional data.
    void answerNode(const Zone& z, uint32_t node, const uint8_t* name, size_t len, bool viaWildcard) {
        const Node& n = z.node(node);
        bool answered = false;
        bool onlineDenial = false;
        if (n.dynamic >= 0 && hook && (q.qtype == kTypeA || q.qtype == kTypeAAAA)) {
            answered = dynamicAnswer(z, n, name, len, q.qtype);
            onlineDenial = !answered && z.rrset(n, q.qtype);
        } else if (const RRset* s = z.rrset(n, q.qtype)) {
            if (!mustSigned(kAnswer, z, node, name, len, *s, s->ttl)) return;
            noteAnswered(z, node, q.qtype);
            // RFC 1034 §3.6 / RFC 2782 / RFC 9460 §4.1: additional processing for NS, MX, SRV, SVCB and
            // HTTPS targets (not CNAME).
            if (q.qtype == kTypeNS || q.qtype == kTypeMX || q.qtype == kTypeSRV || q.qtype == kTypeSVCB ||
                q.qtype == kTypeHTTPS)
                noteTargets(z, *s, q.qtype == kTypeNS);
            answered = true;
        }
        if (!answered) {
            writeSoa(z);  // NODATA (RFC 2308 §2.2), also for empty non-terminals
            if (dnssecOk(z) && z.signer()->nsec3) {
                // RFC 5155 §7.2.3 (the name's NSEC3, empty non-terminals too), §7.2.5 (wildcard: the
                // closest encloser's and the wildcard's; the next closer's cover was added above).
                const ZoneSigner& sg = *z.signer();
                if (onlineDenial)
                    onlineNsec(z, node, q.qtype);
                else
                    addProof(z, sg.nsec3Match(z.nodeName(n)));
                if (viaWildcard && ce != kNone) addProof(z, sg.nsec3Match(z.nodeName(z.node(ce))));
            } else if (dnssecOk(z)) {
                if (onlineDenial)
                    onlineNsec(z, node, q.qtype);
                else if (z.rrset(n, kTypeNSEC))
                    addProof(z, node);  // §3.1.3.1: the name's NSEC, without the type
                else
                    addProof(z, nsecFor(z, name, len));  // an empty non-terminal: covered
            }
            return;
        }
        if (tc) return;
        // The zone's NS RRset goes in authority, except when it is the answer, or for DS (which belongs
        // to the parent side of a cut, where the child's NS would mislead; NSD does the same).
        if (!opt.minimalResponses && !(q.qtype == kTypeNS && node == z.apexNode()) && q.qtype != kTypeDS)
            apexNs(z);
        writeExtra();
    }

    // CH class: the RFC 4892 identity names and the version.bind convention, when configured.
    void chaos() {
        static const uint8_t kVersionBind[] = "\7version\4bind";
        static const uint8_t kVersionServer[] = "\7version\6server";
        static const uint8_t kIdServer[] = "\2id\6server";
        static const uint8_t kHostnameBind[] = "\10hostname\4bind";
        auto is = [&](const uint8_t* n, size_t sz) {
            return q.qnameLen == sz && std::memcmp(q.lower, n, sz) == 0;
        };
        const std::string* text = nullptr;
        if (is(kVersionBind, sizeof kVersionBind) || is(kVersionServer, sizeof kVersionServer))
            text = &opt.version;
        else if (is(kIdServer, sizeof kIdServer) || is(kHostnameBind, sizeof kHostnameBind))
            text = &opt.identity;
        if (!text) {
            fail(kRcodeRefused, Ede::kNotAuthoritative);  // no other CH name is ours
            return;
        }
        if (text->empty()) {
            fail(kRcodeRefused,
                 Ede::kProhibited);  // the operator chose not to tell (identity / version unset)
            return;
        }
        if (q.qtype != kTypeTXT && q.qtype != kTypeANY) return;  // NODATA
        uint8_t rd[256];
        size_t l = std::min<size_t>(text->size(), 255);
        rd[0] = uint8_t(l);
        std::memcpy(rd + 1, text->data(), l);
        if (!w.rr(kAnswer, q.lower, q.qnameLen, kTypeTXT, 0, rd, l + 1, kClassCH)) tc = true;
    }
};

// The EDNS options of one response (RFC 6891 §6.1.2), decided before the answer is written so that their
// room is kept free in the message.
struct EdnsReply {
    const uint8_t* nsid = nullptr;  // RFC 5001 §2.1: our NSID payload
    size_t nsidLen = 0;
    uint8_t cookie[kClientCookieLen + kServerCookieMax];  // RFC 7873 §4: client cookie + server cookie
    size_t cookieLen = 0;
    const ClientSubnet* ecs = nullptr;  // RFC 7871 §7.2.1: the query's ECS prefix, echoed with our scope
    uint8_t ecsScope = 0;

    Ede ede;  // RFC 8914: decided last (by the answer), so its room is checked when the OPT is written

    size_t size() const {
        return kOptSize + (nsid ? 4 + nsidLen : 0) + (cookieLen ? 4 + cookieLen : 0) +
               (ecs ? 8 + (size_t(ecs->bits) + 7) / 8 : 0) + ede.size();
    }
    // The EDE goes when the OPT record would not fit in `limit` with it (RFC 8914 §3: the option is
    // advisory; the message is never truncated or made malformed for it).
    void fitEde(size_t written, size_t limit) {
        if (ede.set() && (written > limit || size() > limit - written)) ede = {};
    }
};

// Octets answer() keeps free for the TSIG RR of a signed query's response: about the request's own, with a
// MAC of up to 64 octets and 6 of Other Data (BADTIME). Bounded, so that a huge request record cannot
// swallow the message.
size_t tsigRoom(const Query& q, std::span<const uint8_t> query) {
    return q.tsigAt ? std::min<size_t>(query.size() - q.tsigAt, 300) + 70 : 0;
}

// NSID: sent when asked for and configured (RFC 5001 §2.1; a server may always decline).
void decideNsid(const AnswerOptions& opt, const Query& q, EdnsReply& r) {
    if (!q.nsid || !opt.nsid || opt.identity.empty()) return;
    r.nsid = u8(opt.identity);
    r.nsidLen = std::min(opt.identity.size(), kNsidMax);
}

// COOKIE (RFC 7873 §5.2): what the query's cookie is worth, and the one the reply carries: the client cookie
// echoed with the server cookie of the query when it is valid and recent, else with a fresh one.
Cookie decideCookie(const AnswerOptions& opt, const Query& q, const ClientInfo& ci, EdnsReply& r) {
    if (!q.cookie || !opt.cookies || !ci.source) return Cookie::None;
    Cookie verdict = Cookie::ClientOnly;
    bool renew = true;
    if (q.cookieLen > kClientCookieLen) {
        bool ok = opt.cookies->check(q.cookie, q.cookie + kClientCookieLen, q.cookieLen - kClientCookieLen,
                                     ci, renew);
        verdict = ok ? Cookie::Valid : Cookie::Invalid;
        if (!ok) renew = true;
    }
    std::memcpy(r.cookie, q.cookie, kClientCookieLen);
    if (renew) {
        r.cookieLen = kClientCookieLen + opt.cookies->make(q.cookie, ci, r.cookie + kClientCookieLen);
    } else {
        std::memcpy(r.cookie + kClientCookieLen, q.cookie + kClientCookieLen, q.cookieLen - kClientCookieLen);
        r.cookieLen = q.cookieLen;
    }
    return verdict;
}

// The OPT record of a response (RFC 6891 §6.1.2): our payload size, the upper bits of the RCODE, DO copied,
// then the options of `r`. Written with the limit lifted: every path that can fill the message kept its room
// free (EdnsReply::size()); should it not fit all the same, the message goes without it.
void putOpt(Writer& w, size_t cap, const AnswerOptions& opt, const Query& q, uint8_t rcode,
            const EdnsReply& r = {}) {
    w.setLimit(cap);
    auto m = w.mark();
    size_t rdlen = r.size() - kOptSize;
    uint8_t o[kOptSize] = {0,
                           0,
                           kTypeOPT,
                           uint8_t(opt.udpPayloadMax >> 8),
                           uint8_t(opt.udpPayloadMax),
                           uint8_t(rcode >> 4),
                           0,
                           uint8_t(q.ednsDo ? 0x80 : 0),
                           0,
                           uint8_t(rdlen >> 8),
                           uint8_t(rdlen)};
    bool ok = w.bytes(o, kOptSize);
    if (ok && r.nsid) ok = w.u16(kOptNsid) && w.u16(uint16_t(r.nsidLen)) && w.bytes(r.nsid, r.nsidLen);
    if (ok && r.cookieLen)
        ok = w.u16(kOptCookie) && w.u16(uint16_t(r.cookieLen)) && w.bytes(r.cookie, r.cookieLen);
    if (ok && r.ecs) {
        uint8_t ecs[kEcsMaxSize];
        ok = w.bytes(ecs, writeEcs(*r.ecs, r.ecsScope, ecs));
    }
    if (ok && r.ede.set())
        ok = w.u16(kOptEde) && w.u16(uint16_t(2 + r.ede.text.size())) && w.u16(uint16_t(r.ede.code)) &&
             w.bytes(r.ede.text.data(), r.ede.text.size());
    if (ok)
        w.addCount(kAdditional);
    else
        w.rollback(m);
}

// A reply that carries no records: the header (ID, opcode, RD and CD copied), the question only when exactly
// one was sent and it parsed (QDCOUNT says which), an OPT with the options of `er` when the query had a sound
// one (RFC 6891 §7). FORMERR, NOTIMP, REFUSED to a transfer and the cookie-only reply share it. `out` must
// hold 512 octets. Its EDE is kept when the reply fits 512 octets with it and room for a TSIG RR: an error
// may go to a UDP client whose size we did not check. Fills res.len, res.rcode, res.questionEnd, res.optStart
// (for slip()) and res.ede.
void errorReply(const Query& q, std::span<const uint8_t> query, std::span<uint8_t> out,
                const AnswerOptions& opt, uint8_t rcode, AnswerResult& res, EdnsReply er = {}) {
    res.rcode = rcode;
    res.len = 0;
    Writer w(out.data(), out.size());
    uint8_t zero[kHeader] = {};
    if (!w.bytes(zero, kHeader)) return;
    bool echo = q.questionOk && q.questionEnd >= kHeader && q.questionEnd <= query.size() &&
                w.bytes(query.data() + kHeader, q.questionEnd - kHeader);
    res.questionEnd = w.size();
    if (q.edns) {
        size_t room = tsigRoom(q, query);
        er.fitEde(w.size(), room < 512 ? 512 - room : 0);
        res.optStart = w.size();
        putOpt(w, out.size(), opt, q, rcode, er);
        if (w.size() == res.optStart) res.optStart = 0;
        if (res.optStart) res.ede = er.ede.code;
    }
    putHeader(out.data(), q.id, q.opcode, q.rd, q.cd, false, false, rcode, echo ? 1 : 0, w);
    res.len = w.size();
}

}  // namespace

size_t refuse(const AnswerOptions& options, std::span<const uint8_t> query, std::span<uint8_t> out,
              uint8_t rcode, Ede ede) noexcept {
    Query q;
    if (parseQuery(query, q) == ParseStatus::Drop) return 0;
    AnswerResult res;
    EdnsReply er;
    er.ede = ede;
    errorReply(q, query, out, options, rcode, res, er);
    return res.len;
}

namespace {

ResponseKind classify(const Ctx& c) {
    if (c.rcode == kRcodeNxDomain) return ResponseKind::NxDomain;
    if (c.rcode != kRcodeNoError) return ResponseKind::Error;
    if (c.referral) return ResponseKind::Referral;
    return c.w.count(kAnswer) ? ResponseKind::Answer : ResponseKind::NoData;
}

// Where the client is (RFC 7871 §7.1.1): the ECS prefix when it was sent and is used (`useEcs`) and valid,
// else the packet's source.
Client clientOf(const Query& q, const ClientInfo& info, bool useEcs) {
    Client client;
    client.resolver = subnetOf(info.source);
    if (useEcs && q.ecsValid) {
        client.subnet = q.ecs.subnet;
        client.fromEcs = true;
    } else {
        client.subnet = client.resolver;
    }
    return client;
}

// The largest response: 65535 octets over TCP; over UDP 512, or the EDNS payload size asked for up to
// udp_payload_max (RFC 6891 §6.2.5); never more than `room`.
size_t responseLimit(const AnswerOptions& opt, const Query& q, bool tcp, size_t room) {
    size_t limit = 65535;
    if (!tcp) {
        limit = 512;
        if (q.edns) limit = std::max<size_t>(512, std::min<size_t>(q.ednsSize, opt.udpPayloadMax));
    }
    return std::min(limit, room);
}

// An AXFR or IXFR query: refused when QNAME is not a zone apex of ours; an AXFR over TCP left to the
// server (Action::Transfer; true: `res` is complete); over UDP an IXFR's differences or the SOA, and AXFR
// refused. False: the response is written in `c`.
bool transfer(Ctx& c, const ZoneDb& db, const Query& q, std::span<const uint8_t> query, bool tcp,
              const ClientInfo& info, AnswerResult& res) {
    const Zone* z = db.zone({reinterpret_cast<const char*>(q.lower), q.qnameLen});
    if (!z) {
        // Not a zone apex of ours (RFC 5936 §2.2.1).
        c.fail(db.findZone(q.lower, q.qnameLen, q.labelOff, q.labels) ? kRcodeNotAuth : kRcodeRefused,
               Ede::kNotAuthoritative);
    } else if (tcp) {
        res.action = Action::Transfer;
        res.zone = z;
        res.rcode = kRcodeNoError;
        return true;
    } else if (q.qtype == kTypeIXFR) {
        // RFC 1995 §2: over UDP, the differences when they fit in one datagram, else the SOA alone,
        // which tells a client that is behind to ask again over TCP (and one that is not that it is
        // up to date). Differences are zone data: only a client the server admitted gets them
        // (info.transferAllowed); for any other request the journal could answer, Action::Transfer asks
        // the server to decide, with the SOA-only answer already written. The check is cheap (no
        // condensation) until the client is admitted.
        std::string_view apex = z->apex();
        c.countBy(apex);
        std::optional<uint32_t> from = ixfrRequestSerial(query, q);
        const Journal* j = z->journal();
        bool behind =
            from && serialGreater(z->serial(), *from) && j && j->serial == z->serial() && j->covers(*from);
        bool wrote = false;
        if (behind && info.transferAllowed) {
            wrote = c.ixfr(*z, planIxfr(*z, *from));
        } else if (behind) {
            res.action = Action::Transfer;
            res.zone = z;
        }
        if (!wrote)
            c.must(kAnswer, *z, reinterpret_cast<const uint8_t*>(apex.data()), apex.size(), z->soa(),
                   z->soa().ttl);
    } else {
        c.fail(kRcodeNotImp, Ede::kNotSupported);  // AXFR is a TCP-only exchange (RFC 5936 §4.2)
    }
    return false;
}

}  // namespace

AnswerResult answer(const ZoneDb& db, const AnswerOptions& opt, std::span<const uint8_t> query, bool tcp,
                    std::span<uint8_t> out, DynamicHook* hook, const ClientInfo& info) noexcept {
    AnswerResult res;
    Query q;
    ParseStatus st = parseQuery(query, q);
    if (st == ParseStatus::Drop) {
        res.action = Action::Drop;
        return res;
    }
    res.qtype = q.qtype;
    res.tsigAt = q.tsigAt;
    res.padding = q.padding;
    if (st == ParseStatus::CookieOnly) {
        // RFC 7873 §5.4: no question, only a COOKIE option: the reply is the cookie, NOERROR when the query
        // held no server cookie or a valid one, BADCOOKIE when it held one we did not make.
        EdnsReply er;
        res.cookie = decideCookie(opt, q, info, er);
        if (res.cookie != Cookie::None) {
            errorReply(q, query, out, opt, res.cookie == Cookie::Invalid ? kRcodeBadCookie : kRcodeNoError,
                       res, er);
            return res;
        }
        st = ParseStatus::FormErr;  // cookies are off: a query without a question
    }
    if (st != ParseStatus::Ok) {
        // Nothing of a message we cannot process is trusted beyond what parsed: at most its one question.
        // An opcode we do not serve (NOTIFY to a primary, UPDATE, …) is Not Supported (RFC 8914 §4.22);
        // no code fits a FORMERR (§4: none is about the query's form).
        EdnsReply er;
        if (st == ParseStatus::NotImp) er.ede.code = Ede::kNotSupported;
        errorReply(q, query, out, opt, st == ParseStatus::NotImp ? kRcodeNotImp : kRcodeFormErr, res, er);
        return res;
    }
    Writer w(out.data(), out.size());
    uint8_t zero[kHeader] = {};
    w.bytes(zero, kHeader);
    w.bytes(query.data() + kHeader, q.questionEnd - kHeader);
    // The lower-cased copy stands for the QNAME as a compression target (matching ignores case, RFC 1035
    // §4.1.4), so that an owner that is the QNAME itself is found by its address, without a comparison.
    w.remember(q.lower, q.qnameLen, kHeader);
    res.questionEnd = w.size();

    EdnsReply er;
    if (q.edns) {
        decideNsid(opt, q, er);
        res.cookie = decideCookie(opt, q, info, er);
    }

    const bool useEcs = opt.ecs && q.edns && q.ecsCount > 0;
    Client client = clientOf(q, info, useEcs);
    bool echoEcs = false;  // a valid ECS goes back with our scope (§7.2.1)
    Ctx c(db, opt, q, w, hook, tcp, client);
    const size_t limit = responseLimit(opt, q, tcp, out.size());
    const size_t tsigReserve = tsigRoom(q, query);
    if (q.edns && q.ednsVersion > 0) {
        c.aa = false;
        c.rcode = kRcodeBadVers;  // RFC 6891 §6.1.3: no answer, OPT with our version 0
    } else if (useEcs && !q.ecsValid) {
        c.aa = false;
        c.rcode = kRcodeFormErr;  // RFC 7871 §7.1.2: a malformed ECS option (or two of them)
    } else {
        echoEcs = client.fromEcs;
        if (echoEcs) er.ecs = &client.subnet;
        // A signed query's response gets a TSIG RR of about the request's (tsigRoom).
        size_t reserve = (q.edns ? er.size() : 0) + tsigReserve;
        w.setLimit(reserve < limit ? limit - reserve : 0);
        if (q.qclass == kClassCH) {
            c.chaos();
        } else if (q.qclass != kClassIN) {
            c.fail(kRcodeRefused, Ede::kNotAuthoritative);  // no zone of ours is in another class
        } else if (q.qtype == kTypeAXFR || q.qtype == kTypeIXFR) {
            if (transfer(c, db, q, query, tcp, info, res)) return res;
        } else {
            c.resolve();
        }
    }
    if (q.edns) {
        // The scope of a client-independent answer is 0 (§7.2.1); a 0-bit source prefix asks for an answer
        // that suits every client, and gets scope 0 too.
        er.ecsScope = client.subnet.bits ? c.scope : 0;
        er.ede = c.ede;
        er.fitEde(w.size(), tsigReserve < limit ? limit - tsigReserve : 0);
        res.optStart = w.size();
        putOpt(w, out.size(), opt, q, c.rcode, er);
        if (w.size() == res.optStart) res.optStart = 0;
        if (res.optStart) res.ede = er.ede.code;
    }
    putHeader(out.data(), q.id, q.opcode, q.rd, q.cd, c.aa && c.rcode != kRcodeRefused, c.tc, c.rcode, 1, w);
    res.len = w.size();
    res.rcode = c.rcode;
    res.kind = classify(c);
    if (res.kind != ResponseKind::Error) {
        res.kindName = c.kindName;
        res.kindNameLen = c.kindNameLen;
    }
    return res;
}

size_t pad(std::span<uint8_t> out, size_t len, size_t optStart, size_t trailer, size_t limit,
           size_t block) noexcept {
    limit = std::min(limit, out.size());
    // The OPT record must be there and be the last one: owner root, TYPE OPT, its RDATA up to `len`.
    if (!optStart || block == 0 || len > limit || optStart + kOptSize > len || out[optStart] != 0 ||
        out[optStart + 1] != 0 || out[optStart + 2] != kTypeOPT)
        return len;
    uint8_t* opt = out.data() + optStart;
    size_t rdlen = (size_t(opt[9]) << 8) | opt[10];
    if (optStart + kOptSize + rdlen != len) return len;
    size_t least = len + trailer + 4;  // with the option's header: OPTION-CODE, OPTION-LENGTH
    if (least > limit) return len;
    size_t target = (least + block - 1) / block * block;
    if (target > limit) target = limit;  // RFC 8467 §4.1: short of the block rather than over the limit
    size_t fill = target - least;
    if (rdlen + 4 + fill > 0xFFFF) return len;
    uint8_t* p = out.data() + len;
    p[0] = uint8_t(kOptPadding >> 8);
    p[1] = uint8_t(kOptPadding);
    p[2] = uint8_t(fill >> 8);
    p[3] = uint8_t(fill);
    std::memset(p + 4, 0, fill);  // RFC 7830 §4: the PADDING octets SHOULD be 0x00
    rdlen += 4 + fill;
    opt[9] = uint8_t(rdlen >> 8);
    opt[10] = uint8_t(rdlen);
    return len + 4 + fill;
}

size_t slip(std::span<uint8_t> out, const AnswerResult& res, bool badCookie) noexcept {
    uint8_t* p = out.data();
    size_t optLen = res.optStart ? res.len - res.optStart : 0;
    if (optLen) std::memmove(p + res.questionEnd, p + res.optStart, optLen);
    p[6] = p[7] = p[8] = p[9] = 0;  // no answer, no authority
    p[10] = 0;
    p[11] = optLen ? 1 : 0;
    if (badCookie && optLen) {
        // RFC 7873 §8: BADCOOKIE is 23, an extended RCODE: 7 in the header, 1 in the OPT record's upper bits.
        constexpr uint16_t kBadCookie = kRcodeBadCookie;
        p[2] &= uint8_t(~0x06);  // neither AA nor TC: this is an error, the answer is not withheld
        p[3] = uint8_t((p[3] & 0xF0) | (kBadCookie & 0x0F));
        p[res.questionEnd + 5] = uint8_t(kBadCookie >> 4);
    } else {
        p[2] |= 0x02;  // TC
    }
    return res.questionEnd + optLen;
}

}  // namespace gslb::zones
