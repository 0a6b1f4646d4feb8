#include "zones/journal.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "zones/name.hpp"
#include "zones/rrtype.hpp"
#include "zones/serial.hpp"

namespace gslb::zones {
namespace {

uint16_t be16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}
uint32_t be32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
void put16(std::string& o, uint16_t v) {
    o.push_back(char(v >> 8));
    o.push_back(char(v));
}
void put32(std::string& o, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) o.push_back(char(v >> s));
}
const uint8_t* bytesOf(std::string_view s) {
    return reinterpret_cast<const uint8_t*>(s.data());
}

// The TTL a record goes out with in a transfer: its RRset's, or an RRSIG's own Original TTL (RFC 4034
// §3), as zones/axfr.cpp sends it.
uint32_t wireTtl(const Zone& z, const RRset& s, const Rdata& rd) {
    if (s.type == kTypeRRSIG && rd.len >= 8) return be32(z.bytes(rd) + 4);
    return s.ttl;
}

struct Rec {
    uint32_t ttl;
    std::string_view data;
    bool operator<(const Rec& o) const { return data != o.data ? data < o.data : ttl < o.ttl; }
    bool operator==(const Rec& o) const { return ttl == o.ttl && data == o.data; }
};

void collect(const Zone& z, const RRset* s, std::vector<Rec>& out) {
    out.clear();
    if (!s) return;
    for (uint32_t i = s->first; i < s->first + s->count; ++i) {
        const Rdata& rd = z.rdata(i);
        out.push_back({wireTtl(z, *s, rd), {reinterpret_cast<const char*>(z.bytes(rd)), rd.len}});
    }
    std::sort(out.begin(), out.end());
}

struct DiffBuilder {
    std::string removed, added;
    uint32_t nRemoved = 0, nAdded = 0;
    std::vector<Rec> a, b;

    // The records of (owner, type) that `sa` (before) and `sb` (after) do not share.
    void set(std::string_view owner, uint16_t type, const Zone& za, const RRset* sa, const Zone& zb,
             const RRset* sb) {
        collect(za, sa, a);
        collect(zb, sb, b);
        size_t i = 0, j = 0;
        while (i < a.size() || j < b.size()) {
            if (j == b.size() || (i < a.size() && a[i] < b[j])) {
                appendDiffRecord(removed, owner, type, a[i].ttl, a[i].data);
                ++nRemoved;
                ++i;
            } else if (i == a.size() || b[j] < a[i]) {
                appendDiffRecord(added, owner, type, b[j].ttl, b[j].data);
                ++nAdded;
                ++j;
            } else {
                ++i;
                ++j;
            }
        }
    }
};

void soaRecord(const Zone& z, std::string& out) {
    const Rdata& rd = z.rdata(z.soa().first);
    appendDiffRecord(out, z.apex(), kTypeSOA, z.soa().ttl,
                     {reinterpret_cast<const char*>(z.bytes(rd)), rd.len});
}

}  // namespace

bool DiffReader::next(DiffRecord& r) {
    if (bad_ || off_ >= p_.size()) return false;
    const uint8_t* p = bytesOf(p_) + off_;
    size_t left = p_.size() - off_;
    size_t n = wireNameLen(p, left);
    if (n == 0 || left - n < 8) {
        bad_ = true;
        return false;
    }
    uint16_t rdlen = be16(p + n + 6);
    if (rdlen > left - n - 8) {
        bad_ = true;
        return false;
    }
    r.owner = p_.substr(off_, n);
    r.type = be16(p + n);
    r.ttl = be32(p + n + 2);
    r.rdata = p_.substr(off_ + n + 8, rdlen);
    r.whole = p_.substr(off_, n + 8 + rdlen);
    off_ += n + 8 + rdlen;
    return true;
}

void appendDiffRecord(std::string& out, std::string_view owner, uint16_t type, uint32_t ttl,
                      std::string_view rdata) {
    out.append(owner);
    put16(out, type);
    put32(out, ttl);
    put16(out, uint16_t(rdata.size()));
    out.append(rdata);
}

std::shared_ptr<Changeset> diffZones(const Zone& before, const Zone& after) {
    DiffBuilder d;
    soaRecord(before, d.removed);
    soaRecord(after, d.added);
    d.nRemoved = d.nAdded = 1;
    for (uint32_t ni = 0; ni < after.nodeCount(); ++ni) {
        const Node& nb = after.node(ni);
        std::string_view name = after.nodeName(nb);
        uint32_t oi = before.find(name);
        const Node* na = oi == kNone ? nullptr : &before.node(oi);
        for (const RRset* s = after.rrsetsBegin(nb); s != after.rrsetsEnd(nb); ++s) {
            if (s->type == kTypeSOA && ni == after.apexNode()) continue;
            d.set(name, s->type, before, na ? before.rrset(*na, s->type) : nullptr, after, s);
        }
        if (!na) continue;
        for (const RRset* s = before.rrsetsBegin(*na); s != before.rrsetsEnd(*na); ++s) {
            if (s->type == kTypeSOA && oi == before.apexNode()) continue;
            if (!after.rrset(nb, s->type)) d.set(name, s->type, before, s, after, nullptr);
        }
    }
    for (uint32_t oi = 0; oi < before.nodeCount(); ++oi) {
        const Node& na = before.node(oi);
        std::string_view name = before.nodeName(na);
        if (after.find(name) != kNone) continue;
        for (const RRset* s = before.rrsetsBegin(na); s != before.rrsetsEnd(na); ++s)
            d.set(name, s->type, before, s, after, nullptr);
    }
    auto cs = std::make_shared<Changeset>();
    cs->from = before.serial();
    cs->to = after.serial();
    cs->removed = d.nRemoved;
    cs->added = d.nAdded;
    cs->records = std::move(d.removed);
    cs->records += d.added;
    return cs;
}

namespace {

// Records in first-seen order, each present at most once; removal leaves a hole (order is kept).
struct OrderedSet {
    std::vector<std::string_view> recs;
    std::vector<bool> live;
    std::unordered_map<std::string_view, size_t> at;
    bool erase(std::string_view r) {
        auto it = at.find(r);
        if (it == at.end()) return false;
        live[it->second] = false;
        at.erase(it);
        return true;
    }
    void insert(std::string_view r) {
        if (at.count(r)) return;
        at.emplace(r, recs.size());
        recs.push_back(r);
        live.push_back(true);
    }
};

}  // namespace

Changeset condense(std::span<const Changeset* const> seq) {
    Changeset out;
    if (seq.empty()) return out;
    OrderedSet removed, added;
    std::string_view oldSoa, newSoa;
    for (const Changeset* cs : seq) {
        DiffReader rd(cs->records);
        DiffRecord r;
        for (uint32_t i = 0; i < cs->removed + cs->added && rd.next(r); ++i) {
            const bool isRemoval = i < cs->removed;
            // The SOAs open each list: the first changeset's old one and the last one's new one frame the
            // result, the ones between cancel out.
            if (i == 0) {
                if (cs == seq.front()) oldSoa = r.whole;
                continue;
            }
            if (i == cs->removed) {
                newSoa = r.whole;
                continue;
            }
            if (isRemoval) {
                if (!added.erase(r.whole)) removed.insert(r.whole);
            } else {
                if (!removed.erase(r.whole)) added.insert(r.whole);
            }
        }
    }
    out.from = seq.front()->from;
    out.to = seq.back()->to;
    out.records.append(oldSoa);
    out.removed = 1;
    for (size_t i = 0; i < removed.recs.size(); ++i)
        if (removed.live[i]) {
            out.records.append(removed.recs[i]);
            ++out.removed;
        }
    out.records.append(newSoa);
    out.added = 1;
    for (size_t i = 0; i < added.recs.size(); ++i)
        if (added.live[i]) {
            out.records.append(added.recs[i]);
            ++out.added;
        }
    return out;
}

ZoneDigest zoneDigest(const Zone& z) {
    ZoneDigest out{};
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
    std::string buf;
    auto flush = [&] {
        EVP_DigestUpdate(ctx, buf.data(), buf.size());
        buf.clear();
    };
    {
        const Rdata& rd = z.rdata(z.soa().first);
        std::string soa(reinterpret_cast<const char*>(z.bytes(rd)), rd.len);
        setSoaSerial(soa, 0);
        appendDiffRecord(buf, z.apex(), kTypeSOA, z.soa().ttl, soa);
    }
    for (uint32_t ni = 0; ni < z.nodeCount(); ++ni) {
        const Node& n = z.node(ni);
        for (const RRset* s = z.rrsetsBegin(n); s != z.rrsetsEnd(n); ++s) {
            if (s->type == kTypeSOA && ni == z.apexNode()) continue;
            for (uint32_t i = s->first; i < s->first + s->count; ++i) {
                const Rdata& rd = z.rdata(i);
                appendDiffRecord(buf, z.nodeName(n), s->type, wireTtl(z, *s, rd),
                                 {reinterpret_cast<const char*>(z.bytes(rd)), rd.len});
            }
        }
        if (buf.size() > (64u << 10)) flush();
    }
    flush();
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx, out.data(), &len);
    EVP_MD_CTX_free(ctx);
    return out;
}

size_t Journal::bytes() const {
    size_t n = 0;
    for (const auto& e : entries) n += e->records.size();
    return n;
}

std::vector<const Changeset*> Journal::from(uint32_t s) const {
    std::vector<const Changeset*> out;
    for (size_t i = 0; i < entries.size(); ++i)
        if (entries[i]->from == s) {
            for (size_t k = i; k < entries.size(); ++k) out.push_back(entries[k].get());
            break;
        }
    return out;
}

bool Journal::covers(uint32_t s) const {
    for (const auto& e : entries)
        if (e->from == s) return true;
    return false;
}

std::shared_ptr<const Journal> extendJournal(const Journal* old, std::string_view apex,
                                             std::shared_ptr<const Changeset> change,
                                             const ZoneDigest& digest, const JournalLimits& limits) {
    auto j = std::make_shared<Journal>();
    j->apex = apex;
    j->serial = change->to;
    j->digest = digest;
    if (limits.depth == 0 || limits.bytes == 0) return j;
    if (old && old->apex == apex && old->serial == change->from) j->entries = old->entries;
    j->entries.push_back(std::move(change));
    size_t total = j->bytes(), drop = 0;
    while (drop < j->entries.size() && (j->entries.size() - drop > limits.depth || total > limits.bytes)) {
        total -= j->entries[drop]->records.size();
        ++drop;
    }
    j->entries.erase(j->entries.begin(), j->entries.begin() + long(drop));
    return j;
}

namespace {

constexpr char kMagic[8] = {'G', 'S', 'L', 'B', 'I', 'X', 'F', 'R'};
constexpr uint16_t kVersion = 1;
constexpr size_t kMaxEntries = 100000;

void sha256(const void* p, size_t n, uint8_t out[32]) {
    unsigned len = 0;
    EVP_Digest(p, n, out, &len, EVP_sha256(), nullptr);
}

}  // namespace

std::string serializeJournal(const Journal& j) {
    std::string o(kMagic, sizeof kMagic);
    put16(o, kVersion);
    o.push_back(char(j.apex.size()));
    o.append(j.apex);
    put32(o, j.serial);
    o.append(reinterpret_cast<const char*>(j.digest.data()), j.digest.size());
    put32(o, uint32_t(j.entries.size()));
    for (const auto& e : j.entries) {
        put32(o, e->from);
        put32(o, e->to);
        put32(o, e->removed);
        put32(o, e->added);
        put32(o, uint32_t(e->records.size()));
        o.append(e->records);
    }
    uint8_t d[32];
    sha256(o.data(), o.size(), d);
    o.append(reinterpret_cast<const char*>(d), sizeof d);
    return o;
}

bool parseJournal(std::span<const uint8_t> in, Journal& out, std::string& error) {
    out = Journal{};
    const uint8_t* p = in.data();
    size_t n = in.size(), off = 0;
    auto fail = [&](const std::string& why) {
        error = fmt::format("octet {}: {}", off, why);
        out = Journal{};
        return false;
    };
    if (n < sizeof kMagic + 2 + 1 + 4 + 32 + 4 + 32) return fail("too short for a journal");
    if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return fail("not a gslbd IXFR journal (bad magic)");
    off = sizeof kMagic;
    if (be16(p + off) != kVersion)
        return fail(fmt::format("version {} (this gslbd reads {})", be16(p + off), kVersion));
    off += 2;
    uint8_t digest[32];
    sha256(p, n - 32, digest);
    if (std::memcmp(digest, p + n - 32, 32) != 0) {
        off = n - 32;
        return fail("checksum mismatch: the file is torn or altered");
    }
    const size_t end = n - 32;
    size_t alen = p[off++];
    if (alen > end - off || wireNameLen(p + off, alen) != alen) return fail("bad apex name");
    out.apex.assign(reinterpret_cast<const char*>(p + off), alen);
    std::string lower = out.apex;
    lowerName(reinterpret_cast<uint8_t*>(lower.data()), lower.size());
    if (lower != out.apex) return fail("apex name not in lower case");
    off += alen;
    if (end - off < 4 + 32 + 4) return fail("truncated header");
    out.serial = be32(p + off);
    off += 4;
    std::memcpy(out.digest.data(), p + off, 32);
    off += 32;
    uint32_t count = be32(p + off);
    off += 4;
    if (count > kMaxEntries) return fail(fmt::format("{} changesets (at most {})", count, kMaxEntries));
    for (uint32_t e = 0; e < count; ++e) {
        if (end - off < 20) return fail(fmt::format("changeset {}: truncated header", e));
        auto cs = std::make_shared<Changeset>();
        cs->from = be32(p + off);
        cs->to = be32(p + off + 4);
        cs->removed = be32(p + off + 8);
        cs->added = be32(p + off + 12);
        uint32_t len = be32(p + off + 16);
        off += 20;
        if (len > end - off)
            return fail(fmt::format("changeset {}: {} octets of records, {} left", e, len, end - off));
        if (!serialGreater(cs->to, cs->from))
            return fail(
                fmt::format("changeset {}: serial {} does not follow {} (RFC 1982)", e, cs->to, cs->from));
        if (!out.entries.empty() && out.entries.back()->to != cs->from)
            return fail(fmt::format("changeset {} starts at serial {}, the one before ends at {}", e,
                                    cs->from, out.entries.back()->to));
        if (cs->removed == 0 || cs->added == 0) return fail(fmt::format("changeset {}: no SOA", e));
        cs->records.assign(reinterpret_cast<const char*>(p + off), len);
        DiffReader rd(cs->records);
        DiffRecord r;
        uint64_t total = uint64_t(cs->removed) + cs->added, i = 0;
        for (; i < total && rd.next(r); ++i) {
            if (!isSubdomain(r.owner, out.apex))
                return fail(fmt::format("changeset {}: record {} is outside the zone", e, i));
            if (i == 0 || i == cs->removed) {
                auto s = r.type == kTypeSOA && r.owner == std::string_view(out.apex) ? soaSerial(r.rdata)
                                                                                     : std::nullopt;
                if (!s || *s != (i == 0 ? cs->from : cs->to))
                    return fail(fmt::format("changeset {}: record {} is not the SOA of serial {}", e, i,
                                            i == 0 ? cs->from : cs->to));
            }
        }
        if (i != total || rd.bad() || rd.offset() != len)
            return fail(fmt::format("changeset {}: its records do not fill its {} octets exactly", e, len));
        off += len;
        out.entries.push_back(std::move(cs));
    }
    if (off != end) return fail("octets after the last changeset");
    // RFC 1982 lets serials wrap: a chain that comes back to a serial it started from is not one history.
    std::vector<uint32_t> froms;
    for (const auto& e : out.entries) froms.push_back(e->from);
    std::sort(froms.begin(), froms.end());
    if (std::adjacent_find(froms.begin(), froms.end()) != froms.end() ||
        (!out.entries.empty() && std::binary_search(froms.begin(), froms.end(), out.serial)))
        return fail("a serial comes back in the chain");
    if (!out.entries.empty() && out.entries.back()->to != out.serial)
        return fail(fmt::format("the last changeset ends at serial {}, the journal at {}",
                                out.entries.back()->to, out.serial));
    return true;
}

std::string journalFileName(std::string_view text) {
    std::string o;
    for (char ch : text) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (c >= 'A' && c <= 'Z') c = uint8_t(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_')
            o.push_back(char(c));
        else
            o += fmt::format("%{:02X}", c);
    }
    return o + (!o.empty() && o.back() == '.' ? "ixfr" : ".ixfr");
}

std::shared_ptr<const Journal> resumeJournal(std::shared_ptr<const Journal> disk, const Zone& zone,
                                             const ZoneDigest& digest, const JournalLimits& limits,
                                             std::string& why) {
    if (!disk) return nullptr;
    if (disk->apex != zone.apex()) {
        why = "it is another zone's";
        return nullptr;
    }
    if (disk->digest != digest) {
        why = fmt::format("it ends at serial {} with other data than the zone loaded (serial {})",
                          disk->serial, zone.serial());
        return nullptr;
    }
    if (disk->serial != zone.serial() && !serialGreater(zone.serial(), disk->serial)) {
        why = fmt::format("it ends at serial {}, after the zone's {}", disk->serial, zone.serial());
        return nullptr;
    }
    if (disk->serial == zone.serial()) {
        // As it was, within the limits now configured (they may have shrunk).
        if (disk->entries.size() <= limits.depth && disk->bytes() <= limits.bytes) return disk;
        if (disk->entries.empty()) return disk;
        Journal head = *disk;
        auto last = head.entries.back();
        head.entries.pop_back();
        head.serial = last->from;
        return extendJournal(&head, zone.apex(), last, digest, limits);
    }
    // Same data, a later serial (a restart under serial_policy increment or unixtime): the difference is
    // the SOA alone. The old SOA is this one with the journal's serial (the digest leaves the serial out).
    const Rdata& rd = zone.rdata(zone.soa().first);
    std::string old(reinterpret_cast<const char*>(zone.bytes(rd)), rd.len);
    setSoaSerial(old, disk->serial);
    auto cs = std::make_shared<Changeset>();
    cs->from = disk->serial;
    cs->to = zone.serial();
    cs->removed = cs->added = 1;
    appendDiffRecord(cs->records, zone.apex(), kTypeSOA, zone.soa().ttl, old);
    soaRecord(zone, cs->records);
    return extendJournal(disk.get(), zone.apex(), std::move(cs), digest, limits);
}

}  // namespace gslb::zones
