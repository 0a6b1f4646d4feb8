#include "server/responder/transfer.hpp"

#include <ctime>

namespace gslb::server {

namespace {
// A signed transfer's messages leave room for their TSIG RR.
size_t messageMax(const zones::TsigSession& tsig) {
    return tsig.key ? Transfer::kMessageMax - zones::tsigRecordSize(*tsig.key) : Transfer::kMessageMax;
}
}  // namespace

Transfer::Transfer(std::shared_ptr<const Snapshot> snap, const zones::Zone& zone,
                   std::span<const uint8_t> query, const zones::TsigSession& tsig, Shared& shared,
                   ClientCounter::Key client, bool counted)
    : snap_(std::move(snap)),
      writer_(zone, query, messageMax(tsig)),
      tsig_(tsig),
      shared_(shared),
      client_(client),
      counted_(counted) {}

Transfer::~Transfer() {
    shared_.axfrActive.fetch_sub(1);
    if (counted_) shared_.axfrPerClient.release(client_);
}

size_t Transfer::next(std::span<uint8_t> out) {
    size_t n = writer_.next(out);
    // TSIG's Time Signed is wall-clock seconds (RFC 8945 §4.2).
    if (n && tsig_.key) n = zones::signResponse(out, n, tsig_, uint64_t(time(nullptr)));
    return n;
}

}  // namespace gslb::server
