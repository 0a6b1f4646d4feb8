// A signed request as it comes from outside -> the TSIG path of the server (zones/tsig.hpp, RFC 8945):
// parseQuery locates the TSIG RR, findTsig walks to it independently, verifyRequest checks it against a
// keyring, and the error response (or, with the MAC check forced to pass, the signed response) is written.
// Invariants: parseQuery and findTsig agree on where the TSIG RR is (or findTsig finds it malformed); a
// parsed record stays inside the message; the error response parses and ends in a TSIG RR with the error; and
// a response we sign for a known key verifies with the client's half (verifyResponse), whatever the request
// held.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "zones/answer.hpp"
#include "zones/packet.hpp"
#include "zones/tsig.hpp"

using namespace gslb::zones;

namespace {

std::vector<TsigKey> keyring() {
    std::vector<TsigKey> keys(3);
    const char* names[] = {"xfr.", "md5.key.", "big."};
    TsigAlgorithm algs[] = {TsigAlgorithm::HmacSha256, TsigAlgorithm::HmacMd5, TsigAlgorithm::HmacSha512};
    for (int i = 0; i < 3; ++i) {
        textToName(names[i], std::string_view("\0", 1), keys[size_t(i)].name);
        keys[size_t(i)].label = names[i];
        keys[size_t(i)].algorithm = algs[i];
        decodeBase64("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", keys[size_t(i)].secret);
    }
    return keys;
}

std::string show(const TsigRecord& r, size_t size) {
    return "at " + std::to_string(r.start) + " mac " + std::to_string(r.macLen) + " other " +
           std::to_string(r.otherLen) + " size " + std::to_string(size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 65535) return 0;
    static const std::vector<TsigKey> keys = keyring();
    std::span<const uint8_t> msg{data, size};
    const uint8_t* end = data + size;

    Query q;
    ParseStatus st = parseQuery(msg, q);
    TsigRecord r;
    TsigFind found = findTsig(msg, r);
    if (found == TsigFind::Found) {
        FUZZ_CHECK(r.start >= 12 && r.start < size, show(r, size));
        FUZZ_CHECK(r.mac >= data && r.mac + r.macLen <= end, show(r, size));
        FUZZ_CHECK(r.other >= data && r.other + r.otherLen == end, show(r, size));
        FUZZ_CHECK(r.keyNameLen >= 1 && r.algorithmLen >= 1, show(r, size));
    }
    // parseQuery only locates the record (the last one, in the additional section); parseTsig checks its
    // inside and that nothing follows it, so a located record may still be malformed (FORMERR).
    if (st == ParseStatus::Ok && q.tsigAt) {
        FUZZ_CHECK(found == TsigFind::Malformed || (found == TsigFind::Found && r.start == q.tsigAt),
                   "parseQuery at " + std::to_string(q.tsigAt) + ", findTsig " + std::to_string(int(found)));
    }
    if (!q.tsigAt) return 0;

    // The request's own clock, so that a request with a good MAC would also pass the time check.
    uint64_t now = found == TsigFind::Found ? r.timeSigned : 0;
    TsigSession s;
    static std::vector<uint8_t> out(65535);
    if (!verifyRequest(msg, q.tsigAt, keys, now, s)) return 0;  // FORMERR
    FUZZ_CHECK(found == TsigFind::Found, "verifyRequest parsed what findTsig did not");
    FUZZ_CHECK(s.error != kTsigNoError || s.key, "verified without a key");

    // The error response, as the worker writes it.
    size_t len = refuse(AnswerOptions{}, msg, {out.data(), out.size()}, kRcodeNotAuth);
    if (len) {
        size_t n = tsigErrorResponse({out.data(), out.size()}, len, r, s, now);
        FUZZ_CHECK(n > len, "no room for the error TSIG in " + std::to_string(len));
        TsigRecord e;
        FUZZ_CHECK(findTsig({out.data(), n}, e) == TsigFind::Found, "error response without its TSIG");
        FUZZ_CHECK(e.error == s.error && (out[3] & 0x0F) == kRcodeNotAuth,
                   "error " + std::to_string(e.error));
    }

    // A known key: pretend the MAC matched, sign the response, and check it with the client's half.
    if (s.key && len) {
        TsigSession client;
        client.key = s.key;
        client.macLen = r.macLen;
        std::memcpy(client.mac, r.mac, r.macLen);
        s.error = kTsigNoError;
        std::memcpy(s.mac, r.mac, r.macLen);
        s.macLen = r.macLen;
        len = refuse(AnswerOptions{}, msg, {out.data(), out.size()}, kRcodeRefused);
        size_t n = signResponse({out.data(), out.size()}, len, s, now);
        FUZZ_CHECK(n == len + tsigRecordSize(*s.key),
                   "signed " + std::to_string(n) + " from " + std::to_string(len));
        uint16_t v = verifyResponse({out.data(), n}, client, now);
        FUZZ_CHECK(v == kTsigNoError, "our own signature fails: " + tsigErrorText(v));
        out[n - 1] ^= 0x01;  // Other Len's low octet: the record no longer fills its RDLENGTH
        FUZZ_CHECK(verifyResponse({out.data(), n}, client, now) != kTsigNoError, "a damaged TSIG verified");
    }
    return 0;
}
