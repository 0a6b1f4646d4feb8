#include "zones/tsig.hpp"

#include <fmt/format.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>

#include "zones/read_name.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kHeader = 12;
constexpr uint16_t kClassAny = 255;

inline uint16_t rd16(const uint8_t* p) {
    return uint16_t((p[0] << 8) | p[1]);
}
inline void wr16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
inline void wr48(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 6; ++i) p[i] = uint8_t(v >> (8 * (5 - i)));
}

struct AlgInfo {
    TsigAlgorithm alg;
    const char* name;  // config name
    std::string_view wire;
    const char* digest;  // OpenSSL digest name
    size_t size;
};

using namespace std::string_view_literals;
const AlgInfo kAlgs[] = {
    {TsigAlgorithm::HmacMd5, "hmac-md5", "\x08hmac-md5\x07sig-alg\x03reg\x03int\x00"sv, "MD5", 16},
    {TsigAlgorithm::HmacSha1, "hmac-sha1", "\x09hmac-sha1\x00"sv, "SHA1", 20},
    {TsigAlgorithm::HmacSha224, "hmac-sha224", "\x0bhmac-sha224\x00"sv, "SHA224", 28},
    {TsigAlgorithm::HmacSha256, "hmac-sha256", "\x0bhmac-sha256\x00"sv, "SHA256", 32},
    {TsigAlgorithm::HmacSha384, "hmac-sha384", "\x0bhmac-sha384\x00"sv, "SHA384", 48},
    {TsigAlgorithm::HmacSha512, "hmac-sha512", "\x0bhmac-sha512\x00"sv, "SHA512", 64},
};

const AlgInfo& info(TsigAlgorithm a) {
    return kAlgs[size_t(a)];
}

// HMAC over pieces (OpenSSL 3's EVP_MAC). Any failure makes final() return 0: callers treat that as a
// signature that cannot be made or checked, never as a match.
class Hmac {
  public:
    explicit Hmac(const TsigKey& k) noexcept {
        static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);  // thread-safe once (C++11 statics)
        if (!mac || k.secret.empty()) return;
        ctx_ = EVP_MAC_CTX_new(mac);
        if (!ctx_) return;
        OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                                           const_cast<char*>(info(k.algorithm).digest), 0),
                          OSSL_PARAM_construct_end()};
        if (EVP_MAC_init(ctx_, k.secret.data(), k.secret.size(), p) != 1) {
            EVP_MAC_CTX_free(ctx_);
            ctx_ = nullptr;
        }
    }
    ~Hmac() { EVP_MAC_CTX_free(ctx_); }
    Hmac(const Hmac&) = delete;
    Hmac& operator=(const Hmac&) = delete;

    void update(const uint8_t* p, size_t n) {
        if (ctx_ && n && EVP_MAC_update(ctx_, p, n) != 1) ok_ = false;
    }
    void u16(uint16_t v) {
        uint8_t b[2];
        wr16(b, v);
        update(b, 2);
    }
    // Returns the MAC's length, 0 on failure.
    size_t final(uint8_t* out) {
        size_t n = 0;
        if (!ctx_ || !ok_ || EVP_MAC_final(ctx_, out, &n, kTsigMaxMac) != 1) return 0;
        return n;
    }

  private:
    EVP_MAC_CTX* ctx_ = nullptr;
    bool ok_ = true;
};

// The message part of a digest: its header with `id` (the Original ID, RFC 8945 §4.3.2) and ARCOUNT
// `arcount` (the count without the TSIG RR), then the octets after the header up to `end`.
void digestMessage(Hmac& h, std::span<const uint8_t> msg, size_t end, uint16_t id, uint16_t arcount) {
    uint8_t hdr[kHeader];
    std::memcpy(hdr, msg.data(), kHeader);
    wr16(hdr, id);
    wr16(hdr + 10, arcount);
    h.update(hdr, kHeader);
    h.update(msg.data() + kHeader, end - kHeader);
}

// The TSIG variables (§4.3.3), or only the timers (§4.3.4's "TSIG Timers" for the later messages of a
// multi-message response).
void digestVariables(Hmac& h, std::string_view keyName, std::string_view alg, uint64_t time, uint16_t fudge,
                     uint16_t error, const uint8_t* other, uint16_t otherLen, bool timersOnly) {
    if (!timersOnly) {
        h.update(reinterpret_cast<const uint8_t*>(keyName.data()), keyName.size());
        h.u16(kClassAny);
        uint8_t ttl[4] = {0, 0, 0, 0};
        h.update(ttl, 4);
        h.update(reinterpret_cast<const uint8_t*>(alg.data()), alg.size());
    }
    uint8_t t[6];
    wr48(t, time);
    h.update(t, 6);
    h.u16(fudge);
    if (!timersOnly) {
        h.u16(error);
        h.u16(otherLen);
        h.update(other, otherLen);
    }
}

// Appends a TSIG RR to buf[0, len) and raises ARCOUNT. Returns the new length, 0 when it does not fit.
size_t appendRecord(std::span<uint8_t> buf, size_t len, std::string_view keyName, std::string_view alg,
                    uint64_t time, uint16_t fudge, const uint8_t* mac, uint16_t macLen, uint16_t originalId,
                    uint16_t error, const uint8_t* other, uint16_t otherLen) {
    size_t rdlen = alg.size() + 6 + 2 + 2 + macLen + 2 + 2 + 2 + otherLen;
    size_t need = keyName.size() + 10 + rdlen;
    if (len < kHeader || len > buf.size() || need > buf.size() - len || rdlen > 65535) return 0;
    uint16_t ar = rd16(buf.data() + 10);
    if (ar == 65535) return 0;
    uint8_t* p = buf.data() + len;
    std::memcpy(p, keyName.data(), keyName.size());
    p += keyName.size();
    wr16(p, kTypeTSIG);
    wr16(p + 2, kClassAny);
    std::memset(p + 4, 0, 4);  // TTL 0
    wr16(p + 8, uint16_t(rdlen));
    p += 10;
    std::memcpy(p, alg.data(), alg.size());
    p += alg.size();
    wr48(p, time);
    wr16(p + 6, fudge);
    wr16(p + 8, macLen);
    p += 10;
    if (macLen) std::memcpy(p, mac, macLen);
    p += macLen;
    wr16(p, originalId);
    wr16(p + 2, error);
    wr16(p + 4, otherLen);
    p += 6;
    if (otherLen) std::memcpy(p, other, otherLen);
    wr16(buf.data() + 10, uint16_t(ar + 1));
    return len + need;
}

std::string_view sv(const uint8_t* p, size_t n) {
    return {reinterpret_cast<const char*>(p), n};
}

const TsigKey* findKey(std::span<const TsigKey> keys, const TsigRecord& r) {
    for (const auto& k : keys)
        if (k.name == sv(r.keyName, r.keyNameLen) &&
            tsigAlgorithmWire(k.algorithm) == sv(r.algorithm, r.algorithmLen))
            return &k;
    return nullptr;
}

// RFC 8945 §5.2.2.1: a MAC longer than the hash, or shorter than both 10 octets and half the hash, is a
// format error; any length between is accepted.
bool macSizeOk(const TsigKey& k, uint16_t macLen) {
    size_t full = tsigMacSize(k.algorithm);
    return macLen <= full && macLen >= std::max<size_t>(10, full / 2);
}

int64_t skewOf(uint64_t now, uint64_t t) {
    return int64_t(now) - int64_t(t);
}

}  // namespace

std::string tsigErrorText(uint16_t e) {
    switch (e) {
        case kTsigNoError:
            return "NOERROR";
        case kTsigBadSig:
            return "BADSIG";
        case kTsigBadKey:
            return "BADKEY";
        case kTsigBadTime:
            return "BADTIME";
        case kTsigBadTrunc:
            return "BADTRUNC";
        default:
            return fmt::format("TSIG error {}", e);
    }
}

bool tsigAlgorithmFromName(std::string_view name, TsigAlgorithm& out) {
    std::string n(name);
    for (auto& c : n) c = char(lowerByte(uint8_t(c)));
    if (n == "hmac-md5.sig-alg.reg.int" || n == "hmac-md5.sig-alg.reg.int.") n = "hmac-md5";
    for (const auto& a : kAlgs)
        if (n == a.name) {
            out = a.alg;
            return true;
        }
    return false;
}

const char* tsigAlgorithmName(TsigAlgorithm a) {
    return info(a).name;
}
std::string_view tsigAlgorithmWire(TsigAlgorithm a) {
    return info(a).wire;
}
size_t tsigMacSize(TsigAlgorithm a) {
    return info(a).size;
}

bool decodeBase64(std::string_view text, std::vector<uint8_t>& out) {
    out.clear();
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    for (char ch : text) {
        int v;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
        if (ch == '=') {
            ++pad;
            continue;
        }
        if (pad) return false;  // data after padding
        if (ch >= 'A' && ch <= 'Z')
            v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z')
            v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9')
            v = ch - '0' + 52;
        else if (ch == '+')
            v = 62;
        else if (ch == '/')
            v = 63;
        else
            return false;
        acc = (acc << 6) | uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(uint8_t(acc >> bits));
            acc &= (1u << bits) - 1;
        }
    }
    // Leftover bits: 0 (a whole group), 2 (two pad characters) or 4 (one); they must be zero (RFC 4648 §3.5).
    if (bits == 6 || pad > 2 || acc != 0) return false;
    if (pad && (bits / 2 != pad)) return false;
    return !out.empty();
}

bool parseSecretText(std::string_view text, std::vector<uint8_t>& out, std::string& error) {
    std::string_view secret = text;
    // The word `secret` where a line's first word is (a key named "secret-xfr" does not count).
    size_t at = std::string_view::npos;
    for (size_t p = text.find("secret"); p != std::string_view::npos; p = text.find("secret", p + 1)) {
        size_t b = p;
        while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t')) --b;
        size_t after = p + 6;
        if ((b == 0 || text[b - 1] == '\n') && after < text.size() &&
            (text[after] == ' ' || text[after] == '\t' || text[after] == ':')) {
            at = p;
            break;
        }
    }
    if (at != std::string_view::npos) {
        // `secret "BASE64";` (BIND, tsig-keygen) or `secret: BASE64` (Knot's keymgr -t, YAML).
        size_t i = at + 6;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ':')) ++i;
        if (i < text.size() && text[i] == '"') ++i;
        size_t j = i;
        while (j < text.size() && text[j] != '"' && text[j] != ';' && text[j] != '\n' && text[j] != '\r') ++j;
        secret = text.substr(i, j - i);
    }
    if (!decodeBase64(secret, out)) {
        error = secret.find_first_not_of(" \t\r\n") == std::string_view::npos
                    ? "holds no secret"
                    : "the secret is not base64 (tsig-keygen or keymgr -t print one)";
        return false;
    }
    return true;
}

bool parseTsig(std::span<const uint8_t> msg, size_t at, TsigRecord& r) noexcept {
    r = TsigRecord{};
    r.start = at;
    size_t pos = readName(msg, at, r.keyName, &r.keyNameLen);
    if (!pos || msg.size() - pos < 10) return false;
    const uint8_t* f = msg.data() + pos;
    if (rd16(f) != kTypeTSIG || rd16(f + 2) != kClassAny || rd16(f + 4) != 0 || rd16(f + 6) != 0)
        return false;
    size_t rdlen = rd16(f + 8);
    pos += 10;
    if (rdlen != msg.size() - pos) return false;  // the TSIG RR ends the message (§5.1)
    const size_t end = msg.size();
    pos = readName(msg, pos, r.algorithm, &r.algorithmLen);
    if (!pos || end - pos < 10) return false;
    const uint8_t* p = msg.data() + pos;
    r.timeSigned = 0;
    for (int i = 0; i < 6; ++i) r.timeSigned = r.timeSigned << 8 | p[i];
    r.fudge = rd16(p + 6);
    r.macLen = rd16(p + 8);
    pos += 10;
    if (r.macLen > end - pos) return false;
    r.mac = msg.data() + pos;
    pos += r.macLen;
    if (end - pos < 6) return false;
    p = msg.data() + pos;
    r.originalId = rd16(p);
    r.error = rd16(p + 2);
    r.otherLen = rd16(p + 4);
    pos += 6;
    if (r.otherLen != end - pos) return false;
    r.other = msg.data() + pos;
    return true;
}

TsigFind findTsig(std::span<const uint8_t> msg, TsigRecord& out) noexcept {
    if (msg.size() < kHeader) return TsigFind::Malformed;
    uint32_t qd = rd16(msg.data() + 4), an = rd16(msg.data() + 6), ns = rd16(msg.data() + 8),
             ar = rd16(msg.data() + 10);
    size_t pos = kHeader;
    for (uint32_t i = 0; i < qd; ++i) {
        pos = readName(msg, pos);
        if (!pos || msg.size() - pos < 4) return TsigFind::Malformed;
        pos += 4;
    }
    const uint32_t total = an + ns + ar;
    for (uint32_t i = 0; i < total; ++i) {
        size_t start = pos;
        pos = readName(msg, pos);
        if (!pos || msg.size() - pos < 10) return TsigFind::Malformed;
        uint16_t type = rd16(msg.data() + pos);
        size_t rdlen = rd16(msg.data() + pos + 8);
        pos += 10;
        if (rdlen > msg.size() - pos) return TsigFind::Malformed;
        pos += rdlen;
        if (type == kTypeTSIG) {
            if (i + 1 != total || i < an + ns) return TsigFind::Malformed;
            return parseTsig(msg, start, out) ? TsigFind::Found : TsigFind::Malformed;
        }
    }
    return TsigFind::None;
}

bool verifyRequest(std::span<const uint8_t> msg, size_t at, std::span<const TsigKey> keys, uint64_t now,
                   TsigSession& s) noexcept {
    s = TsigSession{};
    TsigRecord r;
    if (msg.size() < kHeader || at < kHeader || !parseTsig(msg, at, r)) return false;
    uint16_t ar = rd16(msg.data() + 10);
    if (ar == 0) return false;
    s.originalId = r.originalId;
    s.requestTime = r.timeSigned;
    s.skew = skewOf(now, r.timeSigned);
    const TsigKey* k = findKey(keys, r);
    if (!k) {
        s.error = kTsigBadKey;  // §5.2.1
        return true;
    }
    s.key = k;
    if (!macSizeOk(*k, r.macLen)) return false;
    Hmac h(*k);
    digestMessage(h, msg, at, r.originalId, uint16_t(ar - 1));
    digestVariables(h, k->name, tsigAlgorithmWire(k->algorithm), r.timeSigned, r.fudge, r.error, r.other,
                    r.otherLen, false);
    uint8_t mac[kTsigMaxMac];
    size_t n = h.final(mac);
    if (n < r.macLen || CRYPTO_memcmp(mac, r.mac, r.macLen) != 0) {
        s.error = kTsigBadSig;  // §5.2.2
        return true;
    }
    std::memcpy(s.mac, r.mac, r.macLen);  // the response's digest starts with the request MAC as it came
    s.macLen = r.macLen;
    if (s.skew > int64_t(r.fudge) || -s.skew > int64_t(r.fudge)) {
        s.error = kTsigBadTime;  // §5.2.3
    } else if (r.macLen < (k->minMacSize ? k->minMacSize : tsigMacSize(k->algorithm))) {
        s.error = kTsigBadTrunc;  // §5.2.4: verified, but shorter than this key's policy allows
    }
    return true;
}

size_t tsigRecordSize(const TsigKey& key, size_t otherLen) {
    return key.name.size() + 10 + tsigAlgorithmWire(key.algorithm).size() + 16 + tsigMacSize(key.algorithm) +
           otherLen;
}

size_t signResponse(std::span<uint8_t> buf, size_t len, TsigSession& s, uint64_t now) noexcept {
    if (!s.key || s.error != kTsigNoError || len < kHeader || len > buf.size()) return 0;
    const TsigKey& k = *s.key;
    if (tsigRecordSize(k) > buf.size() - len) return 0;
    bool first = s.messages == 0;
    std::string_view alg = tsigAlgorithmWire(k.algorithm);
    Hmac h(k);
    h.u16(s.macLen);
    h.update(s.mac, s.macLen);
    digestMessage(h, buf.first(len), len, s.originalId, rd16(buf.data() + 10));
    digestVariables(h, k.name, alg, now, kTsigFudge, 0, nullptr, 0, !first);
    uint8_t mac[kTsigMaxMac];
    size_t n = h.final(mac);
    if (n == 0) return 0;
    size_t out =
        appendRecord(buf, len, k.name, alg, now, kTsigFudge, mac, uint16_t(n), s.originalId, 0, nullptr, 0);
    if (!out) return 0;
    std::memcpy(s.mac, mac, n);
    s.macLen = uint16_t(n);
    ++s.messages;
    return out;
}

size_t tsigErrorResponse(std::span<uint8_t> buf, size_t len, const TsigRecord& req, TsigSession& s,
                         uint64_t now) noexcept {
    if (len < kHeader || len > buf.size()) return 0;
    buf[3] = uint8_t((buf[3] & 0xF0) | 9);  // NOTAUTH
    if ((s.error == kTsigBadTime || s.error == kTsigBadTrunc) && s.key) {
        // §5.2.3: signed with the request's key; Time Signed is the request's, Other Data our clock.
        // §5.2.4 / §5.3.2: BADTRUNC follows a MAC that verified, so it is signed too, at our time.
        const TsigKey& k = *s.key;
        std::string_view alg = tsigAlgorithmWire(k.algorithm);
        const bool badTime = s.error == kTsigBadTime;
        const uint64_t signedAt = badTime ? s.requestTime : now;
        uint8_t other[6];
        wr48(other, now);
        Hmac h(k);
        h.u16(s.macLen);
        h.update(s.mac, s.macLen);
        digestMessage(h, buf.first(len), len, s.originalId, rd16(buf.data() + 10));
        digestVariables(h, k.name, alg, signedAt, kTsigFudge, s.error, other, badTime ? 6 : 0, false);
        uint8_t mac[kTsigMaxMac];
        size_t n = h.final(mac);
        if (n == 0) return 0;
        return appendRecord(buf, len, k.name, alg, signedAt, kTsigFudge, mac, uint16_t(n), s.originalId,
                            s.error, other, badTime ? 6 : 0);
    }
    // §5.3.2: BADKEY, BADSIG: unsigned, the request's key name and algorithm echoed.
    return appendRecord(buf, len, sv(req.keyName, req.keyNameLen), sv(req.algorithm, req.algorithmLen), now,
                        kTsigFudge, nullptr, 0, s.originalId, s.error, nullptr, 0);
}

size_t signRequest(std::span<uint8_t> buf, size_t len, const TsigKey& key, uint64_t now,
                   TsigSession& s) noexcept {
    s = TsigSession{};
    if (len < kHeader || len > buf.size() || tsigRecordSize(key) > buf.size() - len) return 0;
    std::string_view alg = tsigAlgorithmWire(key.algorithm);
    uint16_t id = rd16(buf.data());
    Hmac h(key);
    digestMessage(h, buf.first(len), len, id, rd16(buf.data() + 10));
    digestVariables(h, key.name, alg, now, kTsigFudge, 0, nullptr, 0, false);
    uint8_t mac[kTsigMaxMac];
    size_t n = h.final(mac);
    if (n == 0) return 0;
    size_t out = appendRecord(buf, len, key.name, alg, now, kTsigFudge, mac, uint16_t(n), id, 0, nullptr, 0);
    if (!out) return 0;
    s.key = &key;
    std::memcpy(s.mac, mac, n);
    s.macLen = uint16_t(n);
    s.originalId = id;
    s.requestTime = now;
    return out;
}

uint16_t verifyResponse(std::span<const uint8_t> msg, const TsigSession& s, uint64_t now) noexcept {
    if (!s.key) return kTsigBadKey;
    TsigRecord r;
    if (findTsig(msg, r) != TsigFind::Found) return kTsigBadSig;  // unsigned or malformed (§5.4.1)
    const TsigKey& k = *s.key;
    if (k.name != sv(r.keyName, r.keyNameLen) ||
        tsigAlgorithmWire(k.algorithm) != sv(r.algorithm, r.algorithmLen))
        return kTsigBadKey;
    if (r.error != kTsigNoError && r.macLen == 0) return r.error;  // the peer's unsigned complaint
    if (!macSizeOk(k, r.macLen)) return kTsigBadSig;
    Hmac h(k);
    h.u16(s.macLen);
    h.update(s.mac, s.macLen);
    digestMessage(h, msg, r.start, r.originalId, uint16_t(rd16(msg.data() + 10) - 1));
    digestVariables(h, k.name, tsigAlgorithmWire(k.algorithm), r.timeSigned, r.fudge, r.error, r.other,
                    r.otherLen, false);
    uint8_t mac[kTsigMaxMac];
    size_t n = h.final(mac);
    if (n < r.macLen || CRYPTO_memcmp(mac, r.mac, r.macLen) != 0) return kTsigBadSig;
    if (r.error != kTsigNoError) return r.error;
    int64_t skew = skewOf(now, r.timeSigned);
    if (skew > int64_t(r.fudge) || -skew > int64_t(r.fudge)) return kTsigBadTime;
    return kTsigNoError;
}

}  // namespace gslb::zones
