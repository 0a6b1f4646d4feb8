#include "tools/gslbctl/zoneedit.hpp"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cctype>

#include "tools/gslbctl/serial.hpp"
#include "zones/loader.hpp"

namespace gslb::ctl {

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
    if (from.empty()) return s;
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

bool splitRecordWords(const std::vector<std::string>& words, std::string& ttl, std::string& type,
                      std::string& rdata, std::string& error) {
    size_t i = 0;
    ttl.clear();
    if (i < words.size() && !words[i].empty() && isdigit(static_cast<unsigned char>(words[i][0])) &&
        words[i].find_first_not_of("0123456789sSmMhHdDwW") == std::string::npos)
        ttl = words[i++];
    if (i < words.size() && strcasecmp(words[i].c_str(), "IN") == 0) ++i;
    if (i >= words.size()) {
        error = "missing record type";
        return false;
    }
    type = words[i++];
    for (char& c : type) c = char(toupper(static_cast<unsigned char>(c)));
    if (ldns_get_rr_type_by_name(type.c_str()) == 0) {
        error = fmt::format("\"{}\" is not a record type", type);
        return false;
    }
    rdata.clear();
    // TXT and SPF: a word the shell handed over whole with spaces in it ("v=spf1 -all") is one string, as its
    // writer meant; the master file would split it at each space (a new user's SPF record became two
    // strings). Words already quoted, or without spaces, keep the master file's rules.
    const bool text = type == "TXT" || type == "SPF";
    for (; i < words.size(); ++i) {
        std::string w = words[i];
        if (text && w.find_first_of(" \t") != std::string::npos && w.find('"') == std::string::npos)
            w = '"' + w + '"';
        rdata += (rdata.empty() ? "" : " ") + w;
    }
    return true;
}

bool openZone(const std::string& file, const std::string& origin, ZoneEdit& ed, std::string& error) {
    ed.file = file;
    std::string text;
    if (!readFile(file, text, error)) return false;
    return ed.before.parse(file, std::move(text), origin, error);
}

bool addRecord(ZoneEdit& ed, const std::string& owner, const std::string& ttl, const std::string& type,
               const std::string& rdata, std::string& error) {
    if (rdata.empty()) {
        error = fmt::format("{} record without data", type);
        return false;
    }
    std::string line = fmt::format("{}\t{}IN\t{}\t{}", owner, ttl.empty() ? "" : ttl + "\t", type, rdata);
    // A file that ends inside a record (an unclosed parenthesis, an escaped line end) would swallow the
    // appended line into that record (found by tests/fuzz/fuzz_zonetext): refuse rather than guess.
    zones::LineScan scan;
    const std::string& text = ed.before.text();
    for (size_t i = 0; i < text.size();) {
        size_t eol = text.find('\n', i);
        if (eol == std::string::npos) eol = text.size();
        zones::scanZoneLine(std::string_view(text).substr(i, eol - i), scan);
        i = eol + 1;
    }
    if (scan.open()) {
        error = fmt::format("{}: the file ends inside a record (an unclosed parenthesis?): cannot add \"{}\"",
                            ed.file, line);
        return false;
    }
    ed.candidate = ed.before.withAppended(line);
    ZoneText c;
    std::string err;
    if (!c.parse(ed.file, ed.candidate, ed.before.origin(), err)) {
        // The file itself parsed, so the new line is the culprit.
        auto colon = err.find(": ", ed.file.size() + 1);
        error = fmt::format("{}: cannot add \"{}\": {}", ed.file, line,
                            colon == std::string::npos ? err : err.substr(colon + 2));
        return false;
    }
    size_t last = c.entries().size();
    while (last > 0 && c.entries()[last - 1].kind != ZoneEntry::Record) --last;
    if (last == 0) {
        error = fmt::format("{}: cannot add \"{}\"", ed.file, line);
        return false;
    }
    const ZoneEntry& added = c.entries()[last - 1];
    if (!added.rr) {  // a record entry ldns did not parse (found by fuzz_zonetext: "add ). PTR ...")
        error = fmt::format("{}: cannot add \"{}\"", ed.file, line);
        return false;
    }
    std::string k = c.keyNoTtl(last - 1);
    for (size_t i = 0; i < ed.before.entries().size(); ++i) {
        const ZoneEntry& e = ed.before.entries()[i];
        if (e.kind == ZoneEntry::Record && e.rr && ed.before.keyNoTtl(i) == k) {
            error = fmt::format("{}:{}: the record is already there: {}", ed.file, e.firstLine,
                                recordText(e.rr.get()));
            return false;
        }
    }
    ed.expectedKeys = ed.before.keys();
    ed.expectedKeys.push_back(recordKey(added.rr.get(), true, true));
    std::sort(ed.expectedKeys.begin(), ed.expectedKeys.end());
    return true;
}

bool deleteRecords(ZoneEdit& ed, const std::string& owner, const std::string& type, const std::string& rdata,
                   std::vector<std::string>& removed, std::string& error) {
    std::vector<size_t> hits;
    if (!ed.before.match(owner, type, rdata, hits, error)) return false;
    if (hits.empty()) {
        std::string what = owner + (type.empty() ? "" : " " + type) + (rdata.empty() ? "" : " " + rdata);
        error = fmt::format("{}: no record matches \"{}\"{}", ed.file, what,
                            ed.before.hasIncludes() ? " in this file ($INCLUDE files are not edited)" : "");
        return false;
    }
    std::vector<std::string> keys;
    for (size_t i = 0; i < ed.before.entries().size(); ++i) {
        const ZoneEntry& e = ed.before.entries()[i];
        if (e.kind != ZoneEntry::Record || !e.rr) continue;
        if (std::find(hits.begin(), hits.end(), i) != hits.end()) {
            if (ldns_rr_get_type(e.rr.get()) == LDNS_RR_TYPE_SOA) {
                error = fmt::format("{}:{}: refusing to delete the SOA record", ed.file, e.firstLine);
                return false;
            }
            removed.push_back(fmt::format("{}:{}: {}", ed.file, e.firstLine, recordText(e.rr.get())));
            continue;
        }
        keys.push_back(recordKey(e.rr.get(), true, true));
    }
    std::sort(keys.begin(), keys.end());
    ed.expectedKeys = std::move(keys);
    ed.candidate = ed.before.without(hits);
    return true;
}

void keepRecords(ZoneEdit& ed) {
    ed.candidate = ed.before.text();
    ed.expectedKeys = ed.before.keys();
}

bool prepareZone(ZoneEdit& ed, std::optional<uint32_t> setSerial, std::string& error) {
    ZoneText c;
    if (!c.parse(ed.file, ed.candidate, ed.before.origin(), error)) return false;
    if (c.keys() != ed.expectedKeys) {
        error = fmt::format(
            "{}: internal error: the edited text does not hold the intended records; "
            "nothing was changed",
            ed.file);
        return false;
    }
    ed.oldSerial = c.serial();
    ed.newSerial = setSerial ? *setSerial : bumpSerial(c.serial(), todayUtc());
    if (!c.withSerial(ed.newSerial, ed.finalText, error)) return false;
    if (!ed.temp.write(ed.file, ed.finalText, error)) return false;
    auto zone = zones::loadZone(ed.temp.path(), ed.before.origin(), error);
    if (!zone) {
        error = replaceAll(error, ed.temp.path(), ed.file);
        return false;
    }
    if (zone->serial() != ed.newSerial) {
        error = fmt::format("{}: internal error: the serial did not change as intended", ed.file);
        return false;
    }
    return true;
}

}  // namespace gslb::ctl
