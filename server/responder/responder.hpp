// The responder: what every transport calls with one DNS message, and the one place where a message becomes
// a response. The UDP sockets' threads and the AF_XDP queues (in batches of datagrams), the TCP connections
// and any later stream transport (DNS over TLS) hand it the message, the client and the transport; it
// answers through zones::answer() and does around it what no transport does itself:
// - TSIG (RFC 8945): a signed query is verified (§5.2) and its response signed (§5.3), the error responses
//   (FORMERR, NOTAUTH with BADKEY/BADSIG/BADTIME/BADTRUNC) made here; a refusal is logged a few lines a
//   second at most;
// - DNS Cookies (RFC 7873, RFC 9018): what the query's cookie was worth is counted; a valid server cookie
//   exempts the client from RRL (§5.2.5);
// - RRL over UDP (the BIND/NSD/Knot "response rate limiting" of server/responder/rrl.hpp): each response is
//   sent, dropped, or slipped (sent short with TC, or BADCOOKIE when the client sent a cookie);
// - zone transfers (RFC 5936): AXFR admission (the transfer ACL and its TSIG key, the per-client and total
//   caps) and, once admitted, the transfer's messages, each signed when the query was (RFC 8945 §5.3.1);
// - the per-thread statistics (server/responder/stats.hpp): one row per answering thread.
// It owns no socket and no event loop: the transports (server/net/) keep framing, buffers, back-pressure
// and timeouts. Knot's process_query layer, with TSIG and modules hung off it, is the model.
//
// One Responder per answering thread (a UDP socket's thread, a worker's loop thread): it holds that
// thread's selector (chooser state), snapshot reference, counters row and RRL slip count, so nothing in it
// is shared or locked; only the RRL table and the transfer counts in Shared are (atomics, a short lock).
// Nothing on the path of a query allocates, throws or logs (logging is rate-limited refusals only).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "server/responder/client_limits.hpp"
#include "server/responder/rrl.hpp"
#include "server/responder/shared.hpp"
#include "server/responder/stats.hpp"
#include "server/state/gslb.hpp"
#include "server/state/snapshot.hpp"
#include "zones/answer.hpp"
#include "zones/tsig.hpp"

namespace gslb::server {

class Transfer;

/// How a message came. Udp: one datagram (RFC 1035 §4.2.1): the size limit is the requestor's EDNS size,
/// RRL applies. Tcp (RFC 7766) and Tls (RFC 7858, DNS over TLS): one message of a stream, without its
/// two-octet length: up to 65535 octets, no RRL, zone transfers admitted. Over Tls alone, a query with an
/// EDNS Padding option gets a response padded to 468-octet blocks (RFC 7830 §3, RFC 8467 §4.1).
enum class Transport : uint8_t { Udp, Tcp, Tls };

/// Who sent a message.
struct Client {
    const sockaddr* addr = nullptr;  // sockaddr_in or sockaddr_in6: the source address and port
    ClientCounter::Key key{};        // ClientCounter::keyOf(addr): the per-client transfer cap counts by it
    // Tls: the client's certificate verified against tls_client_ca (RFC 9103 §9.3.3).
    bool clientCert = false;
    // Tls: the handshake agreed TLS 1.3; a transfer is XoT only then (RFC 9103 §5.1).
    bool tls13 = false;
};

/// What the transport does with a message's outcome.
struct Reply {
    enum class Kind : uint8_t {
        Send,  // send `len` octets of `out`
        None,  // send nothing (a query not to be answered, RRL's drop, a response that could not be signed)
        Transfer,  // a zone transfer was admitted: send `transfer`'s messages, then read the next query
    };
    Kind kind = Kind::None;
    size_t len = 0;
    std::unique_ptr<Transfer> transfer;  // Kind::Transfer only
};

/// One UDP query for Responder::answerDatagrams, from a socket or an AF_XDP frame (server/net/xdp/).
struct Datagram {
    std::span<const uint8_t> query;
    const sockaddr_storage* peer = nullptr;  // the client (sockaddr_in / sockaddr_in6)
    // 65535 octets for the answer; nullptr: answerDatagrams puts it in the responder's own buffer, packed
    // after the batch's previous answers, and sets `out`
    uint8_t* out = nullptr;
    zones::AnswerResult res;  // after the call: res.len octets of `out` to send, 0: nothing
};

/// "192.0.2.1:53" or "[2001:db8::1]:53": a client's address and port, for the log.
std::string peerText(const sockaddr* sa);

class Responder {
  public:
    /// The most datagrams one answerDatagrams() call takes (recvmmsg's and an AF_XDP round's batch).
    static constexpr int kBatch = 32;
    /// The room an answer needs in `out` (zones::answer() writes up to 65535 octets).
    static constexpr size_t kAnswerRoom = 65536;

    /// `row`: this thread's row of Shared::stats and of the GSLB answer counters (answerRow(),
    /// server/conf/config.hpp); `seed`: its selector's random generator.
    Responder(Shared& shared, size_t row, uint64_t seed);
    ~Responder();
    Responder(const Responder&) = delete;
    Responder& operator=(const Responder&) = delete;

    /// The snapshot to answer from: the one the holder published last (taken when its generation moved:
    /// one atomic load otherwise). Call it once per batch or read, and pass the result to the calls below.
    const Snapshot& snapshot() {
        if (shared_.holder.generation() == gen_) return *snap_;  // inline: every batch and read asks
        return refresh();
    }
    /// The snapshot taken at the last snapshot() call, without looking for a newer one (for a caller that
    /// must not free the one a frame up the stack still reads).
    const Snapshot& current() const { return *snap_; }

    /// Answers one message. `query`: the message (for Tcp/Tls without its length prefix); `out`: where the
    /// response is written, at least 65535 octets for Tcp/Tls and kAnswerRoom for Udp; `snap`: snapshot()'s.
    /// Kind::Transfer only for a stream transport: the transfer's first messages come from Transfer::next(),
    /// `out` holds nothing. A refused transfer is a Send (REFUSED by the ACL, SERVFAIL over a cap, RFC 1034
    /// §4.3.5). Over Tls, a query with a Padding option gets its response padded (zones::pad(), RFC 7830
    /// §3; the transfer refusals and TSIG error replies excepted). Over Udp this is answerDatagrams() of one
    /// datagram. Counts the message in this thread's
    /// statistics.
    Reply answer(const Snapshot& snap, std::span<const uint8_t> query, std::span<uint8_t> out,
                 const Client& client, Transport transport);

    /// The batched form of answer() for UDP: answers dg[0, n) (n at most kBatch) with the same code
    /// whatever carried them (a socket or an AF_XDP frame) - EDNS, ECS, cookies, RRL with its slip, TSIG -
    /// and counts them (transport udp). A datagram not to be answered gets res.len 0. Answering the whole
    /// batch before accounting lets RRL's bucket lookups (a cache miss each) overlap the next answers.
    void answerDatagrams(const Snapshot& snap, Datagram* dg, int n);

    /// This thread's counters (the transports count what only they see: AF_XDP frames, truncation by the
    /// link MTU, refused connections).
    WorkerStats& stats() { return shared_.stats[row_]; }
    size_t row() const { return row_; }
    /// Logs a refusal of something that came from outside (a transfer, a TSIG, a TLS handshake), at most
    /// five lines a second on this thread, then a count of what was left out: a flood of them must not
    /// flood the log.
    void logRefusal(const std::string& message);

  private:
    const Snapshot& refresh();  // snapshot() when the holder's generation moved
    // An AXFR that answer() classified (RFC 5936 §2.2): the transfer ACL with the query's verified TSIG key
    // and the transport (XoT, RFC 9103), then the per-client and total caps. Kind::Transfer when admitted;
    // otherwise `out`, `outLen` and `rcode` hold the refusal (REFUSED, or SERVFAIL over a cap).
    Reply admitTransfer(const Snapshot& snap, std::span<const uint8_t> query, std::span<uint8_t> out,
                        const Client& client, Transport transport, const zones::AnswerResult& res,
                        bool signedOk, zones::TsigSession& tsig, size_t& outLen, uint8_t& rcode);
    // An IXFR over UDP that zones::answer() could answer with differences (Action::Transfer, RFC 1995 §2):
    // the client gets them when the transfer ACL (and its TSIG key) admits it, else the SOA-only answer
    // already in `d` stays. Rare and never inlined, so the batch loop stays as small as it was.
    void admitUdpIxfr(const Snapshot& snap, Datagram& d, uint32_t now);
    // A signed query (RFC 8945 §5.2): true when its TSIG verified (`s` then signs the response). Otherwise
    // `out` holds the error response (NOTAUTH with the TSIG error, or FORMERR), `len` and `rcode` say it,
    // and the reason is logged.
    bool verifyTsig(const Snapshot& snap, std::span<const uint8_t> query, size_t tsigAt,
                    std::span<uint8_t> out, zones::TsigSession& s, size_t& len, uint8_t& rcode,
                    const sockaddr* peer);
    // Signs the response out[0, len) of a verified exchange; one that has no room left for the TSIG RR
    // becomes a truncated (TC) reply with the question only, signed. Returns the length (0: drop).
    static size_t signAnswer(const zones::AnswerOptions& opt, std::span<const uint8_t> query,
                             std::span<uint8_t> out, size_t len, uint8_t rcode, zones::TsigSession& s);

    Shared& shared_;
    size_t row_;
    Selector selector_;
    std::shared_ptr<const Snapshot> snap_;
    uint64_t gen_ = 0;
    uint32_t slipCount_ = 0;  // limited responses since the last slip (RateLimiter::account)
    int64_t logSecond_ = 0;   // logRefusal's rate limit: the second it counts, and lines in it
    int logged_ = 0;
    // answerDatagrams' RRL buckets and which datagrams RRL applies to, and kBatch answers of kAnswerRoom
    // each, packed (see answerDatagrams): made once.
    RateLimiter::Slot slots_[kBatch];
    bool limitable_[kBatch];
    std::unique_ptr<uint8_t[]> answers_;
};

}  // namespace gslb::server
