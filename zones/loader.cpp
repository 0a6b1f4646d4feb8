#include "zones/loader.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <stdio_ext.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <atomic>
#include <cstring>
#include <optional>

#include "zones/ldns.hpp"
#include "zones/plain_rr.hpp"
#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

// The $TTL in force before any $TTL: records read with it are marked TtlFrom::None and get their TTL in
// readZoneFile (RFC 1035 §5.1). Only the mark says "no TTL": a record may write this value itself.
constexpr uint32_t kNoTtl = 0xFFFFFFFFu;
// ldns gives a record without a TTL its LDNS_DEFAULT_TTL (3600) when the $TTL in force is 0, where RFC 1035
// §5.1 and RFC 2308 §4 mean 0. ldns is handed this stand-in for a $TTL of 0 instead, and a record that comes
// back with it gets 0 (a TTL this large is not valid either way: RFC 2181 §8 treats it as 0).
constexpr uint32_t kZeroTtl = 0xFFFFFFFEu;
constexpr int kMaxIncludeDepth = 16;
// A piece of a master file this large is parsed on several threads (4 MB: about 100,000 records).
std::atomic<size_t> parallelMin{4u << 20};

struct LdnsRdf {
    ldns_rdf* p = nullptr;
    ~LdnsRdf() {
        if (p) ldns_rdf_deep_free(p);
    }
};

std::string_view rdfBytes(const ldns_rdf* r) {
    return r ? std::string_view(reinterpret_cast<const char*>(ldns_rdf_data(r)), ldns_rdf_size(r))
             : std::string_view();
}

// Everything one line of a master file is read in: origin, previous owner, $TTL. ldns reads and writes the
// ldns forms; the fast path (plain_rr.hpp) reads the origin's bytes as they are and keeps the previous owner
// in `prevWire`, marking the ldns copy stale until ldns needs it again (a fresh ldns_rdf per record would
// cost what the fast path saves).
struct ParseState {
    LdnsRdf origin;
    LdnsRdf prev;
    uint32_t ttl = kNoTtl;
    std::string prevWire;
    bool prevStale = false;

    void fromLdns() {
        prevWire.assign(rdfBytes(prev.p));
        prevStale = false;
    }
    void toLdns() {
        if (!prevStale) return;
        if (prev.p) ldns_rdf_deep_free(prev.p);
        prev.p = prevWire.empty()
                     ? nullptr
                     : ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, prevWire.size(), prevWire.data());
        prevStale = false;
    }
};

// A line the fast path may take, worth ending a pending ldns run for: not a directive, not blank or a
// comment, none of the characters only ldns handles before a comment.
bool maybePlain(std::string_view l) {
    if (l.empty() || l[0] == '$') return false;
    size_t k = 0;
    while (k < l.size() && (l[k] == ' ' || l[k] == '\t')) ++k;
    if (k == l.size() || l[k] == ';') return false;
    for (; k < l.size(); ++k) {
        char c = l[k];
        if (c == ';') break;
        if (c == '(' || c == ')' || c == '\\' || c == '\r') return false;
    }
    return true;
}

std::atomic<bool> fastPath{true};

// ldns drops NUL bytes and ends its lines at form feeds and vertical tabs as well as at line ends, so where
// such a byte is, the '\n' lines are not ldns' lines: neither the fast path's line-by-line split nor a cut
// for the parallel parse can be trusted to fall where ldns' records begin. A '\r' that starts a line is the
// same: when ldns ends a line that held anything (a blank will do), it skips the '\n', '\r', '\f' and '\v'
// that follow (ldns_fskipcs_l), so the next line's leading '\r' is not read as a blank and the line names
// its owner; an ldns run that starts at that line (after a line the fast path took) reads the '\r' as a
// blank and inherits the previous owner. Few zone files have these (a CRLF file does at a blank line, and
// its lines go to ldns anyway); a piece that does is read by ldns alone, in one piece.
bool hasOddBytes(std::string_view text) {
    for (char odd : {'\0', '\f', '\v'})
        if (std::memchr(text.data(), odd, text.size())) return true;
    for (const char* p = text.data();
         (p = static_cast<const char*>(std::memchr(p, '\r', size_t(text.data() + text.size() - p)))); ++p)
        if (p > text.data() && p[-1] == '\n') return true;
    return false;
}

// A line that starts with this character names its owner, for ldns too: a part of a file cut there does not
// need the previous record's owner. Not a blank, nor '(' or a control byte, which ldns drops from the line
// (it then starts with a blank and inherits the owner).
bool ownerStart(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '*' || c == '@' || c == '-';
}

std::string dirOf(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The first fields of the record (or $TTL directive) that starts at `rec` (its first character that is not
// a blank; `ownerWritten`: the line starts with its owner, not a blank), as ldns reads them: [owner], then
// TTL and class in either order, then the type and the rdata. `ttl` is empty when the record has no TTL
// field. '(' and ')' and line ends between fields are blanks, ';' starts a comment, a backslash escapes the
// next character (an owner may hold "\\ ").
struct RecordHead {
    std::string_view ttl, type, rdata;
};
RecordHead recordHead(std::string_view rec, bool ownerWritten) {
    size_t i = 0;
    auto blank = [&](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')';
    };
    auto skip = [&] {
        for (;;) {
            while (i < rec.size() && blank(rec[i])) ++i;
            if (i < rec.size() && rec[i] == ';') {
                while (i < rec.size() && rec[i] != '\n') ++i;
                continue;
            }
            return;
        }
    };
    auto next = [&]() -> std::string_view {
        skip();
        size_t b = i;
        while (i < rec.size() && !blank(rec[i]) && rec[i] != ';') i += rec[i] == '\\' ? 2 : 1;
        i = std::min(i, rec.size());
        return rec.substr(b, i - b);
    };
    RecordHead h;
    if (ownerWritten) next();
    for (int k = 0; k < 3; ++k) {
        std::string_view t = next();
        if (t.empty()) break;
        if (std::isdigit(static_cast<unsigned char>(t[0]))) {
            if (h.ttl.empty()) h.ttl = t;
            continue;
        }
        bool cls = strncasecmp(t.data(), "CLASS", 5) == 0 && t.size() > 5;
        for (const char* c : {"IN", "CH", "CS", "HS", "NONE", "ANY"})
            cls |= t.size() == strlen(c) && strncasecmp(t.data(), c, t.size()) == 0;
        if (cls) continue;
        h.type = t;
        skip();
        size_t e = rec.find('\n', i);
        h.rdata = rec.substr(i, (e == std::string_view::npos ? rec.size() : e) - i);
        while (!h.rdata.empty() && (h.rdata.back() == '\r' || h.rdata.back() == ' '))
            h.rdata.remove_suffix(1);
        break;
    }
    return h;
}

bool typeIs(std::string_view t, const char* name) {
    return t.size() == strlen(name) && strncasecmp(t.data(), name, t.size()) == 0;
}

// ldns' message for a record it refused, with what an operator needs on top: the type's rdata shape for the
// address types (ldns says only "could not parse the RR's rdata"), and for gdnsd's DYNA / DYNC, which a
// zone moved from gdnsd still holds, what gslbd uses instead.
std::string ldnsError(ldns_status s, const RecordHead& h) {
    std::string msg = ldns_get_errorstr_by_id(s);
    if (typeIs(h.type, "DYNA") || typeIs(h.type, "DYNC"))
        return fmt::format(
            "{}: {} is gdnsd's dynamic record; gslbd answers a name from the services of a "
            "[hostname.\"NAME\"] table in gslbd.toml instead (man gslbd.toml: \"[defaults] and "
            "[hostname.\"NAME\"]\"; `gslbctl service add` writes one)",
            msg, std::string(h.type));
    const bool rdataErr =
        s == LDNS_STATUS_SYNTAX_RDATA_ERR || s == LDNS_STATUS_INVALID_IP4 || s == LDNS_STATUS_INVALID_IP6;
    if (rdataErr && typeIs(h.type, "A"))
        return fmt::format("{}: \"{}\" is not an IPv4 address", msg, h.rdata);
    if (rdataErr && typeIs(h.type, "AAAA"))
        return fmt::format("{}: \"{}\" is not an IPv6 address", msg, h.rdata);
    return msg;
}

// The value of a TTL field as BIND and ldns read it: decimal seconds, or numbers with the units w, d, h, m,
// s ("1h30m"). nullopt when it is not a number at all (ldns then says what is wrong) or does not fit 32 bits.
enum class TtlValue { Ok, Large, NotNumber };
TtlValue ttlValue(std::string_view t, uint64_t& out) {
    uint64_t total = 0, cur = 0;
    bool digits = false;
    for (char c : t) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            cur = cur * 10 + uint64_t(c - '0');
            digits = true;
            if (cur > 0xFFFFFFFFull) return TtlValue::Large;
            continue;
        }
        uint64_t mult = 0;
        switch (std::tolower(static_cast<unsigned char>(c))) {
            case 'w':
                mult = 604800;
                break;
            case 'd':
                mult = 86400;
                break;
            case 'h':
                mult = 3600;
                break;
            case 'm':
                mult = 60;
                break;
            case 's':
                mult = 1;
                break;
            default:
                return TtlValue::NotNumber;
        }
        if (!digits) return TtlValue::NotNumber;
        total += cur * mult;
        cur = 0;
        digits = false;
        if (total > 0xFFFFFFFFull) return TtlValue::Large;
    }
    total += cur;
    if (total > 0xFFFFFFFFull) return TtlValue::Large;
    out = total;
    return TtlValue::Ok;
}

// Checks the TTL field of a record or $TTL ldns has just read (RFC 2181 §8: a TTL is 0 .. 2^31 - 1). Not a
// 32-bit number (ldns would wrap it: 99999999999 became 1215752191): an error. Above 2^31 - 1: a warning,
// and 0 is served, as RFC 2181 §8 tells a resolver to read such a value and as BIND's loader does ("TTL >
// MAXTTL, setting TTL to 0"); clamping to 2^31 - 1 would serve what no other server would. `ttl` is set to
// the value to use when the field is in range or large; false and `error` when it is not a number.
bool checkTtlField(std::string_view field, const std::string& where, const char* what, uint32_t& ttl,
                   std::vector<LoadWarning>& warnings, std::string& error) {
    uint64_t v = 0;
    switch (ttlValue(field, v)) {
        case TtlValue::NotNumber:
            return true;  // ldns' own value (or error) stands
        case TtlValue::Large:
            error =
                fmt::format("{}: {} {} is not a 32-bit number (a TTL is at most 2147483647 s, RFC 2181 §8)",
                            where, what, field);
            return false;
        case TtlValue::Ok:
            break;
    }
    if (v > 0x7FFFFFFFu) {
        warnings.push_back(LoadWarning{
            where, fmt::format("{} {} is above 2147483647 (2^31 - 1): served as 0, as RFC 2181 §8 says to "
                               "read it (BIND does the same)",
                               what, field)});
        v = 0;
    }
    ttl = uint32_t(v);
    return true;
}

class Reader {
  public:
    Reader(SourceSet& out, std::string& error) : out_(out), error_(error) {}

    // Reads one file with `origin` (an absolute ldns dname) as its starting origin and `ttl` as its default
    // TTL.
    bool readFile(const std::string& path, const ldns_rdf* origin, uint32_t ttl, int depth,
                  const std::string& from) {
        if (depth > kMaxIncludeDepth) {
            error_ = fmt::format("{}: $INCLUDE nested more than {} levels (an include loop?)", from,
                                 kMaxIncludeDepth);
            return false;
        }
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            error_ = fmt::format("{}: cannot open zone file {}", from.empty() ? path : from, path);
            return false;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str();

        // The origin in force in this file; $INCLUDE does not change it (RFC 1035 §5.1). The previous owner
        // starts empty: lines that start with blanks need one written before them.
        ParseState st;
        st.origin.p = ldns_rdf_clone(origin);
        st.ttl = ttl;
        st.fromLdns();

        // Split the file at top-level $INCLUDE lines: the pieces in between are parsed with origin, TTL and
        // previous owner carried from one piece to the next.
        size_t segStart = 0;
        int segLine = 1;
        int line = 1;
        LineScan scan;
        size_t i = 0;
        while (i <= text.size()) {
            size_t eol = text.find('\n', i);
            if (eol == std::string::npos) eol = text.size();
            std::string_view l(text.data() + i, eol - i);
            if (!scan.open() && l.size() >= 8 && strncasecmp(l.data(), "$INCLUDE", 8) == 0 &&
                (l.size() == 8 || l[8] == ' ' || l[8] == '\t')) {
                if (!parseSegment(path, std::string_view(text).substr(segStart, i - segStart), segLine, st))
                    return false;
                if (!include(path, line, l.substr(8), st.origin.p, st.ttl, depth)) return false;
                segStart = eol + 1;
                segLine = line + 1;
            } else {
                scanZoneLine(l, scan);
            }
            ++line;
            i = eol + 1;
        }
        if (segStart < text.size())
            return parseSegment(path, std::string_view(text).substr(segStart), segLine, st);
        return true;
    }

  private:
    bool include(const std::string& path, int line, std::string_view args, const ldns_rdf* cur,
                 uint32_t defTtl, int depth) {
        std::string where = fmt::format("{}:{}", path, line);
        std::istringstream as{std::string(args)};
        std::string file, originText;
        as >> file >> originText;
        if (file.empty()) {
            error_ = where + ": $INCLUDE without a file name";
            return false;
        }
        if (!originText.empty() && originText[0] == ';') originText.clear();
        if (file.front() != '/') file = dirOf(path) + "/" + file;
        LdnsRdf org;
        if (!originText.empty()) {
            if (ldns_str2rdf_dname(&org.p, originText.c_str()) != LDNS_STATUS_OK) {
                error_ = fmt::format("{}: $INCLUDE origin \"{}\" is not a domain name", where, originText);
                return false;
            }
            if (originText.back() != '.') {
                // Relative origin: relative to the current one.
                ldns_rdf* abs = ldns_dname_cat_clone(org.p, cur);
                ldns_rdf_deep_free(org.p);
                org.p = abs;
                if (!abs) {
                    error_ = fmt::format("{}: $INCLUDE origin \"{}\" is too long", where, originText);
                    return false;
                }
            }
        }
        return readFile(file, org.p ? org.p : cur, defTtl, depth + 1, where);
    }

    // Parses text with ldns alone: directives, multi-line records, escapes, every type ldns knows. `st`
    // carries origin, previous owner and $TTL in and out (its ldns forms). Records go to `out`, the first
    // problem to `error`.
    static bool parseLdns(uint32_t file, const std::string& path, std::string_view text, int firstLine,
                          ParseState& st, SourceSet& out, std::string& error) {
        if (text.empty()) return true;
        std::string copy(text);
        if (copy.back() != '\n') copy += '\n';  // ldns wants a line end after the last record
        FILE* fp = fmemopen(copy.data(), copy.size(), "r");
        if (!fp) {
            error = fmt::format("{}: out of memory", path);
            return false;
        }
        // Only this thread reads this stream: spare ldns' getc() the stream lock it takes per character.
        __fsetlocking(fp, FSETLOCKING_BYCALLER);
        // ldns counts the lines it reads, but it also swallows the blank lines after a record before it
        // returns, so its count names the last of them. The line of a record (or error) is found here
        // instead: where its first character is, past the blanks and comments before it.
        int lineNr = firstLine - 1;  // ldns' count: only fed back to it
        size_t cursor = 0;
        int cursorLine = firstLine;
        auto recordStart = [&](size_t from) {
            for (; cursor < from; ++cursor) cursorLine += copy[cursor] == '\n';
            while (cursor < copy.size()) {
                char c = copy[cursor];
                if (c == ';') {
                    while (cursor < copy.size() && copy[cursor] != '\n') ++cursor;
                    continue;
                }
                // What ldns skips between records: blanks, its other delimiters, NUL bytes.
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\0')
                    break;
                cursorLine += c == '\n';
                ++cursor;
            }
            return cursor < copy.size();
        };
        bool ok = true;
        ldns_buffer* buf = ldns_buffer_new(1024);
        for (;;) {
            long at = ftell(fp);
            if (at < 0 || !recordStart(size_t(at))) break;  // only blanks and comments are left
            const int line = cursorLine;
            const size_t begin = cursor;
            const bool ownerWritten =
                begin == 0 || copy[begin - 1] == '\n';  // recordStart stops at the first non-blank
            const bool hadDefault = st.ttl != kNoTtl;
            ldns_rr* rr = nullptr;
            uint32_t ttl = st.ttl == 0 ? kZeroTtl : st.ttl;
            ldns_status s = ldns_rr_new_frm_fp_l(&rr, fp, &ttl, &st.origin.p, &st.prev.p, &lineNr);
            st.ttl = ttl == kZeroTtl ? 0 : ttl;
            if (s == LDNS_STATUS_OK && ldns_rr_ttl(rr) == kZeroTtl) ldns_rr_set_ttl(rr, 0);
            long end = ftell(fp);
            std::string_view text(copy.data() + begin,
                                  (end > long(begin) ? size_t(end) : copy.size()) - begin);
            const std::string where = fmt::format("{}:{}", path, line);
            if (s == LDNS_STATUS_SYNTAX_TTL) {
                // "$TTL value": the field after the directive.
                std::string_view f = recordHead(text.substr(std::min<size_t>(4, text.size())), false).ttl;
                uint32_t v = st.ttl;
                if (!f.empty() && !checkTtlField(f, where, "$TTL", v, out.warnings, error)) {
                    ok = false;
                    break;
                }
                st.ttl = v;
            }
            if (s == LDNS_STATUS_SYNTAX_EMPTY || s == LDNS_STATUS_SYNTAX_TTL ||
                s == LDNS_STATUS_SYNTAX_ORIGIN) {
                if (feof(fp)) break;
                continue;
            }
            // The TTL field first: one that is not a 32-bit number is the error to report even when ldns
            // stumbled over it too.
            int off = 0;
            if (std::string why = recordTextProblem(text, off); !why.empty()) {
                error = fmt::format("{}:{}: {}", path, line + off, why);
                if (s == LDNS_STATUS_OK) ldns_rr_free(rr);
                ok = false;
                break;
            }
            const RecordHead head = recordHead(text, ownerWritten);
            uint32_t written = s == LDNS_STATUS_OK ? ldns_rr_ttl(rr) : 0;
            if (!head.ttl.empty() && !checkTtlField(head.ttl, where, "TTL", written, out.warnings, error)) {
                if (s == LDNS_STATUS_OK) ldns_rr_free(rr);
                ok = false;
                break;
            }
            if (s != LDNS_STATUS_OK) {
                error = fmt::format("{}: {}", where, ldnsError(s, head));
                ok = false;
                break;
            }
            TtlFrom from = hadDefault ? TtlFrom::Directive : TtlFrom::None;
            if (!head.ttl.empty()) {
                ldns_rr_set_ttl(rr, written);
                from = TtlFrom::Written;
            }
            if (ok && !addRecord(file, path, line, rr, from, buf, out, error)) ok = false;
            ldns_rr_free(rr);
            if (!ok) break;
        }
        ldns_buffer_free(buf);
        fclose(fp);
        return ok;
    }

    // Parses one piece of a master file (no $INCLUDE in it): each line that starts a plain one-line record
    // goes through the fast path, every run of other lines through ldns in one pass, in file order. Touches
    // no member: the pieces of a large file are parsed on several threads.
    static bool parseChunk(const std::string& path, std::string_view text, int firstLine, ParseState& st,
                           SourceSet& out, std::string& error) {
        if (text.empty()) return true;
        const uint32_t file = out.fileIndex(path);
        if (!fastPath.load(std::memory_order_relaxed) || hasOddBytes(text)) {
            st.toLdns();
            bool ok = parseLdns(file, path, text, firstLine, st, out, error);
            st.fromLdns();
            return ok;
        }
        PlainRecord pr;
        size_t runStart = std::string_view::npos;
        int runLine = 0;
        auto flush = [&](size_t upto) {
            if (runStart == std::string_view::npos) return true;
            st.toLdns();
            bool ok = parseLdns(file, path, text.substr(runStart, upto - runStart), runLine, st, out, error);
            st.fromLdns();
            runStart = std::string_view::npos;
            return ok;
        };
        int line = firstLine;
        LineScan scan;
        for (size_t i = 0; i < text.size(); ++line) {
            size_t eol = text.find('\n', i);
            if (eol == std::string_view::npos) eol = text.size();
            std::string_view l = text.substr(i, eol - i);
            const size_t at = i;
            i = eol + 1;
            if (!scan.open()) {
                if (runStart != std::string_view::npos) {
                    if (!maybePlain(l)) {
                        scanZoneLine(l, scan);  // stays in the ldns run
                        continue;
                    }
                    if (!flush(at)) return false;
                }
                PlainContext ctx{rdfBytes(st.origin.p), st.prevWire, st.ttl};
                PlainResult r = parsePlainLine(l, ctx, pr);
                if (r == PlainResult::Empty) continue;
                if (r == PlainResult::Record) {
                    lowerName(pr.owner, pr.ownerLen);
                    std::string_view owner(reinterpret_cast<const char*>(pr.owner), pr.ownerLen);
                    if (pr.ownerChanged) {
                        st.prevWire.assign(owner);
                        st.prevStale = true;
                    }
                    SourceRecord rec;
                    // Records of one owner usually follow each other: they share the owner's bytes.
                    rec.owner = !out.records.empty() && out.records.back().owner == owner
                                    ? out.records.back().owner
                                    : out.store(owner);
                    rec.rdata = out.store(pr.rdata);
                    rec.type = pr.type;
                    rec.ttl = pr.ttl;
                    rec.file = file;
                    rec.line = line;
                    rec.ttlFrom = pr.ttlWritten      ? TtlFrom::Written
                                  : st.ttl == kNoTtl ? TtlFrom::None
                                                     : TtlFrom::Directive;
                    out.records.push_back(rec);
                    continue;
                }
                runStart = at;
                runLine = line;
            }
            scanZoneLine(l, scan);
        }
        return flush(text.size());
    }

    // A large piece is cut at lines that start a record with an explicit owner, at parenthesis depth 0, so
    // that each part parses alone given the $ORIGIN and $TTL in force where it starts; the parts are parsed
    // on several threads (ldns keeps no global state) and their records joined in file order.
    bool parseSegment(const std::string& path, std::string_view seg, int firstLine, ParseState& st) {
        unsigned threads = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
        if (seg.size() < parallelMin.load(std::memory_order_relaxed) || threads < 2)
            return parseChunk(path, seg, firstLine, st, out_, error_);
        if (hasOddBytes(seg)) return parseChunk(path, seg, firstLine, st, out_, error_);

        struct Cut {
            size_t offset;
            int line;
            size_t directives;  // how many $ORIGIN/$TTL lines precede it
        };
        struct Directive {
            size_t begin, end;  // a $ORIGIN / $TTL line, with the lines it continues on
        };
        std::vector<Directive> directives;
        std::vector<Cut> cuts{{0, firstLine, 0}};
        size_t target = seg.size() / threads;
        int line = firstLine;
        LineScan scan;
        bool inDirective = false;
        for (size_t i = 0; i < seg.size();) {
            size_t eol = seg.find('\n', i);
            if (eol == std::string_view::npos) eol = seg.size();
            std::string_view l = seg.substr(i, eol - i);
            if (scan.open()) {
                if (inDirective) directives.back().end = eol;
            } else {
                inDirective = false;
                char c = l.empty() ? '\0' : l[0];
                if (c == '$' &&
                    (strncasecmp(l.data(), "$ORIGIN", 7) == 0 || strncasecmp(l.data(), "$TTL", 4) == 0)) {
                    directives.push_back(Directive{i, eol});
                    inDirective = true;
                } else if (ownerStart(c) && i >= cuts.size() * target && cuts.size() < threads) {
                    cuts.push_back(Cut{i, line, directives.size()});
                }
            }
            scanZoneLine(l, scan);
            ++line;
            i = eol + 1;
        }
        size_t n = cuts.size();
        if (n < 2) return parseChunk(path, seg, firstLine, st, out_, error_);

        struct Part {
            ParseState st;
            SourceSet recs;
            std::string error;
            bool ok = true;
        };
        std::vector<Part> parts(n);
        // Each part starts from the segment's state with the directives before its cut applied, by ldns
        // itself.
        st.toLdns();
        for (size_t k = 0; k < n; ++k) {
            ParseState& ps = parts[k].st;
            ps.origin.p = ldns_rdf_clone(st.origin.p);
            if (k == 0 && st.prev.p) ps.prev.p = ldns_rdf_clone(st.prev.p);
            ps.ttl = st.ttl;
            std::string dirs;
            for (size_t d = 0; d < cuts[k].directives; ++d) {
                dirs.append(seg.substr(directives[d].begin, directives[d].end - directives[d].begin));
                dirs += '\n';
            }
            // A bad directive is reported, with its real line, by the part that holds it.
            SourceSet none;
            std::string ignored;
            parseLdns(none.fileIndex(path), path, dirs, cuts[k].line, ps, none, ignored);
            if (k > 0 && ps.prev.p) {
                ldns_rdf_deep_free(ps.prev.p);
                ps.prev.p = nullptr;  // the part starts with an explicit owner
            }
            ps.fromLdns();
        }
        std::vector<std::thread> pool;
        for (size_t k = 0; k < n; ++k) {
            size_t from = cuts[k].offset, to = k + 1 < n ? cuts[k + 1].offset : seg.size();
            auto job = [&, k, from, to] {
                Part& p = parts[k];
                p.ok = parseChunk(path, seg.substr(from, to - from), cuts[k].line, p.st, p.recs, p.error);
            };
            if (k + 1 < n)
                pool.emplace_back(job);
            else
                job();  // the last part on this thread
        }
        for (auto& t : pool) t.join();
        for (auto& p : parts)
            if (!p.ok) {
                error_ = p.error;
                return false;
            }
        for (auto& p : parts) out_.append(std::move(p.recs));
        // The state after the segment is the last part's.
        ParseState& last = parts[n - 1].st;
        last.toLdns();
        std::swap(st.origin.p, last.origin.p);
        std::swap(st.prev.p, last.prev.p);
        st.ttl = last.ttl;
        st.fromLdns();
        return true;
    }

    static bool addRecord(uint32_t file, const std::string& path, int line, ldns_rr* rr, TtlFrom from,
                          ldns_buffer* buf, SourceSet& out, std::string& error) {
        if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
            error = fmt::format("{}:{}: only class IN is served", path, line);
            return false;
        }
        SourceRecord r;
        const ldns_rdf* owner = ldns_rr_owner(rr);
        uint8_t lower[kMaxNameLen];
        size_t ownerLen = ldns_rdf_size(owner);
        if (ownerLen > kMaxNameLen) {
            error = fmt::format("{}:{}: owner name longer than 255 octets", path, line);
            return false;
        }
        std::memcpy(lower, ldns_rdf_data(owner), ownerLen);
        lowerName(lower, ownerLen);
        r.owner = out.store({reinterpret_cast<const char*>(lower), ownerLen});
        r.type = uint16_t(ldns_rr_get_type(rr));
        if (isMetaType(r.type)) {
            error = fmt::format("{}:{}: type {} cannot be zone data", path, line, r.type);
            return false;
        }
        r.ttl = ldns_rr_ttl(rr);
        ldns_buffer_clear(buf);
        if (ldns_rr_rdata2buffer_wire(buf, rr) != LDNS_STATUS_OK) {
            error = fmt::format("{}:{}: cannot encode rdata", path, line);
            return false;
        }
        if (ldns_buffer_position(buf) > 65535) {
            error = fmt::format("{}:{}: rdata longer than 65535 octets", path, line);
            return false;
        }
        r.rdata =
            out.store({reinterpret_cast<const char*>(ldns_buffer_begin(buf)), ldns_buffer_position(buf)});
        r.file = file;
        r.line = line;
        r.ttlFrom = from;
        out.records.push_back(r);
        return true;
    }

    SourceSet& out_;
    std::string& error_;
};

}  // namespace

void setParallelParseThreshold(size_t octets) {
    parallelMin.store(octets, std::memory_order_relaxed);
}

void setPlainFastPath(bool on) {
    fastPath.store(on, std::memory_order_relaxed);
}

std::string recordTextProblem(std::string_view text, int& line) {
    LineScan scan;
    int k = 0, openedOn = 0;
    for (size_t i = 0; i < text.size(); ++k) {
        size_t eol = text.find('\n', i);
        if (eol == std::string_view::npos) eol = text.size();
        const std::string_view l = text.substr(i, eol - i);
        const int depthBefore = scan.depth;
        scanZoneLine(l, scan);
        if (depthBefore == 0 && scan.depth > 0) openedOn = k;
        if (scan.quoteCut) {
            line = k;
            return "unbalanced quotes: a quoted string is not closed before the end of the line (close it "
                   "with "
                   "'\"'; a '\"' inside it is written '\\\"')";
        }
        i = eol + 1;
    }
    if (scan.depth > 0) {
        line = openedOn;
        return "a '(' is not closed: the record runs on to the end of the file (close it with ')')";
    }
    return {};
}

std::string recordError(int status, std::string_view text, bool ownerWritten) {
    return ldnsError(ldns_status(status), recordHead(text, ownerWritten));
}

void scanZoneLine(std::string_view l, LineScan& s) {
    if (!l.empty() && l.back() == '\n') l.remove_suffix(1);
    s.escapedEnd = false;
    for (size_t k = 0; k < l.size(); ++k) {
        char c = l[k];
        if (c == '\\') {
            // ldns' tokenizer: a backslash escapes the next character, the line end included.
            if (k + 1 == l.size()) s.escapedEnd = true;
            ++k;
            continue;
        }
        if (s.inQuote) {
            if (c == '"') s.inQuote = false;
            continue;
        }
        if (c == '"')
            s.inQuote = true;
        else if (c == ';')
            break;
        else if (c == '(')
            ++s.depth;
        else if (c == ')' && s.depth > 0)
            --s.depth;
    }
    // Outside parentheses ldns ends the record at an unescaped line end, an open quoted string with it.
    s.quoteCut = s.inQuote && s.depth == 0 && !s.escapedEnd;
    if (s.depth == 0 && !s.escapedEnd) s.inQuote = false;
}

bool readZoneFile(const std::string& path, const std::string& origin, SourceSet& out, std::string& error) {
    LdnsRdf org;
    std::string o = origin;
    if (o.empty() || o.back() != '.') o += '.';
    if (ldns_str2rdf_dname(&org.p, o.c_str()) != LDNS_STATUS_OK) {
        error = fmt::format("{}: zone name \"{}\" is not a domain name", path, origin);
        return false;
    }
    Reader r(out, error);
    if (!r.readFile(path, org.p, kNoTtl, 0, "")) return false;

    // RFC 1035 §5.1: an omitted TTL is the last one written before it; RFC 2308 §4 moved the default to $TTL,
    // which takes over where it is written (the reader applied it). Without a $TTL BIND and NSD keep the
    // older rule; so does gslbd, saying so once per file, as BIND does ("using RFC1035 TTL semantics"). A
    // record with no TTL written anywhere before it (an SOA without one, first in the file) gets the SOA
    // MINIMUM, BIND's fallback too.
    uint32_t minimum = 0;
    for (const auto& rec : out.records)
        if (rec.type == kTypeSOA && rec.rdata.size() >= 4) {
            const auto* p = reinterpret_cast<const uint8_t*>(rec.rdata.data()) + rec.rdata.size() - 4;
            minimum = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
            break;
        }
    std::optional<uint32_t> lastWritten;
    std::vector<bool> warned(out.files().size(), false);
    for (auto& rec : out.records) {
        if (rec.ttlFrom == TtlFrom::Written) lastWritten = rec.ttl;
        if (rec.ttlFrom != TtlFrom::None) continue;
        rec.ttl = lastWritten ? *lastWritten : minimum;
        if (warned[rec.file]) continue;
        warned[rec.file] = true;
        out.warnings.push_back(LoadWarning{
            fmt::format("{}:{}", out.file(rec), rec.line),
            lastWritten ? fmt::format("no $TTL: a record without a TTL gets the last TTL written before it "
                                      "({} s here; RFC 1035 §5.1, as BIND and NSD do); write $TTL to set "
                                      "the default",
                                      rec.ttl)
                        : fmt::format("no $TTL and no TTL written before this record: it gets the SOA "
                                      "MINIMUM ({} s), as BIND does; write $TTL to set the default",
                                      rec.ttl)});
    }
    return true;
}

std::unique_ptr<Zone> loadZone(const std::string& path, const std::string& origin, std::string& error) {
    SourceSet recs;
    if (!readZoneFile(path, origin, recs, error)) return nullptr;
    WireName apex;
    std::string o = origin;
    if (o.empty() || o.back() != '.') o += '.';
    if (!textToName(o, {}, apex)) {
        error = fmt::format("{}: zone name \"{}\" is not a domain name", path, origin);
        return nullptr;
    }
    return Zone::compile(apex, recs, path, error);
}

}  // namespace gslb::zones
