#include "zones/plain_rr.hpp"

#include <arpa/inet.h>
#include <strings.h>

#include <cstring>

#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kMaxTokens = 64;

struct Token {
    std::string_view text;  // without the quotes of a quoted string
    bool quoted;
};

inline bool blank(char c) {
    return c == ' ' || c == '\t';
}

// A control character other than the tab: ldns' tokenizer drops NUL bytes, ends a line at '\f' and '\v'
// and reads '\r' as a blank; this path would keep them as bytes of a name or a string.
inline bool control(char c) {
    return static_cast<unsigned char>(c) < 0x20 && c != '\t';
}

// Splits `line` into tokens. False when the line has something only ldns should judge: parentheses, a
// backslash, a control character, an unterminated or glued quoted string, or too many tokens.
bool tokenize(std::string_view line, Token* toks, size_t& n) {
    n = 0;
    for (char c : line)
        if (control(c)) return false;
    size_t i = 0;
    const size_t e = line.size();
    while (i < e) {
        char c = line[i];
        if (blank(c)) {
            ++i;
            continue;
        }
        if (c == ';') break;
        if (n == kMaxTokens) return false;
        if (c == '"') {
            size_t close = line.find('"', i + 1);
            if (close == std::string_view::npos) return false;
            std::string_view s = line.substr(i + 1, close - i - 1);
            for (char d : s)
                if (d == '\\' || d == '\r') return false;
            if (close + 1 < e && !blank(line[close + 1]) && line[close + 1] != ';') return false;
            toks[n++] = {s, true};
            i = close + 1;
            continue;
        }
        size_t j = i;
        for (; j < e; ++j) {
            char d = line[j];
            if (blank(d) || d == ';') break;
            if (d == '(' || d == ')' || d == '\\' || d == '"' || d == '\r') return false;
        }
        toks[n++] = {line.substr(i, j - i), false};
        i = j;
    }
    return true;
}

bool allDigits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// A plain decimal number of at most `maxDigits` digits and at most `max`.
bool plainNumber(std::string_view s, size_t maxDigits, uint32_t max, uint32_t& v) {
    if (!allDigits(s) || s.size() > maxDigits) return false;
    uint64_t x = 0;
    for (char c : s) x = x * 10 + uint64_t(c - '0');
    if (x > max) return false;
    v = uint32_t(x);
    return true;
}

uint16_t plainType(std::string_view s) {
    struct Entry {
        const char* name;
        uint16_t type;
    };
    static constexpr Entry kTypes[] = {{"A", kTypeA},         {"AAAA", kTypeAAAA}, {"NS", kTypeNS},
                                       {"CNAME", kTypeCNAME}, {"PTR", kTypePTR},   {"MX", kTypeMX},
                                       {"TXT", kTypeTXT},     {"SRV", kTypeSRV},   {"DNAME", kTypeDNAME}};
    for (const Entry& t : kTypes)
        if (s.size() == std::strlen(t.name) && strncasecmp(s.data(), t.name, s.size()) == 0) return t.type;
    return 0;
}

void put16(std::string& out, uint32_t v) {
    out.push_back(char(v >> 8));
    out.push_back(char(v & 0xFF));
}

bool putName(std::string& out, std::string_view text, std::string_view origin) {
    uint8_t buf[255];
    size_t len = plainNameToWire(text, origin, buf);
    if (len == 0) return false;
    out.append(reinterpret_cast<const char*>(buf), len);
    return true;
}

bool putAddress(std::string& out, int family, std::string_view text) {
    char s[64];
    if (text.size() >= sizeof s) return false;
    std::memcpy(s, text.data(), text.size());
    s[text.size()] = 0;
    uint8_t a[16];
    if (inet_pton(family, s, a) != 1) return false;
    out.append(reinterpret_cast<const char*>(a), family == AF_INET ? 4 : 16);
    return true;
}

}  // namespace

size_t plainNameToWire(std::string_view text, std::string_view origin, uint8_t* out) {
    if (text.empty()) return 0;
    if (text == "@") {
        if (origin.empty() || origin.size() > 255) return 0;
        std::memcpy(out, origin.data(), origin.size());
        return origin.size();
    }
    if (text == ".") {
        out[0] = 0;
        return 1;
    }
    const bool absolute = text.back() == '.';
    if (absolute) text.remove_suffix(1);
    size_t len = 0;
    size_t start = 0;
    for (;;) {
        size_t dot = text.find('.', start);
        size_t end = dot == std::string_view::npos ? text.size() : dot;
        size_t l = end - start;
        if (l == 0 || l > 63 || l + 1 > 255 - len) return 0;
        out[len++] = uint8_t(l);
        for (size_t k = start; k < end; ++k) {
            // ldns reads a first label "@" in rdata as the origin: such names are ldns' to judge
            if (text[k] == '\\' || text[k] == '@') return 0;
            out[len++] = uint8_t(text[k]);
        }
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    if (absolute) {
        if (len >= 255) return 0;
        out[len++] = 0;
        return len;
    }
    if (origin.empty() || origin.size() > 255 - len) return 0;
    std::memcpy(out + len, origin.data(), origin.size());
    return len + origin.size();
}

PlainResult parsePlainLine(std::string_view line, const PlainContext& ctx, PlainRecord& out) {
    if (!line.empty() && line[0] == '$') return PlainResult::NotPlain;  // a directive
    Token toks[kMaxTokens];
    size_t n = 0;
    if (!tokenize(line, toks, n)) return PlainResult::NotPlain;
    if (n == 0) return PlainResult::Empty;

    size_t t = 0;
    if (line.empty() || blank(line[0])) {
        // No owner written: the previous record's.
        if (ctx.prev.empty() || ctx.prev.size() > 255) return PlainResult::NotPlain;
        std::memcpy(out.owner, ctx.prev.data(), ctx.prev.size());
        out.ownerLen = ctx.prev.size();
        out.ownerChanged = false;
    } else {
        if (toks[0].quoted) return PlainResult::NotPlain;
        out.ownerLen = plainNameToWire(toks[0].text, ctx.origin, out.owner);
        if (out.ownerLen == 0) return PlainResult::NotPlain;
        out.ownerChanged = true;
        t = 1;
    }

    // [ttl] [IN] type, in that order (the other order, other classes and TTL units go to ldns).
    bool haveTtl = false;
    uint32_t ttl = 0;
    if (t < n && !toks[t].quoted && allDigits(toks[t].text)) {
        if (!plainNumber(toks[t].text, 9, 0x7FFFFFFF, ttl)) return PlainResult::NotPlain;
        haveTtl = true;
        ++t;
    }
    if (t < n && !toks[t].quoted && toks[t].text.size() == 2 &&
        strncasecmp(toks[t].text.data(), "IN", 2) == 0)
        ++t;
    if (t >= n || toks[t].quoted) return PlainResult::NotPlain;
    out.type = plainType(toks[t].text);
    if (out.type == 0) return PlainResult::NotPlain;
    ++t;
    out.ttl = haveTtl ? ttl : ctx.defaultTtl;
    out.ttlWritten = haveTtl;

    // rdata
    const Token* rd = toks + t;
    const size_t m = n - t;
    for (size_t k = 0; k < m; ++k)
        if (rd[k].quoted && out.type != kTypeTXT) return PlainResult::NotPlain;
    std::string& w = out.rdata;
    w.clear();
    uint32_t v[3];
    switch (out.type) {
        case kTypeA:
            if (m != 1 || !putAddress(w, AF_INET, rd[0].text)) return PlainResult::NotPlain;
            break;
        case kTypeAAAA:
            if (m != 1 || !putAddress(w, AF_INET6, rd[0].text)) return PlainResult::NotPlain;
            break;
        case kTypeNS:
        case kTypeCNAME:
        case kTypePTR:
        case kTypeDNAME:
            if (m != 1 || !putName(w, rd[0].text, ctx.origin)) return PlainResult::NotPlain;
            break;
        case kTypeMX:
            if (m != 2 || !plainNumber(rd[0].text, 5, 65535, v[0])) return PlainResult::NotPlain;
            put16(w, v[0]);
            if (!putName(w, rd[1].text, ctx.origin)) return PlainResult::NotPlain;
            break;
        case kTypeSRV:
            if (m != 4) return PlainResult::NotPlain;
            for (int k = 0; k < 3; ++k) {
                if (!plainNumber(rd[k].text, 5, 65535, v[k])) return PlainResult::NotPlain;
                put16(w, v[k]);
            }
            if (!putName(w, rd[3].text, ctx.origin)) return PlainResult::NotPlain;
            break;
        case kTypeTXT:
            // Each word or quoted string is one <character-string> (RFC 1035 §3.3.14). An empty quoted string
            // goes to ldns, whose tokenizer has its own idea of it.
            if (m == 0) return PlainResult::NotPlain;
            for (size_t k = 0; k < m; ++k) {
                std::string_view s = rd[k].text;
                if (s.empty() || s.size() > 255 || w.size() > 65535 - 1 - s.size())
                    return PlainResult::NotPlain;
                w.push_back(char(s.size()));
                w.append(s);
            }
            break;
        default:
            return PlainResult::NotPlain;
    }
    return PlainResult::Record;
}

}  // namespace gslb::zones
