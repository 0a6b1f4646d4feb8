// Bytes received from a health-checked server -> parseHttpResponse (metrics/health/http_response) and
// judgeHttp. The first input octet chooses the flags (bit 0: the peer closed, bit 1: the read limit was
// reached) and, in its upper bits, where the rest is cut to play "what has arrived so far". Invariants:
// once the peer closed or the limit was reached the answer is final (complete or an error); a complete
// response has a status of three digits and a body no longer than the bytes received; a response complete
// on a prefix stays complete, with the same status and body, when more bytes arrive (a check never
// changes its verdict on bytes the server sent after the response).
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.hpp"
#include "metrics/health/http_response.hpp"

using gslb::metrics::health::HttpParse;

namespace {

std::string show(const HttpParse& p) {
    return "state " + std::to_string(int(p.state)) + " status " + std::to_string(p.status) + " body[" +
           std::to_string(p.body.size()) + "] error \"" + p.error + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1 || size > 2 * gslb::metrics::health::kHttpMaxResponse) return 0;
    const bool eof = data[0] & 1, full = data[0] & 2;
    std::string_view all(reinterpret_cast<const char*>(data + 1), size - 1);

    HttpParse r = gslb::metrics::health::parseHttpResponse(all, eof, full);
    if (eof || full) FUZZ_CHECK(r.state != HttpParse::State::Incomplete, show(r));
    if (r.state == HttpParse::State::Complete) {
        FUZZ_CHECK(r.status >= 100 && r.status <= 999, show(r));
        FUZZ_CHECK(r.body.size() <= all.size(), show(r));
    }
    if (r.state == HttpParse::State::Error) FUZZ_CHECK(!r.error.empty(), show(r));

    // A prefix that is already a whole response decides the same as the whole.
    size_t cut = all.size() * (data[0] >> 2) / 63;
    HttpParse p = gslb::metrics::health::parseHttpResponse(all.substr(0, cut), false, false);
    if (p.state == HttpParse::State::Complete) {
        HttpParse q = gslb::metrics::health::parseHttpResponse(all, false, false);
        FUZZ_CHECK(q.state == HttpParse::State::Complete && q.status == p.status && q.body == p.body,
                   "prefix " + std::to_string(cut) + ": " + show(p) + "\nwhole: " + show(q));
    }

    static const int expect[] = {200, 204};
    auto v = gslb::metrics::health::judgeHttp(r, expect, "OK");
    FUZZ_CHECK(!v.reason.empty(), show(r));
    FUZZ_CHECK(!v.ok || r.state == HttpParse::State::Complete, show(r));
    return 0;
}
