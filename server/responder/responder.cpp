#include "server/responder/responder.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctime>

#include "server/base/clock.hpp"
#include "server/base/log.hpp"
#include "server/responder/acl.hpp"
#include "server/responder/transfer.hpp"

namespace gslb::server {
namespace {

constexpr size_t kAnswerAlign = 64;  // a cache line

bool exempt(const RrlConf& conf, const sockaddr_storage* peer) {
    for (const auto& p : conf.exempt)
        if (p.matches(reinterpret_cast<const sockaddr*>(peer))) return true;
    return false;
}

// A transfer over the server's caps (SERVFAIL): no RFC 8914 code is about load; "Other" says it in words.
constexpr zones::Ede kEdeBusy{zones::Ede::kOther, "too many zone transfers in flight; retry later"};

uint64_t unixNow() {
    return uint64_t(time(nullptr));  // TSIG's Time Signed is wall-clock seconds (RFC 8945 §4.2)
}

}  // namespace

std::string peerText(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
        inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof buf);
        return fmt::format("{}:{}", buf, ntohs(s4->sin_port));
    }
    if (sa->sa_family == AF_INET6) {
        const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
        inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof buf);
        return fmt::format("[{}]:{}", buf, ntohs(s6->sin6_port));
    }
    return buf;
}

// The answers are packed one after another (answerDatagrams), each with kAnswerRoom of room as answer()
// wants: a batch of small answers touches a few cache lines instead of the first line of 32 slots 64 KiB
// apart, which all fall in the same cache set.
Responder::Responder(Shared& shared, size_t row, uint64_t seed)
    : shared_(shared),
      row_(row),
      selector_(row, seed),
      answers_(new uint8_t[kBatch * (kAnswerRoom + kAnswerAlign)]) {}

Responder::~Responder() = default;

const Snapshot& Responder::refresh() {
    // Selector::rebind compares the new hostnames with the old ones: the old snapshot lives until it has.
    std::shared_ptr<const Snapshot> old = snap_;
    uint64_t before = gen_;
    shared_.holder.refresh(snap_, gen_);
    if (gen_ != before) selector_.rebind(&snap_->gslb);
    return *snap_;
}

void Responder::answerDatagrams(const Snapshot& snap, Datagram* dg, int n) {
    uint32_t now = uint32_t(time(nullptr));  // once per batch: cookie timestamps are in seconds
    const uint64_t nowNs = uint64_t(monotonicNs());
    RateLimiter* rrl = snap.config.rrl.enabled ? shared_.rrl.get() : nullptr;
    // Every query of the batch is answered first, then counted: RRL's locate() prefetches each answer's
    // bucket (a cache miss, most likely), and it arrives while the next queries are answered.
    RateLimiter::Slot* slots = slots_;
    bool* limitable = limitable_;
    size_t off = 0;  // where the next packed answer goes in answers_
    for (int i = 0; i < n; ++i) {
        auto& res = dg[i].res;
        const auto* peer = reinterpret_cast<const sockaddr*>(dg[i].peer);
        bool packed = !dg[i].out;
        if (packed) dg[i].out = answers_.get() + off;
        res = zones::answer(snap.db, snap.answer, dg[i].query, false, {dg[i].out, kAnswerRoom}, &selector_,
                            zones::ClientInfo{peer, now});
        if (res.action == zones::Action::Transfer) [[unlikely]]
            admitUdpIxfr(snap, dg[i], now);
        // The next answer starts after this one, on a fresh cache line. A signed query's response is signed
        // (or replaced by a TSIG error) below, in place and longer: it keeps all its room.
        if (packed) off += res.tsigAt ? kAnswerRoom : (res.len + kAnswerAlign - 1) & ~(kAnswerAlign - 1);
        // RRL: over UDP only, and never for a client whose server cookie proves its address (RFC 7873
        // §5.2.5: a spoofed source cannot have one) or an exempt prefix.
        limitable[i] = rrl && res.action == zones::Action::Send && res.len != 0 &&
                       res.cookie != zones::Cookie::Valid && !exempt(snap.config.rrl, dg[i].peer);
        if (limitable[i]) slots[i] = rrl->locate(snap.config.rrl, peer, res);
    }
    WorkerStats& st = stats();
    for (int i = 0; i < n; ++i) {
        uint8_t* obuf = dg[i].out;
        auto& res = dg[i].res;
        bump(st.udp);
        if (res.action != zones::Action::Send || res.len == 0) {
            bump(st.dropped);
            res.len = 0;
            continue;
        }
        if (res.cookie != zones::Cookie::None) bump(st.cookie[int(res.cookie) - 1]);
        if (limitable[i]) {
            auto v = rrl->account(snap.config.rrl, slots[i], nowNs, slipCount_);
            if (v == RateLimiter::Verdict::Drop) {
                bump(st.rrlDropped);
                res.len = 0;
                continue;
            }
            if (v == RateLimiter::Verdict::Slip) {
                bool badCookie = res.cookie != zones::Cookie::None && res.optStart;
                res.len = zones::slip({obuf, kAnswerRoom}, res, badCookie);
                if (badCookie) res.rcode = 23;
                bump(st.rrlSlipped);
            }
        }
        // A signed query: verified, and its response (the slipped one too) signed, last of all.
        if (res.tsigAt) {
            zones::TsigSession ts;
            size_t len = res.len;
            uint8_t rc = res.rcode;
            if (verifyTsig(snap, dg[i].query, res.tsigAt, {obuf, kAnswerRoom}, ts, len, rc,
                           reinterpret_cast<const sockaddr*>(dg[i].peer)))
                len = signAnswer(snap.answer, dg[i].query, {obuf, kAnswerRoom}, len, rc, ts);
            res.len = len;
            res.rcode = rc;
            if (len == 0) {
                bump(st.dropped);
                continue;
            }
        }
        st.count(res.qtype, res.rcode);
        if (obuf[2] & 0x02) bump(st.truncated);
    }
}

[[gnu::noinline, gnu::cold]] void Responder::admitUdpIxfr(const Snapshot& snap, Datagram& d, uint32_t now) {
    // A signed request is verified here to know its key; answerDatagrams verifies it again to sign whatever
    // goes back (a rare path: twice is cheap). A bad TSIG leaves the SOA-only answer for answerDatagrams to
    // replace with the TSIG error.
    const auto* peer = reinterpret_cast<const sockaddr*>(d.peer);
    d.res.action = zones::Action::Send;
    const zones::TsigKey* key = nullptr;
    if (d.res.tsigAt) {
        zones::TsigSession ts;
        if (!zones::verifyRequest(d.query, d.res.tsigAt, snap.config.keys, unixNow(), ts) ||
            ts.error != zones::kTsigNoError)
            return;
        key = ts.key;
    }
    // UDP is not TLS: an entry that requires XoT does not admit this client (the SOA alone, as to anyone).
    if (!xfr::axfrRefusal(snap.config, xfr::axfrAcl(snap.config, d.res.zone->name()), peer, key, {}).empty())
        return;
    d.res = zones::answer(snap.db, snap.answer, d.query, false, {d.out, kAnswerRoom}, &selector_,
                          zones::ClientInfo{peer, now, true});
    d.res.action = zones::Action::Send;
}

Reply Responder::answer(const Snapshot& snap, std::span<const uint8_t> query, std::span<uint8_t> out,
                        const Client& client, Transport transport) {
    if (transport == Transport::Udp) {
        // The batch of one: the same RRL, cookie and TSIG steps as the sockets' batches.
        Datagram d{query, reinterpret_cast<const sockaddr_storage*>(client.addr), out.data(), {}};
        answerDatagrams(snap, &d, 1);
        return Reply{d.res.len ? Reply::Kind::Send : Reply::Kind::None, d.res.len, nullptr};
    }
    WorkerStats& st = stats();
    bump(transport == Transport::Tls ? st.tls : st.tcp);
    out = out.first(Transfer::kMessageMax);
    auto res = zones::answer(snap.db, snap.answer, query, true, out, &selector_,
                             zones::ClientInfo{client.addr, uint32_t(time(nullptr))});
    size_t outLen = res.len;
    zones::TsigSession ts;
    bool signedOk = false;  // the query's TSIG verified: whatever goes back is signed
    uint8_t rcode = res.rcode;
    if (res.action != zones::Action::Drop && res.tsigAt) {
        signedOk = verifyTsig(snap, query, res.tsigAt, out, ts, outLen, rcode, client.addr);
        if (!signedOk) res.action = zones::Action::Send;  // the TSIG error goes back instead
    }
    if (res.action == zones::Action::Transfer) {
        Reply r = admitTransfer(snap, query, out, client, transport, res, signedOk, ts, outLen, rcode);
        if (r.kind == Reply::Kind::Transfer) return r;
    } else if (res.action == zones::Action::Drop) {
        outLen = 0;
        bump(st.dropped);
    } else if (transport == Transport::Tls && res.padding && (signedOk || !res.tsigAt)) {
        // RFC 7830 §3: a query that asked for padding over an encrypted transport gets a padded response,
        // to RFC 8467 §4.1's 468-octet blocks counted with the TSIG RR that follows (so that the message on
        // the wire is the block's multiple); never over plain TCP or UDP (RFC 7830 §6). A TSIG error reply
        // (signed or not) is left as it is.
        outLen =
            zones::pad(out, outLen, res.optStart, signedOk ? zones::tsigRecordSize(*ts.key) : 0, out.size());
    }
    if (signedOk && outLen) outLen = signAnswer(snap.answer, query, out, outLen, rcode, ts);
    if (res.action != zones::Action::Drop) st.count(res.qtype, rcode);
    return Reply{outLen ? Reply::Kind::Send : Reply::Kind::None, outLen, nullptr};
}

Reply Responder::admitTransfer(const Snapshot& snap, std::span<const uint8_t> query, std::span<uint8_t> out,
                               const Client& client, Transport transport, const zones::AnswerResult& res,
                               bool signedOk, zones::TsigSession& ts, size_t& outLen, uint8_t& rcode) {
    const bool tls = transport == Transport::Tls;
    const bool xot = tls && client.tls13;  // RFC 9103 §5.1: TLS 1.2 is not XoT, axfr_allow counts it as TCP
    const auto& acl = xfr::axfrAcl(snap.config, res.zone->name());
    std::string why = xfr::axfrRefusal(snap.config, acl, client.addr, signedOk ? ts.key : nullptr,
                                       {xot, xot && client.clientCert, tls && !xot});
    int per = snap.config.server.axfrMaxConcurrentPerClient;
    WorkerStats& st = stats();
    if (!why.empty()) {
        logRefusal(fmt::format("{} of {} from {}{} refused: {}",
                               res.qtype == zones::kTypeIXFR ? "IXFR" : "AXFR", res.zone->name(),
                               peerText(client.addr), tls ? " (TLS)" : "", why));
        rcode = 5;
        outLen =
            zones::refuse(snap.answer, query, out, rcode, {zones::Ede::kProhibited, {}});  // RFC 8914 §4.19
    } else if (per > 0 && !shared_.axfrPerClient.acquire(client.key, per)) {
        // This client already has its share of transfers in flight: SERVFAIL as below, try later.
        bump(st.axfrRefusedPerClient);
        rcode = 2;
        outLen = zones::refuse(snap.answer, query, out, 2, kEdeBusy);
    } else if (shared_.axfrActive.fetch_add(1) >= snap.config.server.axfrMaxConcurrent) {
        // Over the cap: SERVFAIL, not REFUSED. The cap is a passing condition of this server, not a policy
        // about the client: a secondary retries after the SOA's retry interval (RFC 1034 §4.3.5), where
        // REFUSED reads as "you may not" and is logged as a configuration error.
        shared_.axfrActive.fetch_sub(1);
        if (per > 0) shared_.axfrPerClient.release(client.key);
        rcode = 2;
        outLen = zones::refuse(snap.answer, query, out, 2, kEdeBusy);
    } else {
        st.count(res.qtype, res.rcode);
        auto t = std::make_unique<Transfer>(snap_, *res.zone, query, ts, shared_, client.key, per > 0);
        // One line per transfer sent, as Knot logs its outgoing ones: which kind went out tells an operator
        // whether the journal served the secondary. Admitted transfers only, at most axfr_max_concurrent at
        // a time: never a flood.
        const zones::XfrWriter& w = t->writer();
        if (w.style() == zones::XfrStyle::Axfr)
            log::info("AXFR of {} to {}{}: serial {}", res.zone->name(), peerText(client.addr),
                      tls ? " (TLS)" : "", res.zone->serial());
        else
            log::info("{} of {} to {}{}: serial {} -> {}", zones::xfrStyleName(w.style()), res.zone->name(),
                      peerText(client.addr), tls ? " (TLS)" : "", w.requestSerial(), res.zone->serial());
        return Reply{Reply::Kind::Transfer, 0, std::move(t)};
    }
    return Reply{};
}

bool Responder::verifyTsig(const Snapshot& snap, std::span<const uint8_t> query, size_t tsigAt,
                           std::span<uint8_t> out, zones::TsigSession& s, size_t& len, uint8_t& rcode,
                           const sockaddr* peer) {
    uint64_t now = unixNow();
    if (!zones::verifyRequest(query, tsigAt, snap.config.keys, now, s)) {
        logRefusal(fmt::format("query from {}: malformed TSIG record (FORMERR)", peerText(peer)));
        rcode = 1;
        len = zones::refuse(snap.answer, query, out, 1);
        return false;
    }
    if (s.error == zones::kTsigNoError) return true;
    zones::TsigRecord r;
    zones::parseTsig(query, tsigAt, r);
    std::string key = zones::nameToText({reinterpret_cast<const char*>(r.keyName), r.keyNameLen});
    std::string detail =
        s.error == zones::kTsigBadKey    ? "unknown key or algorithm"
        : s.error == zones::kTsigBadSig  ? "wrong MAC"
        : s.error == zones::kTsigBadTime ? fmt::format("clock off by {} s", s.skew)
        : s.error == zones::kTsigBadTrunc
            ? fmt::format("MAC truncated to {} octets, below the key's min_mac_size", s.macLen)
            : "";
    logRefusal(fmt::format("query from {} with TSIG key {}: {} ({})", peerText(peer), key,
                           zones::tsigErrorText(s.error), detail));
    rcode = zones::kRcodeNotAuth;
    // RFC 8914 has no INFO-CODE for a failed authentication ("Prohibited", §4.19, is a policy's refusal):
    // "Other", with the TSIG error's name, which the unsigned reply's TSIG RR also carries (RFC 8945 §5.3.2).
    std::string ede = "TSIG " + zones::tsigErrorText(s.error);
    len = zones::refuse(snap.answer, query, out, rcode, {zones::Ede::kOther, ede});
    if (len) len = zones::tsigErrorResponse(out, len, r, s, now);
    return false;
}

size_t Responder::signAnswer(const zones::AnswerOptions& opt, std::span<const uint8_t> query,
                             std::span<uint8_t> out, size_t len, uint8_t rcode, zones::TsigSession& s) {
    uint64_t now = unixNow();
    if (size_t n = zones::signResponse(out, len, s, now)) return n;
    // answer() kept room for a signature of the request's size; one that still does not fit is TC.
    len = zones::refuse(opt, query, out, rcode);
    if (len < 12) return 0;
    out[2] |= 0x02;
    return zones::signResponse(out, len, s, now);
}

void Responder::logRefusal(const std::string& message) {
    int64_t sec = monotonicMs() / 1000;
    if (sec != logSecond_) {
        if (logged_ > 5) log::warn("{} more refused transfer/TSIG/TLS lines not logged", logged_ - 5);
        logSecond_ = sec;
        logged_ = 0;
    }
    if (++logged_ <= 5) log::warn("{}", message);
}

}  // namespace gslb::server
