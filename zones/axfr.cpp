#include "zones/axfr.hpp"

#include <cstring>

#include "zones/packet.hpp"
#include "zones/read_name.hpp"
#include "zones/rrtype.hpp"
#include "zones/serial.hpp"
#include "zones/writer.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kHeader = 12;
constexpr uint8_t kRd = 0x01, kCd = 0x10;

inline const uint8_t* u8(std::string_view s) {
    return reinterpret_cast<const uint8_t*>(s.data());
}

}  // namespace

const char* xfrStyleName(XfrStyle s) {
    switch (s) {
        case XfrStyle::Axfr:
            return "AXFR";
        case XfrStyle::UpToDate:
            return "IXFR, up to date";
        case XfrStyle::Incremental:
            return "IXFR";
        case XfrStyle::AxfrStyle:
            return "IXFR, AXFR-style";
    }
    return "AXFR";
}

std::optional<uint32_t> ixfrRequestSerial(std::span<const uint8_t> query, const Query& q) noexcept {
    const uint8_t* p = query.data();
    const size_t end = query.size();
    if (q.questionEnd == 0 || end < kHeader) return std::nullopt;
    size_t an = size_t(p[6]) << 8 | p[7], ns = size_t(p[8]) << 8 | p[9];
    if (ns == 0) return std::nullopt;
    size_t off = q.questionEnd;
    for (size_t i = 0; i <= an; ++i) {  // the answers (none, normally), then the first authority record
        off = readName(query, off);
        if (off == 0 || end - off < 10) return std::nullopt;
        uint16_t type = uint16_t(p[off] << 8 | p[off + 1]);
        size_t rdlen = size_t(p[off + 8]) << 8 | p[off + 9];
        off += 10;
        if (rdlen > end - off) return std::nullopt;
        if (i == an) {
            if (type != kTypeSOA || rdlen < 22) return std::nullopt;
            return soaSerial({reinterpret_cast<const char*>(p + off), rdlen});
        }
        off += rdlen;
    }
    return std::nullopt;
}

IxfrPlan planIxfr(const Zone& zone, uint32_t client) {
    IxfrPlan plan;
    if (!serialGreater(zone.serial(), client)) {
        plan.style = XfrStyle::UpToDate;
        return plan;
    }
    const Journal* j = zone.journal();
    if (!j || j->serial != zone.serial()) return plan;
    std::vector<const Changeset*> seq = j->from(client);
    if (seq.empty()) return plan;
    if (seq.size() == 1) {
        // Borrowed: the journal lives as long as the zone (aliasing constructor, no owner).
        plan.diff = std::shared_ptr<const Changeset>(std::shared_ptr<const Changeset>(), seq[0]);
    } else {
        plan.diff = std::make_shared<const Changeset>(condense(seq));
    }
    // Larger than the zone, and the whole zone is the cheaper answer (RFC 1995 §4 leaves it to us; BIND's
    // max-ixfr-ratio 100 % is the same rule). Octets as both are transferred, before compression: one walk
    // over the zone, for an admitted request only.
    uint64_t zoneOctets = 0;
    for (uint32_t ni = 0; ni < zone.nodeCount(); ++ni) {
        const Node& n = zone.node(ni);
        for (const RRset* s = zone.rrsetsBegin(n); s != zone.rrsetsEnd(n); ++s) {
            zoneOctets += uint64_t(s->count) * (n.nameLen + 10);
            for (uint32_t i = s->first; i < s->first + s->count; ++i) zoneOctets += zone.rdata(i).len;
        }
    }
    if (plan.diff->records.size() > zoneOctets) {
        plan.diff.reset();
        return plan;
    }
    plan.style = XfrStyle::Incremental;
    return plan;
}

XfrWriter::XfrWriter(const Zone& zone, std::span<const uint8_t> query, size_t msgMax) noexcept
    : zone_(zone),
      msgMax_(msgMax < 512     ? 512
              : msgMax > 65535 ? 65535
                               : msgMax) {
    Query q;
    if (parseQuery(query, q) != ParseStatus::Ok || q.questionEnd <= kHeader ||
        q.questionEnd - kHeader > sizeof question_) {
        phase_ = Phase::Done;
        return;
    }
    id_ = q.id;
    opcode_ = q.opcode;
    flags_ = uint8_t((q.rd ? kRd : 0) | (q.cd ? kCd : 0));
    qlen_ = uint16_t(q.questionEnd - kHeader);
    qnameLen_ = q.qnameLen;
    std::memcpy(question_, query.data() + kHeader, qlen_);
    if (q.qtype != kTypeIXFR) return;
    std::optional<uint32_t> client = ixfrRequestSerial(query, q);
    requestSerial_ = client.value_or(0);
    IxfrPlan plan = client ? planIxfr(zone, *client) : IxfrPlan{};
    style_ = plan.style;
    diff_ = std::move(plan.diff);
}

bool XfrWriter::current(std::string_view& owner, uint16_t& type, uint32_t& ttl, std::string_view& rdata) {
    if (phase_ == Phase::LeadSoa || phase_ == Phase::TrailSoa) {
        const Rdata& rd = zone_.rdata(zone_.soa().first);
        owner = zone_.apex();
        type = kTypeSOA;
        ttl = zone_.soa().ttl;
        rdata = {reinterpret_cast<const char*>(zone_.bytes(rd)), rd.len};
        return true;
    }
    if (style_ == XfrStyle::Incremental) {
        DiffReader rd(std::string_view(diff_->records).substr(diffOff_));
        DiffRecord r;
        if (!rd.next(r)) {
            phase_ = Phase::TrailSoa;
            return false;
        }
        owner = r.owner;
        type = r.type;
        ttl = r.ttl;
        rdata = r.rdata;
        diffLen_ = r.whole.size();
        return true;
    }
    // Body: skip to the next record that exists (empty RRsets and nodes without data, such as empty
    // non-terminals, hold none; the SOA goes only first and last).
    while (node_ < zone_.nodeCount()) {
        const Node& n = zone_.node(node_);
        const RRset* s = zone_.rrsetsBegin(n) + set_;
        if (s >= zone_.rrsetsEnd(n)) {
            ++node_;
            set_ = rec_ = 0;
            continue;
        }
        if (s->type == kTypeSOA || rec_ >= s->count) {
            ++set_;
            rec_ = 0;
            continue;
        }
        const Rdata& rd = zone_.rdata(s->first + rec_);
        owner = zone_.nodeName(n);
        type = s->type;
        ttl = s->ttl;
        rdata = {reinterpret_cast<const char*>(zone_.bytes(rd)), rd.len};
        // The RRSIGs at a name are one RRset of the compiled zone (with their lowest TTL); each goes out with
        // the TTL of the RRset it covers, its Original TTL field (RFC 4034 §3).
        if (type == kTypeRRSIG && rd.len >= 8) {
            const uint8_t* b = zone_.bytes(rd);
            ttl = uint32_t(b[4]) << 24 | uint32_t(b[5]) << 16 | uint32_t(b[6]) << 8 | b[7];
        }
        return true;
    }
    phase_ = Phase::TrailSoa;
    return false;
}

void XfrWriter::advance() {
    switch (phase_) {
        case Phase::LeadSoa:
            // RFC 1995 §4: to a client that is up to date, the SOA alone.
            phase_ = style_ == XfrStyle::UpToDate ? Phase::Done : Phase::Body;
            break;
        case Phase::Body:
            if (style_ == XfrStyle::Incremental)
                diffOff_ += diffLen_;
            else
                ++rec_;
            break;
        case Phase::TrailSoa:
            phase_ = Phase::Done;
            break;
        case Phase::Done:
            break;
    }
}

size_t XfrWriter::next(std::span<uint8_t> out) noexcept {
    if (phase_ == Phase::Done || out.size() < msgMax_) return 0;
    Writer w(out.data(), msgMax_);
    uint8_t zero[kHeader] = {};
    w.bytes(zero, kHeader);
    bool first = messages_ == 0;
    if (first) {
        w.bytes(question_, qlen_);
        w.remember(question_, qnameLen_, kHeader);
    }
    uint8_t rcode = 0;
    while (phase_ != Phase::Done) {
        std::string_view owner;
        uint16_t type = 0;
        uint32_t ttl = 0;
        std::string_view rd;
        if (!current(owner, type, ttl, rd)) continue;  // the body ended: the closing SOA is next
        auto m = w.mark();
        if (w.rr(kAnswer, u8(owner), owner.size(), type, ttl, u8(rd), rd.size())) {
            advance();
            continue;
        }
        w.rollback(m);  // nothing of a record that did not fit stays in this message
        if (w.count(kAnswer) > 0) break;
        // Not even alone in a message: the transfer cannot be complete. Say so rather than skip it.
        w.rollback(Writer::Mark{first ? kHeader + qlen_ : kHeader, {0, 0, 0}, 0});
        rcode = 2;  // SERVFAIL
        phase_ = Phase::Done;
    }
    uint8_t* h = out.data();
    h[0] = uint8_t(id_ >> 8);
    h[1] = uint8_t(id_);
    h[2] = uint8_t(0x80 | (opcode_ << 3) | 0x04 | (flags_ & kRd));  // QR, AA (RFC 5936 §2.2.1)
    h[3] = uint8_t((flags_ & kCd) | rcode);
    h[4] = 0;
    h[5] = first ? 1 : 0;
    h[6] = uint8_t(w.count(kAnswer) >> 8);
    h[7] = uint8_t(w.count(kAnswer));
    ++messages_;
    return w.size();
}

}  // namespace gslb::zones
