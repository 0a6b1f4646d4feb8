// A zone transfer (AXFR, RFC 5936; IXFR, RFC 1995) written one message at a time, so that the server produces
// it as fast as the client drains it and never holds more than a message or two of it per connection. The
// same writer serves every transport a transfer may take (TCP, TLS): it only fills buffers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "zones/journal.hpp"
#include "zones/packet.hpp"
#include "zones/zone.hpp"

namespace gslb::zones {

/// How a transfer request is answered.
enum class XfrStyle : uint8_t {
    Axfr,         // an AXFR: the whole zone (RFC 5936)
    UpToDate,     // an IXFR from our serial or a newer one: the SOA alone (RFC 1995 §4)
    Incremental,  // an IXFR from a serial in the journal: the condensed differences (RFC 1995 §4, §5)
    AxfrStyle,    // an IXFR we cannot answer with differences (serial older than the journal or unknown, no
                  // journal, differences larger than the zone): the whole zone (RFC 1995 §4)
};
const char* xfrStyleName(XfrStyle s);

/// The serial of an IXFR request: the SOA in its authority section (RFC 1995 §3), read from the last 20
/// octets of its RDATA (so compressed names inside it need no following). `q` is parseQuery's result for
/// `query`. nullopt when the request has no SOA there (a malformed IXFR; the caller answers AXFR-style).
std::optional<uint32_t> ixfrRequestSerial(std::span<const uint8_t> query, const Query& q) noexcept;

/// How to answer an IXFR from `client` for `zone` and with what: UpToDate when `client` is not behind the
/// zone's serial (RFC 1982), Incremental with the condensation of the journal's changesets from `client`
/// when the journal has them and they are no larger than the zone (octets of their records against the
/// zone's, uncompressed: BIND's max-ixfr-ratio 100 %; larger, and the whole zone is the cheaper answer),
/// else AxfrStyle. O(zone) for the size. `diff`
/// (Incremental only) is owned, or borrowed from the zone's journal (the zone must outlive it).
struct IxfrPlan {
    XfrStyle style = XfrStyle::AxfrStyle;
    std::shared_ptr<const Changeset> diff;
};
IxfrPlan planIxfr(const Zone& zone, uint32_t client);

/// A resumable transfer writer: a cursor over one zone (or one difference of it). Each next() writes one
/// complete DNS message: for an AXFR, SOA first, every RRset of every node in the zone's order, SOA last
/// (RFC 5936 §2.2); for an IXFR, what planIxfr decided (the differences framed as RFC 1995 §4 says: new SOA,
/// old SOA, removed records, new SOA, added records, new SOA). Between calls it keeps only its position and
/// the question, so a transfer of any size costs a few dozen octets plus the caller's buffer (an IXFR
/// spanning several journal entries also holds their condensation). Socket-free (doc/design.md "Principles"
/// 1). The zone must outlive the writer: the server keeps the snapshot that holds it.
class XfrWriter {
  public:
    /// `query` is the AXFR or IXFR query that answer() classified as Action::Transfer; its header and
    /// question are copied (the first message echoes the question, RFC 5936 §2.2.1). `msgMax`: octets per
    /// message, 512..65535. Allocates (an IXFR's condensation); never throws.
    XfrWriter(const Zone& zone, std::span<const uint8_t> query, size_t msgMax = 65535) noexcept;

    /// False when `query` did not parse as a query; next() then writes nothing.
    bool ok() const { return qlen_ != 0; }
    XfrStyle style() const { return style_; }
    /// The serial an IXFR asked from (its authority SOA's); 0 for an AXFR or an IXFR without one.
    uint32_t requestSerial() const { return requestSerial_; }
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
    bool current(std::string_view& owner, uint16_t& type, uint32_t& ttl, std::string_view& rd);
    void advance();

    const Zone& zone_;
    size_t msgMax_;
    XfrStyle style_ = XfrStyle::Axfr;
    uint32_t requestSerial_ = 0;
    std::shared_ptr<const Changeset> diff_;  // Incremental: the records of the body
    size_t diffOff_ = 0;                     // Incremental: the record at the cursor, in diff_->records
    size_t diffLen_ = 0;                     // its length, once current() has read it
    Phase phase_ = Phase::LeadSoa;
    uint32_t node_ = 0;  // Body: node index, RRset offset within it, record offset within the RRset
    uint32_t set_ = 0;
    uint32_t rec_ = 0;
    size_t messages_ = 0;
    uint16_t id_ = 0;
    uint8_t flags_ = 0;   // the query's RD and CD, copied into each message
    uint8_t opcode_ = 0;  // always QUERY for a Transfer action; kept for symmetry with answer()
    uint16_t qlen_ = 0;   // octets of the question (QNAME, QTYPE, QCLASS); 0: the query did not parse
    uint8_t qnameLen_ = 0;
    uint8_t question_[kMaxNameLen + 4]{};
};

/// The name the AXFR writer had before it wrote IXFR too.
using AxfrWriter = XfrWriter;

}  // namespace gslb::zones
