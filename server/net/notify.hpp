// DNS NOTIFY (RFC 1996) to a zone's secondaries, so they transfer a new serial within seconds instead of at
// their next SOA refresh ([[zone]] notify).
//
// Runs on the control thread's libevent loop: one non-blocking UDP socket per (zone, target) in flight,
// never on the query path. A NOTIFY is retried with exponential backoff (1 s, 2 s, 4 s, 8 s, then every 8 s;
// RFC 1996 §3.6 leaves the schedule to the primary) until the target answers or kMaxAttempts have gone
// out. Any answer with our id, QR=1 and opcode NOTIFY ends the job (RFC 1996 §4.7: NOERROR is the
// acknowledgement; an error rcode is logged, and retrying would not change it). A new serial for a zone
// replaces the job still running for it.
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "zones/tsig.hpp"

namespace gslb::server::xfr {

inline constexpr int kMaxAttempts = 10;

/// Builds a NOTIFY request (opcode 4, AA set) for the zone `apexWire` (lower-case wire) with the zone's
/// SOA serial in the answer section as a hint (RFC 1996 §3.7), into `out`. Returns its length, 0 when `out`
/// is too small.
size_t buildNotify(uint16_t id, std::string_view apexWire, uint32_t serial, std::span<uint8_t> out);

/// Checks that `reply` answers the NOTIFY `id`: QR=1, opcode NOTIFY, same id. Returns its rcode, or -1.
int notifyReplyRcode(std::span<const uint8_t> reply, uint16_t id);

/// What a reply to a NOTIFY says, TSIG included (RFC 8945 §5.4 for a signed NOTIFY).
struct NotifyReply {
    int rcode = -1;  // -1: not an answer to this NOTIFY (wrong id, not a response, not opcode NOTIFY)
    // A signed NOTIFY only: 0 when the reply's TSIG verified. Otherwise the TSIG error, and `peerError`
    // tells whether the secondary reported it (its TSIG RR's Error: it does not know our key, or our MAC or
    // clock is wrong; retrying will not help) or the reply failed our check (unsigned, forged or damaged:
    // it is ignored, RFC 8945 §5.4.1, and the NOTIFY retried).
    uint16_t tsigError = 0;
    bool peerError = false;
};

/// Parses a reply to the NOTIFY `id`; `session` is the one signRequest filled (nullptr: unsigned NOTIFY,
/// any TSIG in the reply is ignored). `now`: UNIX seconds. Never throws; bounded work.
NotifyReply parseNotifyReply(std::span<const uint8_t> reply, uint16_t id, const zones::TsigSession* session,
                             uint64_t now) noexcept;

class Notifier {
  public:
    /// `firstDelayMs` is the first retry interval (1000 in production; tests of this class may shorten it).
    explicit Notifier(event_base* base, int firstDelayMs = 1000);
    ~Notifier();
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    /// Tells every target that `zone` (presentation name; `apexWire` its lower-case wire) now has
    /// `serial`, signed with the target's key (an index in `keys`, which are copied) when it has one.
    /// Replaces a job still running for the same zone and target.
    void send(const std::string& zone, std::string_view apexWire, uint32_t serial,
              const std::vector<NotifyTarget>& targets, const std::vector<zones::TsigKey>& keys);

    /// Jobs not finished yet (for tests and status).
    size_t pending() const { return jobs_.size(); }

  private:
    struct Job;
    static void onEvent(evutil_socket_t fd, short what, void* arg);
    void transmit(Job& j);
    void finish(Job& j);

    event_base* base_;
    int firstDelayMs_;
    std::map<std::string, std::unique_ptr<Job>> jobs_;  // key: zone + " " + target
};

}  // namespace gslb::server::xfr
