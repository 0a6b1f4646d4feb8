// A zone transfer (AXFR, RFC 5936) written one message at a time, so that the server produces it as fast as
// the client drains it and never holds more than a message or two of it per connection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "zones/zone.hpp"

namespace gslb::zones {

/// A resumable AXFR writer: a cursor over one zone. Each next() writes one complete DNS message (SOA first,
/// every RRset of every node in the zone's order, SOA last, RFC 5936 §2.2); between calls it keeps only its
/// position and the question, so a transfer of any size costs a few dozen octets plus the caller's buffer.
/// Socket-free (doc/design.md "Principles" 1). The zone must outlive the writer: the server keeps the
/// snapshot that holds it.
class AxfrWriter {
  public:
    /// `query` is the AXFR query that answer() classified as Action::Axfr; its header and question are copied
    /// (the first message echoes the question, RFC 5936 §2.2.1). `msgMax`: octets per message, 512..65535.
    AxfrWriter(const Zone& zone, std::span<const uint8_t> query, size_t msgMax = 65535) noexcept;

    /// False when `query` did not parse as a query; next() then writes nothing.
    bool ok() const { return qlen_ != 0; }
    /// True once the message with the closing SOA (or an error message) has been written.
    bool done() const { return phase_ == Phase::Done; }
    /// Messages written so far.
    size_t messages() const { return messages_; }

    /// Writes the next message into `out` (which must hold `msgMax` octets) and returns its length; 0 once
    /// done() (or when !ok()). A record too large for an empty message (it cannot be sent at all) ends the
    /// transfer with a SERVFAIL message, as RFC 5936 §2.2 asks of an error in mid-transfer. Never throws,
    /// never allocates.
    size_t next(std::span<uint8_t> out) noexcept;

  private:
    enum class Phase : uint8_t { LeadSoa, Body, TrailSoa, Done };
    // The record at the cursor: false when the body has none left (the cursor then moves to TrailSoa).
    bool current(std::string_view& owner, uint16_t& type, uint32_t& ttl, const Rdata*& rd);
    void advance();

    const Zone& zone_;
    size_t msgMax_;
    Phase phase_ = Phase::LeadSoa;
    uint32_t node_ = 0;  // Body: node index, RRset offset within it, record offset within the RRset
    uint32_t set_ = 0;
    uint32_t rec_ = 0;
    size_t messages_ = 0;
    uint16_t id_ = 0;
    uint8_t flags_ = 0;   // the query's RD and CD, copied into each message
    uint8_t opcode_ = 0;  // always QUERY for an Axfr action; kept for symmetry with answer()
    uint16_t qlen_ = 0;   // octets of the question (QNAME, QTYPE, QCLASS); 0: the query did not parse
    uint8_t qnameLen_ = 0;
    uint8_t question_[kMaxNameLen + 4]{};
};

}  // namespace gslb::zones
