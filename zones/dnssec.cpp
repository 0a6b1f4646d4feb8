#include "zones/dnssec.hpp"

#include <fmt/format.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>

#include "zones/dnssec_rollover.hpp"
#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

constexpr uint16_t kTypeDNSKEY = 48;
constexpr size_t kCacheSlots = 8192;  // per signed zone: ~0.8 MB; far more than the distinct GSLB answers

// Lower-cases the wire name at `off` in `s`; returns the offset just past it, or 0 when it is not a name.
size_t lowerNameAt(std::string& s, size_t off) {
    while (off < s.size()) {
        uint8_t l = uint8_t(s[off]);
        if (l == 0) return off + 1;
        if (l > kMaxLabelLen || off + 1 + l > s.size()) return 0;
        for (size_t j = off + 1; j <= off + l; ++j) s[j] = char(lowerByte(uint8_t(s[j])));
        off += size_t(l) + 1;
    }
    return 0;
}

int rdataCompare(std::string_view a, std::string_view b) {
    int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
    if (c) return c;
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

void put16(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
void put32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 24);
    p[1] = uint8_t(v >> 16);
    p[2] = uint8_t(v >> 8);
    p[3] = uint8_t(v);
}

// The type bit maps field of NSEC (RFC 4034 §4.1.2), `types` sorted and distinct.
std::string typeBitmap(const std::vector<uint16_t>& types) {
    std::string out;
    size_t i = 0;
    while (i < types.size()) {
        uint8_t window = uint8_t(types[i] >> 8);
        uint8_t bits[32] = {};
        size_t len = 0;
        for (; i < types.size() && (types[i] >> 8) == window; ++i) {
            uint8_t low = uint8_t(types[i]);
            bits[low / 8] |= uint8_t(0x80 >> (low % 8));
            len = std::max<size_t>(len, low / 8 + 1);
        }
        out += char(window);
        out += char(len);
        out.append(reinterpret_cast<const char*>(bits), len);
    }
    return out;
}

// The online signature cache's key: two 64-bit lanes over the key's octets taken 8 at a time (the last word
// zero-padded, the total length folded in at the end), each finished by splitmix64. A GSLB answer's key is
// ~45 octets: 6 words per lane instead of 45 dependent multiplications byte by byte (FNV-1a, which this
// replaced: it was the largest user-space cost of a signed GSLB answer). The keys are our own zone's data,
// never chosen by a client, so a fast non-cryptographic hash with 128 bits of key is enough.
class KeyHash {
  public:
    void add(const void* p, size_t n) {
        const auto* s = static_cast<const uint8_t*>(p);
        total_ += n;
        while (n && fill_) {  // complete a word left partly filled by the previous field
            carry_ |= uint64_t(*s++) << (8 * fill_);
            --n;
            if (++fill_ == 8) flush();
        }
        for (; n >= 8; s += 8, n -= 8) {
            uint64_t w;
            std::memcpy(&w, s, 8);
            word(w);
        }
        for (; n; --n) carry_ |= uint64_t(*s++) << (8 * fill_++);
    }
    void result(uint64_t& h0, uint64_t& h1) {
        if (fill_) flush();
        word(total_);
        h0 = a_;
        h1 = b_;
    }

  private:
    void word(uint64_t w) {
        a_ = ((a_ ^ w) * 0x9e3779b97f4a7c15ull);
        a_ ^= a_ >> 29;
        b_ = ((b_ ^ w) * 0xc2b2ae3d27d4eb4full);
        b_ ^= b_ >> 31;
    }
    void flush() {
        word(carry_);
        carry_ = 0;
        fill_ = 0;
    }
    uint64_t a_ = 0xcbf29ce484222325ull, b_ = 0x84222325cbf29ce4ull;
    uint64_t carry_ = 0, total_ = 0;
    unsigned fill_ = 0;
};

uint64_t finish(uint64_t x) {  // splitmix64's finaliser: spreads FNV's weak low bits over the whole word
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

void nsec3Hash(std::string_view lowerWire, uint8_t out[20]) noexcept {
    // The low-level call: no allocation on the query path (EVP_Digest allocates a context per call).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    SHA1(reinterpret_cast<const unsigned char*>(lowerWire.data()), lowerWire.size(), out);
#pragma GCC diagnostic pop
}

uint32_t ZoneSigner::nsec3Match(std::string_view name) const noexcept {
    uint8_t h[20];
    nsec3Hash(name, h);
    auto it = std::lower_bound(chain3.begin(), chain3.end(), h, [](const Hashed& a, const uint8_t* b) {
        return std::memcmp(a.hash, b, 20) < 0;
    });
    return it != chain3.end() && std::memcmp(it->hash, h, 20) == 0 ? it->node : kNone;
}

uint32_t ZoneSigner::nsec3Cover(std::string_view name) const noexcept {
    if (chain3.empty()) return kNone;
    uint8_t h[20];
    nsec3Hash(name, h);
    auto it = std::lower_bound(chain3.begin(), chain3.end(), h, [](const Hashed& a, const uint8_t* b) {
        return std::memcmp(a.hash, b, 20) < 0;
    });
    return it == chain3.begin() ? chain3.back().node : (it - 1)->node;
}

int canonicalCompare(std::string_view a, std::string_view b) {
    uint8_t oa[kMaxLabels], ob[kMaxLabels];
    size_t na = 0, nb = 0;
    for (size_t p = 0; p < a.size() && a[p] != 0 && na < kMaxLabels; p += size_t(uint8_t(a[p])) + 1)
        oa[na++] = uint8_t(p);
    for (size_t p = 0; p < b.size() && b[p] != 0 && nb < kMaxLabels; p += size_t(uint8_t(b[p])) + 1)
        ob[nb++] = uint8_t(p);
    while (na > 0 && nb > 0) {
        --na;
        --nb;
        std::string_view la = a.substr(oa[na] + 1, uint8_t(a[oa[na]]));
        std::string_view lb = b.substr(ob[nb] + 1, uint8_t(b[ob[nb]]));
        int c = rdataCompare(la, lb);
        if (c) return c;
    }
    return na > 0 ? 1 : nb > 0 ? -1 : 0;
}

std::string canonicalRdata(uint16_t type, std::string_view rdata) {
    std::string s(rdata);
    size_t off = 0;
    switch (type) {
        case kTypeNS:
        case kTypeMD:
        case kTypeMF:
        case kTypeCNAME:
        case kTypeMB:
        case kTypeMG:
        case kTypeMR:
        case kTypePTR:
        case kTypeDNAME:
            lowerNameAt(s, 0);
            break;
        case kTypeSOA:
        case kTypeMINFO:
        case 17:  // RP
            off = lowerNameAt(s, 0);
            if (off) lowerNameAt(s, off);
            break;
        case kTypeMX:
        case 18:  // AFSDB
        case 21:  // RT
        case 36:  // KX
            if (s.size() > 2) lowerNameAt(s, 2);
            break;
        case kTypeSRV:
            if (s.size() > 6) lowerNameAt(s, 6);
            break;
        case 26:  // PX
            off = s.size() > 2 ? lowerNameAt(s, 2) : 0;
            if (off) lowerNameAt(s, off);
            break;
        case 35: {  // NAPTR: order, preference, three character strings, replacement
            off = 4;
            for (int i = 0; i < 3 && off < s.size(); ++i) off += size_t(uint8_t(s[off])) + 1;
            if (off < s.size()) lowerNameAt(s, off);
            break;
        }
        default:
            break;
    }
    return s;
}

ZoneSigner::ZoneSigner(std::vector<DnssecKey> keys, const SignOptions& opt, std::string_view apex)
    : keys_(std::move(keys)), apex_(apex) {
    inception_ = uint32_t(opt.now - int64_t(opt.inceptionSkew));
    expiration_ = uint32_t(opt.now + int64_t(opt.validity));
    refreshAt_ = opt.now + int64_t(opt.validity) / 2;
    signedAt_ = opt.now;
    keyEventAt_ = nextKeyEvent(keys_, opt.now);
    nsec3 = opt.nsec3;
    for (const auto& k : keys_) {
        if (!k.active(opt.now)) continue;
        (k.sep() ? keySigners_ : zoneSigners_).push_back(&k);
    }
    if (zoneSigners_.empty()) zoneSigners_ = keySigners_;  // a CSK
    if (keySigners_.empty()) keySigners_ = zoneSigners_;
    slots_ = kCacheSlots;
    cache_.reset(new Slot[slots_]);
}

size_t ZoneSigner::header(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl,
                          uint8_t* out, uint32_t expiration) const {
    size_t labels = labelCount(owner);
    if (owner.size() >= 2 && owner[0] == 1 && owner[1] == '*') --labels;  // RFC 4034 §3.1.3
    put16(out, type);
    out[2] = key.algorithm;
    out[3] = uint8_t(labels);
    put32(out + 4, ttl);
    put32(out + 8, expiration ? expiration : expiration_);
    put32(out + 12, inception_);
    put16(out + 16, key.tag);
    std::memcpy(out + 18, apex_.data(), apex_.size());
    return 18 + apex_.size();
}

bool ZoneSigner::sign(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl,
                      std::vector<std::string_view> rdatas, std::string& out, uint32_t expiration) const {
    std::vector<std::string> canon;
    canon.reserve(rdatas.size());
    for (auto r : rdatas) canon.push_back(canonicalRdata(type, r));
    std::sort(canon.begin(), canon.end(),
              [](const std::string& a, const std::string& b) { return rdataCompare(a, b) < 0; });
    canon.erase(std::unique(canon.begin(), canon.end()), canon.end());
    uint8_t h[18 + kMaxNameLen];
    size_t hl = header(key, owner, type, ttl, h, expiration);
    std::string data(reinterpret_cast<const char*>(h), hl);
    for (const auto& r : canon) {
        data.append(owner);
        uint8_t f[10];
        put16(f, type);
        put16(f + 2, kClassIN);
        put32(f + 4, ttl);
        put16(f + 8, uint32_t(r.size()));
        data.append(reinterpret_cast<const char*>(f), 10);
        data.append(r);
    }
    uint8_t sig[64];
    if (!signData(key, data, sig)) return false;
    out.assign(reinterpret_cast<const char*>(h), hl);
    out.append(reinterpret_cast<const char*>(sig), 64);
    return true;
}

// The signed data of a cache miss, in a frame of its own: its 50 KB buffer would otherwise be part of every
// call's stack frame, probed page by page (stack clash protection) on every cache hit too.
static __attribute__((noinline)) bool signMiss(const ZoneSigner& sg, const DnssecKey& key,
                                               std::string_view owner, uint16_t type, uint32_t ttl,
                                               const uint8_t* const* rd, const uint16_t* ln, size_t n,
                                               uint8_t sig[64]) noexcept {
    constexpr size_t kMax = 64;
    uint8_t buf[18 + kMaxNameLen + kMax * (kMaxNameLen + 10 + 512)];
    size_t len = sg.header(key, owner, type, ttl, buf);
    for (size_t i = 0; i < n; ++i) {
        if (ln[i] > 512) return false;
        std::memcpy(buf + len, owner.data(), owner.size());
        len += owner.size();
        put16(buf + len, type);
        put16(buf + len + 2, kClassIN);
        put32(buf + len + 4, ttl);
        put16(buf + len + 8, ln[i]);
        len += 10;
        std::memcpy(buf + len, rd[i], ln[i]);
        len += ln[i];
    }
    return signData(key, {reinterpret_cast<const char*>(buf), len}, sig);
}

bool ZoneSigner::onlineSignature(const DnssecKey& key, std::string_view owner, uint16_t type, uint32_t ttl,
                                 const uint8_t* const* rdatas, const uint16_t* lens, size_t n,
                                 uint8_t sig[64]) const noexcept {
    constexpr size_t kMax = 64;
    if (n == 0 || n > kMax) return false;
    // Canonical order (RFC 4034 §6.3): A, AAAA and our own NSEC rdata hold no names to lower-case.
    const uint8_t* rd[kMax];
    uint16_t ln[kMax];
    for (size_t i = 0; i < n; ++i) {
        rd[i] = rdatas[i];
        ln[i] = lens[i];
    }
    for (size_t i = 1; i < n; ++i)
        for (size_t j = i; j > 0; --j) {
            std::string_view a(reinterpret_cast<const char*>(rd[j - 1]), ln[j - 1]);
            std::string_view b(reinterpret_cast<const char*>(rd[j]), ln[j]);
            if (rdataCompare(a, b) <= 0) break;
            std::swap(rd[j - 1], rd[j]);
            std::swap(ln[j - 1], ln[j]);
        }
    uint8_t meta[8];
    put16(meta, key.tag);
    put16(meta + 2, type);
    put32(meta + 4, ttl);
    KeyHash kh;
    kh.add(meta, 8);
    kh.add(owner.data(), owner.size());
    for (size_t i = 0; i < n; ++i) {
        kh.add(&ln[i], 2);
        kh.add(rd[i], ln[i]);
    }
    uint64_t h0, h1;
    kh.result(h0, h1);
    h0 = finish(h0) | 1;  // never 0: an empty slot
    h1 = finish(h1);
    const size_t base = size_t(h0 >> 7) & (slots_ - 1);
    for (size_t way = 0; way < 2; ++way) {
        Slot& s = cache_[base ^ way];
        uint32_t s1 = s.seq.load(std::memory_order_acquire);
        if (s1 & 1) continue;
        uint64_t a = s.k0.load(std::memory_order_relaxed), b = s.k1.load(std::memory_order_relaxed);
        uint64_t v[8];
        for (int i = 0; i < 8; ++i) v[i] = s.sig[i].load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (s.seq.load(std::memory_order_relaxed) != s1 || a != h0 || b != h1) continue;
        std::memcpy(sig, v, 64);
        return true;
    }
    // A miss: sign here (one signature is all this worker waits for), then publish for every worker.
    if (!signMiss(*this, key, owner, type, ttl, rd, ln, n, sig)) return false;
    onlineSigned_.fetch_add(1, std::memory_order_relaxed);
    // Into the empty way if there is one, else over the first; a slot being written by another worker is
    // left alone (this signature is then simply not cached).
    Slot* target = &cache_[base];
    if (cache_[base].k0.load(std::memory_order_relaxed) != 0 &&
        cache_[base ^ 1].k0.load(std::memory_order_relaxed) == 0)
        target = &cache_[base ^ 1];
    uint32_t seq = target->seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !target->seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire))
        return true;
    std::atomic_thread_fence(std::memory_order_release);
    uint64_t v[8];
    std::memcpy(v, sig, 64);
    target->k0.store(h0, std::memory_order_relaxed);
    target->k1.store(h1, std::memory_order_relaxed);
    for (int i = 0; i < 8; ++i) target->sig[i].store(v[i], std::memory_order_relaxed);
    target->seq.store(seq + 2, std::memory_order_release);
    return true;
}

namespace {

// One RRset to sign: its owner (lower-case wire, stored in the SourceSet), type, TTL and records.
struct SignJob {
    std::string_view owner;
    uint16_t type;
    uint32_t ttl;
    std::vector<std::string_view> rdatas;
};

// The file's own RRSIG, NSEC, NSEC3 and NSEC3PARAM records go: compileSigned makes its own.
void dropSignedData(std::vector<SourceRecord>& recs) {
    recs.erase(std::remove_if(recs.begin(), recs.end(),
                              [](const SourceRecord& r) {
                                  return r.type == kTypeRRSIG || r.type == kTypeNSEC ||
                                         r.type == kTypeNSEC3 || r.type == kTypeNSEC3PARAM;
                              }),
               recs.end());
}

// The SOA's TTL (the DNSKEYs get it), 3600 when there is no SOA (Zone::compile then refuses the zone).
uint32_t soaTtl(const std::vector<SourceRecord>& recs) {
    uint32_t ttl = 3600;
    for (const auto& r : recs)
        if (r.type == kTypeSOA) ttl = r.ttl;
    return ttl;
}

// The NSEC chain: every name that holds authoritative data or is a zone cut, in canonical order
// (RFC 4034 §6.1).
std::vector<uint32_t> nsecChain(const Zone& z) {
    std::vector<uint32_t> chain;
    for (uint32_t i = 0; i < z.nodeCount(); ++i) {
        const Node& n = z.node(i);
        if (n.setCount > 0 && !(n.flags & kNodeOccluded)) chain.push_back(i);
    }
    std::sort(chain.begin(), chain.end(), [&](uint32_t a, uint32_t b) {
        return canonicalCompare(z.nodeName(z.node(a)), z.nodeName(z.node(b))) < 0;
    });
    return chain;
}

// The RRsets to sign, node by node along `chain`, into `jobs`; with NSEC (not opt.nsec3) each node's NSEC
// record too, to the next name of the chain, added to `set` and signed. `nsecTtl`: RFC 9077's
// min(SOA TTL, MINIMUM).
void chainJobs(const Zone& z, const std::vector<uint32_t>& chain, bool nsec, uint32_t nsecTtl,
               uint32_t fileIdx, SourceSet& set, std::vector<SignJob>& jobs) {
    std::vector<uint16_t> types;
    for (size_t c = 0; c < chain.size(); ++c) {
        const Node& n = z.node(chain[c]);
        std::string_view owner = set.store(z.nodeName(n));
        const bool cut = n.flags & kNodeDelegation;
        types.clear();
        for (const RRset* s = z.rrsetsBegin(n); s != z.rrsetsEnd(n); ++s) {
            // At a cut only NS and DS are the parent's (RFC 4035 §2.3); DS and NSEC are signed there.
            if (cut && s->type != kTypeNS && s->type != kTypeDS) continue;
            types.push_back(s->type);
            if (cut && s->type == kTypeNS) continue;
            SignJob j{owner, s->type, s->ttl, {}};
            for (uint32_t q = s->first; q < s->first + s->count; ++q) {
                const Rdata& rd = z.rdata(q);
                j.rdatas.emplace_back(reinterpret_cast<const char*>(z.bytes(rd)), rd.len);
            }
            jobs.push_back(std::move(j));
        }
        if (!nsec) continue;
        types.push_back(kTypeRRSIG);
        types.push_back(kTypeNSEC);
        std::sort(types.begin(), types.end());
        types.erase(std::unique(types.begin(), types.end()), types.end());
        std::string rd(z.nodeName(z.node(chain[(c + 1) % chain.size()])));
        rd += typeBitmap(types);
        std::string_view stored = set.store(rd);
        set.records.push_back(SourceRecord{owner, stored, kTypeNSEC, nsecTtl, fileIdx, 0});
        jobs.push_back(SignJob{owner, kTypeNSEC, nsecTtl, {stored}});
    }
}

// The NSEC3 chain: each name's hash and node, in hash order, and its NSEC3 owner name.
struct Nsec3Chain {
    struct Hashed {
        std::array<uint8_t, 20> hash;
        uint32_t node;
    };
    std::vector<Hashed> hashed;
    std::vector<std::string> owners;  // <base32hex(hash)>.<apex>, lower-case wire; one per `hashed`
};

// <base32hex(hash)>.<apex> (RFC 5155 §3.3, RFC 4648 §7 in lower case), lower-case wire.
std::string nsec3Owner(const std::array<uint8_t, 20>& h, const WireName& apex) {
    static const char kB32[] = "0123456789abcdefghijklmnopqrstuv";
    std::string owner(1, char(32));
    for (int b = 0; b < 160; b += 5) {
        int v = 0;
        for (int k = 0; k < 5; ++k) v = v << 1 | ((h[size_t(b + k) / 8] >> (7 - (b + k) % 8)) & 1);
        owner += kB32[v];
    }
    owner += apex;
    return owner;
}

// NSEC3 (RFC 5155 §7.1): every authoritative name, empty non-terminals and cuts included (no opt-out),
// hashed (SHA-1, no salt, 0 iterations); the chain in hash order; NSEC3PARAM at the apex. The records go
// into `set` and `jobs`.
Nsec3Chain addNsec3(const Zone& z, const WireName& apex, std::string_view apexStored, uint32_t nsecTtl,
                    uint32_t fileIdx, SourceSet& set, std::vector<SignJob>& jobs) {
    Nsec3Chain out;
    for (uint32_t i = 0; i < z.nodeCount(); ++i) {
        if (z.node(i).flags & kNodeOccluded) continue;
        Nsec3Chain::Hashed h{};
        nsec3Hash(z.nodeName(z.node(i)), h.hash.data());
        h.node = i;
        out.hashed.push_back(h);
    }
    std::sort(out.hashed.begin(), out.hashed.end(),
              [](const Nsec3Chain::Hashed& a, const Nsec3Chain::Hashed& b) { return a.hash < b.hash; });
    std::string param("\x01\x00\x00\x00\x00", 5);  // SHA-1, no flags, 0 iterations, no salt
    std::string_view paramStored = set.store(param);
    set.records.push_back(SourceRecord{apexStored, paramStored, kTypeNSEC3PARAM, 0, fileIdx, 0});
    jobs.push_back(SignJob{apexStored, kTypeNSEC3PARAM, 0, {paramStored}});
    std::vector<uint16_t> types;
    for (size_t c = 0; c < out.hashed.size(); ++c) {
        const Node& n = z.node(out.hashed[c].node);
        const bool cut = n.flags & kNodeDelegation;
        types.clear();
        bool signedHere = false;
        for (const RRset* s = z.rrsetsBegin(n); s != z.rrsetsEnd(n); ++s) {
            if (cut && s->type != kTypeNS && s->type != kTypeDS) continue;
            types.push_back(s->type);
            signedHere |= !(cut && s->type == kTypeNS);
        }
        if (out.hashed[c].node == z.apexNode()) types.push_back(kTypeNSEC3PARAM);
        if (signedHere) types.push_back(kTypeRRSIG);
        std::sort(types.begin(), types.end());
        types.erase(std::unique(types.begin(), types.end()), types.end());
        std::string rd(param.substr(0, 4));
        rd += char(0);   // salt length
        rd += char(20);  // hash length
        const auto& next = out.hashed[(c + 1) % out.hashed.size()].hash;
        rd.append(reinterpret_cast<const char*>(next.data()), 20);
        rd += typeBitmap(types);
        std::string owner = nsec3Owner(out.hashed[c].hash, apex);
        out.owners.push_back(owner);
        std::string_view ownerStored = set.store(owner), rdStored = set.store(rd);
        set.records.push_back(SourceRecord{ownerStored, rdStored, kTypeNSEC3, nsecTtl, fileIdx, 0});
        jobs.push_back(SignJob{ownerStored, kTypeNSEC3, nsecTtl, {rdStored}});
    }
    return out;
}

// `k`'s signature of `j` in `previous` when it can serve again (see compileSigned in the header): the
// RRset there is the same (TTL and records), and the signature is not due (its expiration, in RFC 1982
// arithmetic on 32 bits, RFC 4034 §3.1.5, is past `dueBy`). Empty otherwise.
std::string_view reusableSignature(const Zone* previous, const SignJob& j, const DnssecKey& k,
                                   int64_t dueBy) {
    const Zone* p = previous;
    if (!p) return {};
    uint32_t ni = p->find(j.owner);
    if (ni == kNone) return {};
    const Node& n = p->node(ni);
    const RRset* data = p->rrset(n, j.type);
    const RRset* sig = p->rrset(n, kTypeRRSIG);
    if (!data || !sig || data->ttl != j.ttl || data->count != j.rdatas.size()) return {};
    for (uint32_t q = data->first; q < data->first + data->count; ++q) {
        const Rdata& rd = p->rdata(q);
        std::string_view b(reinterpret_cast<const char*>(p->bytes(rd)), rd.len);
        if (std::find(j.rdatas.begin(), j.rdatas.end(), b) == j.rdatas.end()) return {};
    }
    for (uint32_t q = sig->first; q < sig->first + sig->count; ++q) {
        const Rdata& rd = p->rdata(q);
        const uint8_t* b = p->bytes(rd);
        if (rd.len < 18 || (b[0] << 8 | b[1]) != j.type || b[2] != k.algorithm ||
            (b[16] << 8 | b[17]) != k.tag)
            continue;
        uint32_t ttl = uint32_t(b[4]) << 24 | uint32_t(b[5]) << 16 | uint32_t(b[6]) << 8 | b[7];
        uint32_t exp = uint32_t(b[8]) << 24 | uint32_t(b[9]) << 16 | uint32_t(b[10]) << 8 | b[11];
        if (ttl != j.ttl || int32_t(exp - uint32_t(dueBy)) <= 0) continue;
        return {reinterpret_cast<const char*>(b), rd.len};
    }
    return {};
}

// The RRSIG rdatas of each job, one per key that signs its type, on up to four threads (a million RRsets
// is a million ECDSA signatures), or those of opt.previous where they still serve; the signer's refresh
// time is brought forward to when the first of them is due. False when OpenSSL fails to sign.
bool signJobs(const std::vector<SignJob>& jobs, ZoneSigner& signer, const SignOptions& opt,
              std::vector<std::vector<std::string>>& sigs) {
    sigs.assign(jobs.size(), {});
    std::atomic<bool> failed{false};
    const uint32_t validity = opt.validity;
    const int64_t dueBy = opt.now + int64_t(validity) / 2 + int64_t(validity) / 16;  // exp must be past this
    std::vector<int64_t> firstDue(jobs.size(), INT64_MAX);  // per job: when its earliest signature is due
    auto spread = [&](std::string_view owner, uint16_t type) {
        uint32_t h = hashName(owner) * 2654435761u ^ type * 40503u;
        return validity / 4 ? h % (validity / 4) : 0;
    };
    unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    if (jobs.size() < 2000) threads = 1;
    auto work = [&](size_t from, size_t to) {
        for (size_t i = from; i < to && !failed; ++i) {
            const SignJob& j = jobs[i];
            for (const DnssecKey* k : signer.signers(j.type)) {
                std::string out;
                if (std::string_view old = reusableSignature(opt.previous, j, *k, dueBy); !old.empty()) {
                    out.assign(old);
                } else {
                    uint32_t exp = signer.expiration() - spread(j.owner, j.type);
                    if (!signer.sign(*k, j.owner, j.type, j.ttl, j.rdatas, out, exp)) {
                        failed = true;
                        return;
                    }
                }
                const auto* b = reinterpret_cast<const uint8_t*>(out.data());
                uint32_t exp = uint32_t(b[8]) << 24 | uint32_t(b[9]) << 16 | uint32_t(b[10]) << 8 | b[11];
                // Due when half its validity is left: expiration - validity / 2 (relative to now: RFC 1982).
                int64_t due = opt.now + int32_t(exp - uint32_t(opt.now)) - int64_t(validity) / 2;
                firstDue[i] = std::min(firstDue[i], due);
                sigs[i].push_back(std::move(out));
            }
        }
    };
    std::vector<std::thread> pool;
    size_t per = (jobs.size() + threads - 1) / threads;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(work, std::min(jobs.size(), t * per), std::min(jobs.size(), (t + 1) * per));
    work(0, std::min(jobs.size(), per));
    for (auto& t : pool) t.join();
    if (failed) return false;
    for (int64_t due : firstDue) signer.refreshBy(due);
    return true;
}

}  // namespace

std::unique_ptr<Zone> compileSigned(const WireName& apex, SourceSet& set, const std::string& file,
                                    std::vector<DnssecKey> keys, const SignOptions& opt, std::string& error) {
    auto& recs = set.records;
    dropSignedData(recs);
    auto signer = std::make_shared<ZoneSigner>(std::move(keys), opt, apex);
    if (signer->signers(kTypeSOA).empty()) {
        error = fmt::format("{}: no active DNSSEC key for {} (gslbctl dnssec keygen {} --dir KEY_DIR)", file,
                            nameToText(apex), nameToText(apex));
        return nullptr;
    }
    // The published keys' DNSKEYs at the apex, then the zone as it is, to walk for what to sign.
    const uint32_t fileIdx = set.fileIndex(file);
    std::string_view apexStored = set.store(apex);
    const size_t fromFile = recs.size();
    const uint32_t dnskeyTtl = soaTtl(recs);
    for (const auto& k : signer->keys())
        if (k.published(opt.now))
            recs.push_back(SourceRecord{apexStored, set.store(k.dnskey), kTypeDNSKEY, dnskeyTtl, fileIdx, 0});
    auto z1 = Zone::compile(apex, set, file, error);
    if (!z1) return nullptr;
    // What the file gave, duplicates dropped (RFC 2181 §5) as compile drops them: its records less the
    // DNSKEYs added just now.
    const size_t fileRecords = z1->recordCount() - (recs.size() - fromFile);

    // What to sign, with the denial of existence records added: NSEC, or NSEC3 and NSEC3PARAM.
    const std::vector<uint32_t> chain = nsecChain(*z1);
    const uint32_t nsecTtl = z1->negativeTtl();  // RFC 9077: min(SOA TTL, MINIMUM)
    std::vector<SignJob> jobs;
    jobs.reserve(z1->recordCount() + chain.size());
    chainJobs(*z1, chain, !opt.nsec3, nsecTtl, fileIdx, set, jobs);
    Nsec3Chain chain3;
    if (opt.nsec3) chain3 = addNsec3(*z1, apex, apexStored, nsecTtl, fileIdx, set, jobs);

    std::vector<std::vector<std::string>> sigs;
    if (!signJobs(jobs, *signer, opt, sigs)) {
        error = fmt::format("{}: signing {} failed (OpenSSL)", file, nameToText(apex));
        return nullptr;
    }
    for (size_t i = 0; i < jobs.size(); ++i)
        for (const auto& s : sigs[i])
            recs.push_back(SourceRecord{jobs[i].owner, set.store(s), kTypeRRSIG, jobs[i].ttl, fileIdx, 0});
    jobs.clear();
    sigs.clear();
    std::vector<std::string> names;
    names.reserve(chain.size());
    for (uint32_t c : chain) names.emplace_back(z1->nodeName(z1->node(c)));
    z1.reset();

    // The signed zone, and its chain by the new zone's node indices for the denials answer() gives.
    auto z = Zone::compile(apex, set, file, error);
    if (!z) return nullptr;
    if (opt.nsec3) {
        signer->chain3.reserve(chain3.hashed.size());
        for (size_t c = 0; c < chain3.hashed.size(); ++c) {
            ZoneSigner::Hashed h{};
            std::memcpy(h.hash, chain3.hashed[c].hash.data(), 20);
            h.node = z->find(chain3.owners[c]);
            signer->chain3.push_back(h);
        }
    } else {
        signer->chain.reserve(names.size());
        for (const auto& nm : names) signer->chain.push_back(z->find(nm));
    }
    z->setSigner(std::move(signer));
    z->setFileRecordCount(fileRecords);
    return z;
}

}  // namespace gslb::zones
