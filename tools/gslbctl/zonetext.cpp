#include "tools/gslbctl/zonetext.hpp"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "zones/loader.hpp"

namespace gslb::ctl {
namespace {

constexpr uint32_t kNoTtl = 0xFFFFFFFFu;  // as the loader: no TTL written and no $TTL yet
const char* const kUnknownOrigin = "gslbctl-unknown-origin.invalid.";

struct Rdf {
    ldns_rdf* p = nullptr;
    Rdf() = default;
    explicit Rdf(ldns_rdf* r) : p(r) {}
    Rdf(const Rdf&) = delete;
    Rdf& operator=(const Rdf&) = delete;
    ~Rdf() {
        if (p) ldns_rdf_deep_free(p);
    }
};

std::string rdfText(const ldns_rdf* r) {
    char* s = ldns_rdf2str(r);
    std::string out = s ? s : "";
    free(s);
    return out;
}

bool blankOrComment(std::string_view l) {
    for (char c : l) {
        if (c == ';') return true;
        if (!isspace(static_cast<unsigned char>(c))) return false;
    }
    return true;
}

// Parses one entry's text with ldns_rr_new_frm_fp_l (the loader's function) under the running state.
ldns_status parseOne(const std::string& text, uint32_t& ttl, ldns_rdf** origin, ldns_rdf** prev,
                     ldns_rr** rr) {
    std::string copy = text;
    if (copy.empty() || copy.back() != '\n') copy += '\n';
    FILE* fp = fmemopen(copy.data(), copy.size(), "r");
    if (!fp) return LDNS_STATUS_MEM_ERR;
    int line = 0;
    ldns_status s = ldns_rr_new_frm_fp_l(rr, fp, &ttl, origin, prev, &line);
    fclose(fp);
    return s;
}

struct Token {
    size_t pos, len;
};

// Tokens of a record's text: blanks and parentheses separate, comments are skipped, quoted strings are
// one token.
std::vector<Token> tokens(std::string_view t) {
    std::vector<Token> out;
    size_t i = 0;
    while (i < t.size()) {
        char c = t[i];
        if (isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')') {
            ++i;
        } else if (c == ';') {
            while (i < t.size() && t[i] != '\n') ++i;
        } else if (c == '"') {
            size_t s = i++;
            while (i < t.size() && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
            i = std::min(i + 1, t.size());
            out.push_back({s, i - s});
        } else {
            size_t s = i;
            while (i < t.size() && !isspace(static_cast<unsigned char>(t[i])) && t[i] != '(' && t[i] != ')' &&
                   t[i] != ';')
                i += t[i] == '\\' ? 2 : 1;
            i = std::min(i, t.size());
            out.push_back({s, i - s});
        }
    }
    return out;
}

bool isClassToken(std::string_view t) {
    return strncasecmp(t.data(), "IN", t.size()) == 0 && t.size() == 2 ? true
           : t.size() == 2 && (strncasecmp(t.data(), "CH", 2) == 0 || strncasecmp(t.data(), "HS", 2) == 0 ||
                               strncasecmp(t.data(), "CS", 2) == 0)
               ? true
               : (t.size() > 5 && strncasecmp(t.data(), "CLASS", 5) == 0);
}

}  // namespace

std::string recordKey(const ldns_rr* rr, bool withTtl, bool maskSerial) {
    ldns_rr* c = ldns_rr_clone(rr);
    ldns_rr2canonical(c);
    std::string key;
    const ldns_rdf* o = ldns_rr_owner(c);
    key.assign(reinterpret_cast<const char*>(ldns_rdf_data(o)), ldns_rdf_size(o));
    uint16_t type = uint16_t(ldns_rr_get_type(c));
    key += fmt::format("|{}|{}|", type, withTtl ? ldns_rr_ttl(c) : 0);
    ldns_buffer* buf = ldns_buffer_new(512);
    ldns_rr_rdata2buffer_wire(buf, c);
    std::string rd(reinterpret_cast<const char*>(ldns_buffer_begin(buf)), ldns_buffer_position(buf));
    ldns_buffer_free(buf);
    ldns_rr_free(c);
    if (maskSerial && type == LDNS_RR_TYPE_SOA && rd.size() >= 20)
        for (size_t k = rd.size() - 20; k < rd.size() - 16; ++k) rd[k] = 0;
    return key + rd;
}

std::string recordText(const ldns_rr* rr) {
    char* s = ldns_rr2str(rr);
    std::string out = s ? s : "";
    free(s);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

// Splits text_ into entries: a record (over several lines while its parentheses are open, as the loader
// reads it), a directive, an $INCLUDE, or blank and comment lines; each with its byte range and lines.
void ZoneText::splitEntries() {
    size_t i = 0;
    int line = 1;
    while (i < text_.size()) {
        ZoneEntry e;
        e.begin = i;
        e.firstLine = line;
        auto lineEnd = [&](size_t from) {
            size_t eol = text_.find('\n', from);
            return eol == std::string::npos ? text_.size() : eol + 1;
        };
        size_t eol = lineEnd(i);
        std::string_view l(text_.data() + i, eol - i);
        if (blankOrComment(l)) {
            e.kind = ZoneEntry::Blank;
        } else if (l[0] == '$') {
            e.kind = strncasecmp(l.data(), "$INCLUDE", 8) == 0 ? ZoneEntry::Include : ZoneEntry::Directive;
            e.originChanged = strncasecmp(l.data(), "$ORIGIN", 7) == 0;
        } else {
            e.kind = ZoneEntry::Record;
            zones::LineScan scan;
            zones::scanZoneLine(l, scan);
            while (scan.open() && eol < text_.size()) {
                size_t next = lineEnd(eol);
                zones::scanZoneLine(std::string_view(text_.data() + eol, next - eol), scan);
                eol = next;
                ++line;
            }
        }
        e.end = eol;
        e.lastLine = line;
        ++line;
        i = eol;
        entries_.push_back(std::move(e));
    }
}

// Parses the records and directives with ldns under the running $ORIGIN (from `startOrigin`), $TTL and
// previous owner; finds the SOA and its serial. False with `error` at the first line gslbd's loader would
// refuse.
bool ZoneText::parseEntries(const std::string& startOrigin, std::string& error) {
    soa_ = -1;
    includes_ = false;
    Rdf org, prev;
    if (ldns_str2rdf_dname(&org.p, startOrigin.c_str()) != LDNS_STATUS_OK) {
        error = fmt::format("{}: \"{}\" is not a domain name", file_, startOrigin);
        return false;
    }
    uint32_t ttl = kNoTtl;
    for (size_t k = 0; k < entries_.size(); ++k) {
        ZoneEntry& e = entries_[k];
        e.rr.reset();
        if (e.kind == ZoneEntry::Blank) continue;
        if (e.kind == ZoneEntry::Include) {
            includes_ = true;
            continue;
        }
        std::string t = text_.substr(e.begin, e.end - e.begin);
        ldns_rr* rr = nullptr;
        ldns_status s = parseOne(t, ttl, &org.p, &prev.p, &rr);
        if (s == LDNS_STATUS_SYNTAX_ORIGIN || s == LDNS_STATUS_SYNTAX_TTL || s == LDNS_STATUS_SYNTAX_EMPTY)
            continue;
        // What gslbd's loader refuses, in its words (zones/loader.hpp).
        int off = 0;
        if (std::string why = zones::recordTextProblem(t, off); !why.empty()) {
            if (s == LDNS_STATUS_OK) ldns_rr_free(rr);
            error = fmt::format("{}:{}: {}", file_, e.firstLine + off, why);
            return false;
        }
        if (s != LDNS_STATUS_OK) {
            error = fmt::format("{}:{}: {}", file_, e.firstLine,
                                zones::recordError(s, t, t[0] != ' ' && t[0] != '\t'));
            return false;
        }
        e.kind = ZoneEntry::Record;
        e.rr = RrPtr(rr, RrDeleter{});
        e.inheritsOwner = t[0] == ' ' || t[0] == '\t';
        e.ownerToken.clear();
        if (!e.inheritsOwner) {
            auto toks = tokens(t);
            if (!toks.empty()) e.ownerToken = t.substr(toks[0].pos, toks[0].len);
        }
        if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA && soa_ < 0) {
            // ldns hands back an SOA with fewer fields (or none: "SOA \# 0") when its rdata is
            // written short or as generic data; reading its serial would then dereference nothing.
            bool whole = ldns_rr_rd_count(rr) == 7;
            for (size_t f = 2; whole && f < 7; ++f)
                whole = ldns_rr_rdf(rr, f) && ldns_rdf_size(ldns_rr_rdf(rr, f)) == 4;
            if (!whole) {
                error = fmt::format("{}:{}: SOA rdata is not two names and five numbers (RFC 1035 §3.3.13)",
                                    file_, e.firstLine);
                return false;
            }
            soa_ = int(k);
            serial_ = ldns_rdf2native_int32(ldns_rr_rdf(rr, 2));
        }
    }
    endOrigin_ = std::shared_ptr<ldns_rdf>(org.p, [](ldns_rdf* r) { ldns_rdf_deep_free(r); });
    org.p = nullptr;
    endTtl_ = ttl;
    return true;
}

bool ZoneText::parse(const std::string& file, std::string text, const std::string& origin,
                     std::string& error) {
    file_ = file;
    text_ = std::move(text);
    entries_.clear();
    soa_ = -1;
    serial_ = 0;
    includes_ = false;
    splitEntries();
    std::string o = origin;
    if (!o.empty() && o != "." && o.back() != '.') o += '.';
    if (o.empty()) {
        if (!parseEntries(kUnknownOrigin, error)) return false;
        Rdf unknown;
        ldns_str2rdf_dname(&unknown.p, kUnknownOrigin);
        if (soa_ < 0) {
            error = fmt::format("{}: no SOA record: cannot tell the zone's origin (give --origin)", file_);
            return false;
        }
        const ldns_rdf* owner = ldns_rr_owner(entries_[size_t(soa_)].rr.get());
        if (ldns_dname_is_subdomain(owner, unknown.p) || ldns_dname_compare(owner, unknown.p) == 0) {
            error = fmt::format(
                "{}:{}: the SOA owner is relative and no $ORIGIN comes before it: cannot tell the zone's "
                "origin "
                "(give --origin)",
                file_, entries_[size_t(soa_)].firstLine);
            return false;
        }
        o = rdfText(owner);
    }
    origin_ = o;
    return parseEntries(o, error);
}

bool ZoneText::match(const std::string& owner, const std::string& type, const std::string& rdata,
                     std::vector<size_t>& out, std::string& error) const {
    out.clear();
    Rdf org;
    ldns_str2rdf_dname(&org.p, origin_.c_str());
    Rdf want;
    if (owner == "@") {
        want.p = ldns_rdf_clone(org.p);
    } else {
        if (ldns_str2rdf_dname(&want.p, owner.c_str()) != LDNS_STATUS_OK) {
            error = fmt::format("\"{}\" is not a domain name", owner);
            return false;
        }
        if (!ldns_dname_str_absolute(owner.c_str())) {
            ldns_rdf* abs = ldns_dname_cat_clone(want.p, org.p);
            if (!abs) {
                error = fmt::format("\"{}\" is too long", owner);
                return false;
            }
            ldns_rdf_deep_free(want.p);
            want.p = abs;
        }
    }
    ldns_rr_type t = ldns_rr_type(0);
    if (!type.empty()) {
        t = ldns_get_rr_type_by_name(type.c_str());
        if (t == 0) {
            error = fmt::format("\"{}\" is not a record type", type);
            return false;
        }
    }
    std::string rdKey;
    if (!rdata.empty()) {
        // ldns_rr_new_frm_str (ldns 1.8.3's ldns_bget_token) turns each line break inside parentheses into a
        // space with no bound check: "(" and a few hundred newlines in an argument overran its 256-octet
        // owner buffer (glibc: "double free or corruption"). The RDATA of a command line is one line.
        if (rdata.find('\n') != std::string::npos) {
            error = "the RDATA holds a line break: give it on one line";
            return false;
        }
        ldns_rr* rr = nullptr;
        std::string line = fmt::format("{} 0 IN {} {}", rdfText(want.p), type, rdata);
        ldns_status s = ldns_rr_new_frm_str(&rr, line.c_str(), 0, org.p, nullptr);
        if (s != LDNS_STATUS_OK) {
            error = fmt::format("cannot parse \"{} {}\": {}", type, rdata, ldns_get_errorstr_by_id(s));
            return false;
        }
        rdKey = recordKey(rr, false, false);
        ldns_rr_free(rr);
    }
    for (size_t k = 0; k < entries_.size(); ++k) {
        const ZoneEntry& e = entries_[k];
        if (e.kind != ZoneEntry::Record || !e.rr) continue;
        if (ldns_dname_compare(ldns_rr_owner(e.rr.get()), want.p) != 0) continue;
        if (t != 0 && ldns_rr_get_type(e.rr.get()) != t) continue;
        if (!rdKey.empty() && recordKey(e.rr.get(), false, false) != rdKey) continue;
        out.push_back(k);
    }
    return true;
}

std::string ZoneText::without(const std::vector<size_t>& drop) const {
    std::string out;
    std::string pending;  // owner a dropped record wrote and a following record inherited
    bool pendingAbsolute = false;
    std::string pendingAbs;
    for (size_t k = 0; k < entries_.size(); ++k) {
        const ZoneEntry& e = entries_[k];
        bool dropped = std::find(drop.begin(), drop.end(), k) != drop.end();
        if (e.kind == ZoneEntry::Record && e.rr) {
            if (dropped) {
                if (!e.inheritsOwner) {
                    pending = e.ownerToken;
                    pendingAbs = rdfText(ldns_rr_owner(e.rr.get()));
                    pendingAbsolute = false;
                }
                continue;
            }
            if (e.inheritsOwner && !pending.empty()) {
                out += pendingAbsolute ? pendingAbs : pending;
                out.append(text_, e.begin, e.end - e.begin);
                pending.clear();
                continue;
            }
            if (!e.inheritsOwner) pending.clear();
        } else if (e.originChanged && !pending.empty()) {
            pendingAbsolute = true;
        }
        if (!dropped) out.append(text_, e.begin, e.end - e.begin);
    }
    return out;
}

std::string ZoneText::withAppended(const std::string& line) const {
    std::string out = text_;
    if (!out.empty() && out.back() != '\n') out += '\n';
    Rdf org;
    ldns_str2rdf_dname(&org.p, origin_.c_str());
    if (!endOrigin_ || ldns_dname_compare(endOrigin_.get(), org.p) != 0) out += "$ORIGIN " + origin_ + "\n";
    out += line;
    out += '\n';
    return out;
}

bool ZoneText::withSerial(uint32_t serial, std::string& out, std::string& error) const {
    if (soa_ < 0) {
        error = fmt::format("{}: no SOA record in this file{}", file_,
                            includes_ ? " (an $INCLUDE file may hold it: edit that one)" : "");
        return false;
    }
    const ZoneEntry& e = entries_[size_t(soa_)];
    std::string_view t(text_.data() + e.begin, e.end - e.begin);
    auto toks = tokens(t);
    size_t idx = e.inheritsOwner ? 0 : 1;
    for (int n = 0; n < 2 && idx < toks.size(); ++n) {
        std::string_view tk = t.substr(toks[idx].pos, toks[idx].len);
        if (isdigit(static_cast<unsigned char>(tk[0])) || isClassToken(tk))
            ++idx;
        else
            break;
    }
    if (idx + 3 >= toks.size() || strncasecmp(t.data() + toks[idx].pos, "SOA", 3) != 0 ||
        toks[idx].len != 3) {
        error = fmt::format("{}:{}: cannot find the serial in the SOA record", file_, e.firstLine);
        return false;
    }
    const Token& st = toks[idx + 3];
    std::string_view old = t.substr(st.pos, st.len);
    if (old.find_first_not_of("0123456789") != std::string_view::npos ||
        std::strtoull(std::string(old).c_str(), nullptr, 10) != serial_) {
        error = fmt::format("{}:{}: the SOA serial \"{}\" is not a plain decimal number", file_, e.firstLine,
                            old);
        return false;
    }
    out = text_;
    out.replace(e.begin + st.pos, st.len, std::to_string(serial));
    return true;
}

std::vector<std::string> ZoneText::keys() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
        if (e.kind == ZoneEntry::Record && e.rr) out.push_back(recordKey(e.rr.get(), true, true));
    std::sort(out.begin(), out.end());
    return out;
}

std::string ZoneText::keyNoTtl(size_t i) const {
    if (!entries_[i].rr) return {};  // no parsed record: no key (callers compare keys of parsed records only)
    return recordKey(entries_[i].rr.get(), false, false);
}

}  // namespace gslb::ctl
