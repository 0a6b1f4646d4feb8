// A zone transfer the responder admitted (RFC 5936 AXFR, or RFC 1995 IXFR, over a stream transport): its
// messages, signed when the query was (RFC 8945 §5.3.1: every message signed, each MAC chained to the one
// before). The transport asks for them as the client drains its output (server/net/tcp.cpp), so a client that
// stops reading costs a bounded amount of memory whatever the zone's size. The transfer keeps the snapshot it
// reads alive across a reload, and gives back the slots admission took (Shared::axfrActive, the client's unit
// of Shared::axfrPerClient) when it is destroyed, done or not.
#pragma once
#include <cstdint>
#include <memory>
#include <span>

#include "server/responder/client_limits.hpp"
#include "server/responder/shared.hpp"
#include "server/state/snapshot.hpp"
#include "zones/axfr.hpp"
#include "zones/tsig.hpp"

namespace gslb::server {

class Transfer {
  public:
    /// The most octets one message takes (RFC 1035 §4.2.2: a two-octet length prefix).
    static constexpr size_t kMessageMax = 65535;

    /// Made by Responder::answer once admission took one unit of shared.axfrActive and, when `counted`, one
    /// of shared.axfrPerClient for `client`.
    Transfer(std::shared_ptr<const Snapshot> snap, const zones::Zone& zone, std::span<const uint8_t> query,
             const zones::TsigSession& tsig, Shared& shared, ClientCounter::Key client, bool counted);
    ~Transfer();
    Transfer(const Transfer&) = delete;
    Transfer& operator=(const Transfer&) = delete;

    /// Writes the next message into `out` (kMessageMax octets) and returns its length; 0 once done().
    size_t next(std::span<uint8_t> out);
    /// True once the message with the closing SOA (or an error message) has been written.
    bool done() const { return writer_.done(); }
    /// Messages written so far.
    size_t messages() const { return writer_.messages(); }
    /// What goes out: an AXFR, or an IXFR's differences, SOA alone or whole zone (zones::XfrStyle).
    const zones::XfrWriter& writer() const { return writer_; }

  private:
    std::shared_ptr<const Snapshot> snap_;  // before writer_: the zone it reads lives in the snapshot
    zones::XfrWriter writer_;
    zones::TsigSession tsig_;
    Shared& shared_;
    ClientCounter::Key client_;
    bool counted_;
};

}  // namespace gslb::server
