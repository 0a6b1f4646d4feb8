#include "zones/zone.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <strings.h>

#include "zones/rrtype.hpp"

namespace gslb::zones {

int targetNameOffset(uint16_t type) {
    switch (type) {
        case kTypeNS:
        case kTypeCNAME:
            return 0;
        case kTypeMX:
        case kTypeSVCB:
        case kTypeHTTPS:
            return 2;  // after the preference / SvcPriority (RFC 9460 §2.2)
        case kTypeSRV:
            return 6;
        default:
            return -1;
    }
}

namespace {

std::string_view parentOf(std::string_view name) {
    if (name.empty() || name[0] == 0) return {};
    return name.substr(size_t(uint8_t(name[0])) + 1);
}

}  // namespace

uint32_t Zone::find(std::string_view lowerWire) const {
    const uint32_t full = hashName(lowerWire);
    uint32_t h = full & mask_;
    for (;;) {
        const Slot& s = index_[h];
        if (s.node == kNone) return kNone;
        // The stored hash rejects almost every other name without touching the node or its bytes.
        if (s.hash == full) {
            const Node& n = nodes_[s.node];
            if (n.nameLen == lowerWire.size() &&
                std::memcmp(bytes_.data() + n.nameOff, lowerWire.data(), lowerWire.size()) == 0)
                return s.node;
        }
        h = (h + 1) & mask_;
    }
}

const RRset* Zone::rrset(const Node& n, uint16_t type) const {
    for (uint32_t i = n.firstSet; i < n.firstSet + n.setCount; ++i)
        if (rrsets_[i].type == type) return &rrsets_[i];
    return nullptr;
}

uint32_t Zone::addBytes(std::string_view b) {
    uint32_t off = uint32_t(bytes_.size());
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return off;
}

void Zone::insertIndex(uint32_t node, uint32_t full) {
    uint32_t h = full & mask_;
    while (index_[h].node != kNone) h = (h + 1) & mask_;
    index_[h] = Slot{node, full};
}

uint32_t Zone::addNode(std::string_view name) {
    if ((nodes_.size() + 1) * 2 > index_.size()) {
        // Keep the table at most half full: look-ups stay short.
        std::vector<Slot> old(index_.size() * 2, Slot{kNone, 0});
        old.swap(index_);
        mask_ = uint32_t(index_.size() - 1);
        for (const Slot& s : old)
            if (s.node != kNone) insertIndex(s.node, s.hash);
    }
    Node nd{};
    nd.nameOff = addBytes(name);
    nd.nameLen = uint16_t(name.size());
    nd.dynamic = -1;
    nodes_.push_back(nd);
    insertIndex(uint32_t(nodes_.size() - 1), hashName(name));
    return uint32_t(nodes_.size() - 1);
}

uint32_t SourceSet::fileIndex(const std::string& path) {
    for (uint32_t i = 0; i < files_.size(); ++i)
        if (files_[i] == path) return i;
    files_.push_back(path);
    return uint32_t(files_.size() - 1);
}

std::string_view SourceSet::store(std::string_view bytes) {
    // Blocks grow from 64 KB to 1 MB: a small zone (or a test, or a fuzz input) does not pay for a large
    // block, a large one needs a few dozen. Not zeroed (make_unique<char[]> would clear every block).
    constexpr size_t kFirstBlock = 64u << 10, kMaxBlock = 1u << 20;
    if (bytes.empty()) return {};
    if (bytes.size() > left_) {
        size_t size =
            std::max(std::min(kMaxBlock, kFirstBlock << std::min<size_t>(blocks_.size(), 4)), bytes.size());
        blocks_.push_back(std::unique_ptr<char[]>(new char[size]));
        cur_ = blocks_.back().get();
        left_ = size;
    }
    std::memcpy(cur_, bytes.data(), bytes.size());
    std::string_view v(cur_, bytes.size());
    cur_ += bytes.size();
    left_ -= bytes.size();
    return v;
}

void SourceSet::append(SourceSet&& other) {
    std::vector<uint32_t> map(other.files_.size());
    for (size_t i = 0; i < map.size(); ++i) map[i] = fileIndex(other.files_[i]);
    records.reserve(records.size() + other.records.size());
    for (SourceRecord r : other.records) {
        r.file = map[r.file];
        records.push_back(r);
    }
    // Blocks are taken over, not copied: the views stay valid. This set keeps filling its own current block.
    for (auto& b : other.blocks_) blocks_.push_back(std::move(b));
    other.records.clear();
    other.blocks_.clear();
    other.cur_ = nullptr;
    other.left_ = 0;
}

namespace {

// Hidden data: records below a DNAME or a zone cut load but are never answered (the DNAME redirects, the cut
// refers). Below a DNAME there must be none (RFC 6672 §2.3; NSD refuses the zone); below a cut only glue
// belongs, the address records of a name server of some cut (RFC 1034 §4.2.1). Either is almost always a
// record the operator meant to serve, so each such name is reported once, at its first record. Not refused:
// the zone serves correctly, and a reload that used to pass must not start failing over data nobody sees.
template <class Where>
void hiddenDataWarnings(Zone& z, const std::vector<SourceRecord>& recs, const std::vector<uint32_t>& order,
                        const std::vector<uint32_t>& start, const std::vector<uint32_t>& parent, Where where,
                        std::vector<LoadWarning>& out) {
    constexpr size_t kMax = 20;  // one zone's worth of a systematic mistake is not a thousand lines
    std::vector<bool> nsTarget(z.nodeCount(), false);
    for (uint32_t ni = 0; ni < z.nodeCount(); ++ni)
        if (const RRset* ns = z.rrset(z.node(ni), kTypeNS))
            for (uint32_t q = ns->first; q < ns->first + ns->count; ++q)
                if (uint32_t t = z.rdata(q).target; t != kNone) nsTarget[t] = true;
    size_t hidden = 0;
    for (uint32_t i = 1; i < z.nodeCount(); ++i) {
        const Node& n = z.node(i);
        if (!(n.flags & kNodeOccluded) || n.setCount == 0) continue;
        uint32_t by = kNone;  // the outermost DNAME or cut above
        for (uint32_t p = parent[i]; p != kNone; p = parent[p])
            if ((z.node(p).flags & kNodeDname) || (p != 0 && (z.node(p).flags & kNodeDelegation))) by = p;
        if (by == kNone) continue;
        const bool dname = z.node(by).flags & kNodeDname;
        const SourceRecord* first = nullptr;
        uint32_t firstIdx = UINT32_MAX;
        for (uint32_t j = start[i]; j < start[i + 1]; ++j) {
            const SourceRecord& r = recs[order[j]];
            bool glue = !dname && nsTarget[i] && (r.type == kTypeA || r.type == kTypeAAAA);
            if (!glue && order[j] < firstIdx) {
                firstIdx = order[j];
                first = &r;
            }
        }
        if (!first) continue;
        if (++hidden > kMax) continue;
        std::string name = nameToText(z.nodeName(n)), above = nameToText(z.nodeName(z.node(by)));
        out.push_back(LoadWarning{
            where(*first),
            dname ? fmt::format("{} is below the DNAME at {} and is never served (RFC 6672 §2.3: a DNAME "
                                "owner has no names below it)",
                                name, above)
                  : fmt::format("{} is below the zone cut at {} and is not glue (no NS names it): it is "
                                "never served",
                                name, above)});
    }
    if (hidden > kMax)
        out.push_back(LoadWarning{z.file(), fmt::format("{} more names below a DNAME or a zone cut that are "
                                                        "never served",
                                                        hidden - kMax)});
}

}  // namespace

bool Zone::sameData(const Zone& o) const {
    if (signer_ || o.signer_ || apex_ != o.apex_ || nodes_.size() != o.nodes_.size() ||
        rrsets_.size() != o.rrsets_.size() || rdatas_.size() != o.rdatas_.size())
        return false;
    for (size_t i = 0; i < nodes_.size(); ++i) {
        const Node &a = nodes_[i], &b = o.nodes_[i];
        if (a.flags != b.flags || a.setCount != b.setCount || a.firstSet != b.firstSet ||
            nodeName(a) != o.nodeName(b))
            return false;
    }
    for (size_t i = 0; i < rrsets_.size(); ++i) {
        const RRset &a = rrsets_[i], &b = o.rrsets_[i];
        if (a.type != b.type || a.ttl != b.ttl || a.first != b.first || a.count != b.count) return false;
    }
    for (size_t i = 0; i < rdatas_.size(); ++i) {
        const Rdata &a = rdatas_[i], &b = o.rdatas_[i];
        if (a.len != b.len || (a.len && std::memcmp(bytes(a), o.bytes(b), a.len) != 0)) return false;
    }
    return true;
}

namespace {

std::string where(const SourceSet& set, const SourceRecord& r) {
    return fmt::format("{}:{}", set.file(r), r.line);
}

// Every record inside the zone, and exactly one SOA at the apex whose rdata is two names and five numbers:
// that SOA, or null with `error`.
const SourceRecord* findSoa(const WireName& apex, const SourceSet& set, const std::string& zoneName,
                            const std::string& file, std::string& error) {
    const std::vector<SourceRecord>& recs = set.records;
    const SourceRecord* soa = nullptr;
    for (const auto& r : recs) {
        if (!isSubdomain(r.owner, apex)) {
            error =
                fmt::format("{}: {} is outside the zone {}", where(set, r), nameToText(r.owner), zoneName);
            return nullptr;
        }
        if (r.type == kTypeSOA) {
            if (r.owner != std::string_view(apex)) {
                error = fmt::format("{}: SOA owner {} is not the zone apex {}", where(set, r),
                                    nameToText(r.owner), zoneName);
                return nullptr;
            }
            if (soa) {
                error =
                    fmt::format("{}: a second SOA record (the first is at line {}); a zone has exactly one",
                                where(set, r), soa->line);
                return nullptr;
            }
            // MNAME, RNAME and five 32-bit fields (RFC 1035 §3.3.13): generic `\# 2 0000` data gets past
            // ldns, and the serial and MINIMUM are read from the last 20 octets.
            const auto* rd = reinterpret_cast<const uint8_t*>(r.rdata.data());
            size_t m = r.rdata.size() >= 22 ? wireNameLen(rd, r.rdata.size() - 20) : 0;
            size_t rn = m ? wireNameLen(rd + m, r.rdata.size() - 20 - m) : 0;
            if (!m || !rn || m + rn != r.rdata.size() - 20) {
                error = fmt::format("{}: SOA rdata is not two names and five numbers (RFC 1035 §3.3.13)",
                                    where(set, r));
                return nullptr;
            }
            soa = &r;
        }
    }
    if (!soa)
        error = fmt::format("{}:{}: no SOA record at the apex {}", file, recs.empty() ? 1 : recs.front().line,
                            zoneName);
    return soa;
}

// Records grouped by node (a counting sort: file order inside a node), then by type inside each node:
// order[start[n] .. start[n + 1]) are node n's records. `recNode` is consumed.
void groupByNode(const std::vector<SourceRecord>& recs, std::vector<uint32_t>& recNode, size_t nodeTotal,
                 std::vector<uint32_t>& start, std::vector<uint32_t>& order) {
    start.assign(nodeTotal + 1, 0);
    for (uint32_t nd : recNode) ++start[nd + 1];
    for (size_t i = 0; i < nodeTotal; ++i) start[i + 1] += start[i];
    order.assign(recs.size(), 0);
    {
        std::vector<uint32_t> fill(start.begin(), start.end() - 1);
        for (uint32_t i = 0; i < recs.size(); ++i) order[fill[recNode[i]]++] = i;
    }
    std::vector<uint32_t>().swap(recNode);
    for (size_t nd = 0; nd < nodeTotal; ++nd) {
        auto b = order.begin() + start[nd], e = order.begin() + start[nd + 1];
        if (e - b > 1)
            std::stable_sort(b, e, [&](uint32_t a, uint32_t c) { return recs[a].type < recs[c].type; });
    }
}

// One owner's records, order[k, e): no CNAME beside other data (RFC 1034 §3.6.2; RRSIG/NSEC may coexist,
// RFC 4035 §2.5), and no two different CNAMEs (RFC 2181 §10.1; identical ones are one record).
bool checkCnames(const SourceSet& set, const std::vector<uint32_t>& order, size_t k, size_t e,
                 std::string& error) {
    const std::vector<SourceRecord>& recs = set.records;
    const SourceRecord& first = recs[order[k]];
    const SourceRecord* cname = nullptr;
    const SourceRecord* other = nullptr;
    int cnameCount = 0;
    for (size_t j = k; j < e; ++j) {
        const auto& r = recs[order[j]];
        if (r.type == kTypeCNAME) {
            ++cnameCount;
            if (!cname || r.line > cname->line) cname = &r;
        } else if (r.type != kTypeRRSIG && r.type != kTypeNSEC) {
            if (!other || r.line > other->line) other = &r;
        }
    }
    if (cname && other) {
        const SourceRecord& later =
            (other->file == cname->file && other->line > cname->line) ? *other : *cname;
        error = fmt::format("{}: CNAME beside other data at {} (RFC 1034 §3.6.2)", where(set, later),
                            nameToText(first.owner));
        return false;
    }
    if (cnameCount > 1) {
        std::string_view firstRd;
        bool seen = false;
        for (size_t j = k; j < e; ++j) {
            const auto& r = recs[order[j]];
            if (r.type != kTypeCNAME) continue;
            if (!seen) {
                firstRd = r.rdata;
                seen = true;
            } else if (r.rdata.size() != firstRd.size() ||
                       strncasecmp(r.rdata.data(), firstRd.data(), firstRd.size()) != 0) {
                error = fmt::format("{}: more than one CNAME at {} (RFC 2181 §10.1)", where(set, r),
                                    nameToText(first.owner));
                return false;
            }
        }
    }
    return true;
}

}  // namespace

// Nodes: every owner, every empty non-terminal between an owner and the apex (RFC 4592 §2.2.2), entered in
// the zone's own open-addressing index as they are made, in file order. Each record learns its node from the
// index (one hash look-up, no sort of a million names); a parent is always made before its children.
void Zone::indexNodes(const std::vector<SourceRecord>& recs, std::vector<uint32_t>& parent,
                      std::vector<uint32_t>& recNode) {
    size_t cap = 16;
    while (cap < recs.size() * 2) cap <<= 1;
    index_.assign(cap, Slot{kNone, 0});
    mask_ = uint32_t(cap - 1);
    nodes_.reserve(recs.size() + 1);
    bytes_.reserve(recs.size() * 24);
    addNode(apex_);
    parent.assign(1, kNone);  // parent node of each node
    parent.reserve(recs.size() + 1);
    std::string_view chain[kMaxLabels];
    recNode.assign(recs.size(), 0);
    for (size_t i = 0; i < recs.size(); ++i) {
        std::string_view n = recs[i].owner;
        if (i > 0 && n == recs[i - 1].owner) {
            recNode[i] = recNode[i - 1];
            continue;
        }
        uint32_t self = find(n);
        if (self == kNone) {
            size_t depth = 0;
            std::string_view p = n;
            uint32_t up = kNone;
            for (; p.size() > apex_.size(); p = parentOf(p)) {
                up = p.data() == n.data() ? kNone : find(p);  // n itself is known to be missing
                if (up != kNone) break;
                chain[depth++] = p;
            }
            if (p.size() <= apex_.size()) up = 0;  // reached the apex
            while (depth > 0) {
                parent.push_back(up);
                up = addNode(chain[--depth]);
            }
            self = up;  // the last node made is n itself
        }
        recNode[i] = self;
    }
    apexNode_ = 0;
    apexLabels_ = labelCount(apex_);
    nodes_[0].flags |= kNodeApex;
}

// RRsets, node by node: each node gets a contiguous range. RFC 2181 §5: duplicate records are one record;
// §5.2: differing TTLs in an RRset are treated as the lowest of them. The apex must have NS records.
bool Zone::buildRRsets(const SourceSet& set, const std::vector<uint32_t>& order,
                       const std::vector<uint32_t>& start, const SourceRecord& soa, std::string& error) {
    const std::vector<SourceRecord>& recs = set.records;
    const size_t nodeTotal = nodes_.size();
    std::vector<RRset> sets;
    std::vector<Rdata> rds;
    sets.reserve(recs.size());
    rds.reserve(recs.size());
    for (uint32_t nodeIdx = 0; nodeIdx < nodeTotal; ++nodeIdx) {
        const size_t k = start[nodeIdx], e = start[nodeIdx + 1];
        nodes_[nodeIdx].firstSet = uint32_t(sets.size());
        nodes_[nodeIdx].setCount = 0;
        if (k == e) continue;  // an empty non-terminal
        if (!checkCnames(set, order, k, e, error)) return false;
        if (nodeIdx == 0) {
            bool hasNs = false;
            for (size_t j = k; j < e; ++j) hasNs |= recs[order[j]].type == kTypeNS;
            if (!hasNs) {
                error =
                    fmt::format("{}:{}: no NS records at the apex {}", set.file(soa), soa.line, nameText_);
                return false;
            }
        }
        for (size_t j = k; j < e;) {
            uint16_t type = recs[order[j]].type;
            size_t te = j;
            while (te < e && recs[order[te]].type == type) ++te;
            RRset s{type, UINT32_MAX, uint32_t(rds.size()), 0};
            for (size_t m = j; m < te; ++m) {
                const auto& r = recs[order[m]];
                bool dup = false;
                for (uint32_t q = s.first; q < s.first + s.count && !dup; ++q)
                    // Empty rdata (`TYPE65534 \# 0`) has a null data(): memcmp must not see it (UBSan).
                    dup = rds[q].len == r.rdata.size() &&
                          (r.rdata.empty() ||
                           std::memcmp(bytes_.data() + rds[q].offset, r.rdata.data(), r.rdata.size()) == 0);
                s.ttl = std::min(s.ttl, r.ttl);
                if (dup) continue;
                rds.push_back(Rdata{addBytes(r.rdata), uint16_t(r.rdata.size()), kNone});
                ++s.count;
            }
            sets.push_back(s);
            ++nodes_[nodeIdx].setCount;
            j = te;
        }
    }
    if (nodes_[0].setCount == 0) {
        error = fmt::format("{}:{}: no NS records at the apex {}", set.file(soa), soa.line, nameText_);
        return false;
    }
    rrsets_ = std::move(sets);
    rdatas_ = std::move(rds);
    return true;
}

// Zone cuts, DNAMEs and what they occlude.
void Zone::markCuts(const std::vector<uint32_t>& parent) {
    for (uint32_t i = 1; i < nodes_.size(); ++i)
        if (rrset(nodes_[i], kTypeNS)) nodes_[i].flags |= kNodeDelegation;
    for (uint32_t i = 0; i < nodes_.size(); ++i)
        if (rrset(nodes_[i], kTypeDNAME)) nodes_[i].flags |= kNodeDname;
    // Below a cut: a parent that is a cut or is itself below one. Parents come before children. Names below
    // a DNAME (the apex's too) are never answered from either (RFC 6672 §2.4).
    for (uint32_t i = 1; i < nodes_.size(); ++i) {
        const Node& p = nodes_[parent[i]];
        if ((parent[i] != 0 && (p.flags & (kNodeDelegation | kNodeOccluded))) || (p.flags & kNodeDname))
            nodes_[i].flags |= kNodeOccluded;
    }
}

// Resolve the names inside NS/MX/SRV/CNAME/SVCB/HTTPS rdata to nodes of this zone.
void Zone::resolveTargets() {
    uint8_t lower[kMaxNameLen];
    for (uint32_t ni = 0; ni < nodes_.size(); ++ni) {
        const Node& node = nodes_[ni];
        for (uint32_t si = node.firstSet; si < node.firstSet + node.setCount; ++si) {
            const RRset& s = rrsets_[si];
            int off = targetNameOffset(s.type);
            if (off < 0) continue;
            const bool svc = s.type == kTypeSVCB || s.type == kTypeHTTPS;
            for (uint32_t q = s.first; q < s.first + s.count; ++q) {
                Rdata& rd = rdatas_[q];
                if (rd.len <= off) continue;
                const uint8_t* b = bytes_.data() + rd.offset;
                size_t len = wireNameLen(b + off, rd.len - off);
                if (len == 0 || len > kMaxNameLen) continue;
                if (svc && len == 1) {
                    // RFC 9460 §2.5.2: ServiceMode "." is the owner itself; AliasMode "." is "no service".
                    if (b[0] != 0 || b[1] != 0) rd.target = ni;
                    continue;
                }
                std::memcpy(lower, b + off, len);
                lowerName(lower, len);
                rd.target = find({reinterpret_cast<const char*>(lower), len});
            }
        }
    }
}

// The SOA's serial and the negative-answer TTL (RFC 2308 §5: the lesser of the SOA's TTL and its MINIMUM).
void Zone::readSoa() {
    soa_ = rrset(nodes_[0], kTypeSOA);
    const Rdata& sr = rdatas_[soa_->first];
    const uint8_t* p = bytes_.data() + sr.offset + sr.len - 20;
    auto be32 = [](const uint8_t* b) {
        return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
    };
    serial_ = be32(p);
    negTtl_ = std::min(soa_->ttl, be32(p + 16));
}

std::unique_ptr<Zone> Zone::compile(const WireName& apex, const SourceSet& set, const std::string& file,
                                    std::string& error) {
    const std::vector<SourceRecord>& recs = set.records;
    auto z = std::make_unique<Zone>();
    z->apex_ = apex;
    z->nameText_ = nameToText(apex);
    z->file_ = file;
    const SourceRecord* soa = findSoa(apex, set, z->nameText_, file, error);
    if (!soa) return nullptr;
    std::vector<uint32_t> parent, recNode, start, order;
    z->indexNodes(recs, parent, recNode);
    groupByNode(recs, recNode, z->nodes_.size(), start, order);
    if (!z->buildRRsets(set, order, start, *soa, error)) return nullptr;
    z->markCuts(parent);
    z->resolveTargets();
    z->warnings_ = set.warnings;
    auto at = [&](const SourceRecord& r) { return where(set, r); };
    hiddenDataWarnings(*z, recs, order, start, parent, at, z->warnings_);
    z->readSoa();
    return z;
}

}  // namespace gslb::zones
