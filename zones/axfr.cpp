#include "zones/axfr.hpp"

#include <cstring>

#include "zones/packet.hpp"
#include "zones/rrtype.hpp"
#include "zones/writer.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kHeader = 12;
constexpr uint8_t kRd = 0x01, kCd = 0x10;

inline const uint8_t* u8(std::string_view s) {
    return reinterpret_cast<const uint8_t*>(s.data());
}

}  // namespace

AxfrWriter::AxfrWriter(const Zone& zone, std::span<const uint8_t> query, size_t msgMax) noexcept
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
}

bool AxfrWriter::current(std::string_view& owner, uint16_t& type, uint32_t& ttl, const Rdata*& rd) {
    if (phase_ == Phase::LeadSoa || phase_ == Phase::TrailSoa) {
        owner = zone_.apex();
        type = kTypeSOA;
        ttl = zone_.soa().ttl;
        rd = &zone_.rdata(zone_.soa().first);
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
        owner = zone_.nodeName(n);
        type = s->type;
        ttl = s->ttl;
        rd = &zone_.rdata(s->first + rec_);
        // The RRSIGs at a name are one RRset of the compiled zone (with their lowest TTL); each goes out with
        // the TTL of the RRset it covers, its Original TTL field (RFC 4034 §3).
        if (type == kTypeRRSIG && rd->len >= 8) {
            const uint8_t* b = zone_.bytes(*rd);
            ttl = uint32_t(b[4]) << 24 | uint32_t(b[5]) << 16 | uint32_t(b[6]) << 8 | b[7];
        }
        return true;
    }
    phase_ = Phase::TrailSoa;
    return false;
}

void AxfrWriter::advance() {
    switch (phase_) {
        case Phase::LeadSoa:
            phase_ = Phase::Body;
            break;
        case Phase::Body:
            ++rec_;
            break;
        case Phase::TrailSoa:
            phase_ = Phase::Done;
            break;
        case Phase::Done:
            break;
    }
}

size_t AxfrWriter::next(std::span<uint8_t> out) noexcept {
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
        const Rdata* rd = nullptr;
        if (!current(owner, type, ttl, rd)) continue;  // the body ended: the closing SOA is next
        auto m = w.mark();
        if (w.rr(kAnswer, u8(owner), owner.size(), type, ttl, zone_.bytes(*rd), rd->len)) {
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
