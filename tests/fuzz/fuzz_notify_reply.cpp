// A secondary's reply to our NOTIFY -> parseNotifyReply (server/net/notify.hpp), unsigned and for a NOTIFY
// signed with TSIG (RFC 8945 §5.4). The NOTIFY is built and signed here at a fixed time, id 0x1234.
// Invariants: the rcode is -1 or 0..15; a reply to an unsigned NOTIFY never carries a TSIG verdict; a reply
// whose TSIG verified holds a TSIG RR with our key; and the same reply signed the way a secondary signs it
// (verifyRequest of our NOTIFY, then signResponse) verifies.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_util.hpp"
#include "server/net/notify.hpp"
#include "zones/tsig.hpp"

using namespace gslb;

namespace {

constexpr uint64_t kNow = 1700000000;
constexpr uint16_t kId = 0x1234;

struct Setup {
    zones::TsigKey key;
    std::vector<uint8_t> notify = std::vector<uint8_t>(1024);
    size_t len = 0;
    zones::TsigSession session;
    Setup() {
        zones::textToName("xfr.", std::string_view("\0", 1), key.name);
        key.label = "xfr";
        zones::decodeBase64("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", key.secret);
        size_t n = server::xfr::buildNotify(kId, std::string_view("\1f\4test\0", 8), 7, notify);
        len = zones::signRequest(notify, n, key, kNow, session);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 65535) return 0;
    static Setup s;
    FUZZ_CHECK(s.len > 0, "the NOTIFY was not signed");
    std::span<const uint8_t> reply{data, size};

    auto plain = server::xfr::parseNotifyReply(reply, kId, nullptr, kNow);
    FUZZ_CHECK(plain.rcode >= -1 && plain.rcode <= 15, std::to_string(plain.rcode));
    FUZZ_CHECK(plain.tsigError == 0 && !plain.peerError, "a TSIG verdict on an unsigned NOTIFY");
    FUZZ_CHECK(plain.rcode == server::xfr::notifyReplyRcode(reply, kId), "two rcodes");

    auto sig = server::xfr::parseNotifyReply(reply, kId, &s.session, kNow);
    FUZZ_CHECK(sig.rcode == plain.rcode, "the signature changed the rcode");
    if (sig.rcode >= 0 && sig.tsigError == 0) {
        zones::TsigRecord r;
        FUZZ_CHECK(zones::findTsig(reply, r) == zones::TsigFind::Found && r.macLen > 0,
                   "verified without a signature");
    }

    // The secondary's side: verify our NOTIFY, sign this reply (its TSIG, if any, left off).
    if (plain.rcode < 0) return 0;
    zones::TsigRecord r;
    size_t body = size;
    if (zones::findTsig(reply, r) == zones::TsigFind::Found)
        body = r.start;
    else if (zones::findTsig(reply, r) == zones::TsigFind::Malformed)
        return 0;
    static std::vector<uint8_t> buf(65535 + 1024);
    std::memcpy(buf.data(), data, body);
    if (body != size) {  // one record fewer
        uint16_t ar = uint16_t(buf[10] << 8 | buf[11]);
        if (ar == 0) return 0;
        --ar;
        buf[10] = uint8_t(ar >> 8);
        buf[11] = uint8_t(ar);
    }
    zones::TsigRecord req;
    FUZZ_CHECK(zones::findTsig({s.notify.data(), s.len}, req) == zones::TsigFind::Found, "our NOTIFY's TSIG");
    zones::TsigSession srv;
    std::vector<zones::TsigKey> keys = {s.key};
    FUZZ_CHECK(zones::verifyRequest({s.notify.data(), s.len}, req.start, keys, kNow, srv) &&
                   srv.error == zones::kTsigNoError,
               "our NOTIFY does not verify");
    size_t n = zones::signResponse({buf.data(), buf.size()}, body, srv, kNow);
    if (n == 0) return 0;  // ARCOUNT 65535: no room for one more
    auto again = server::xfr::parseNotifyReply({buf.data(), n}, kId, &s.session, kNow);
    FUZZ_CHECK(again.rcode == plain.rcode, "signing changed the rcode");
    // A body that does not walk to its end hides the appended TSIG RR (findTsig fails): only a walkable one
    // must verify.
    zones::TsigRecord t;
    if (zones::findTsig({buf.data(), n}, t) == zones::TsigFind::Found && t.start == body)
        FUZZ_CHECK(again.tsigError == 0,
                   "a correctly signed reply fails: " + zones::tsigErrorText(again.tsigError));
    return 0;
}
