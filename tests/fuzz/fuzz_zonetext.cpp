// gslbctl's zone-text editing (tools/gslbctl/zonetext, zoneedit): the first input line is an edit, the
// rest a zone file. Edits: "add OWNER [TTL] [IN] TYPE RDATA…", "del OWNER [TYPE [RDATA…]]", "serial [N]";
// any other first line only parses. Invariants: an unedited file comes back byte for byte; an edit that is
// accepted yields text holding exactly the intended records (prepareZone's own check: its "internal
// error" is a crash here), which the server's loader then reads with the new serial.
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "tools/gslbctl/zoneedit.hpp"
#include "tools/gslbctl/zonetext.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 64 * 1024) return 0;
    std::string input(reinterpret_cast<const char*>(data), size);
    if (fuzzutil::includesOutside(input)) return 0;
    size_t eol = input.find('\n');
    std::string command = input.substr(0, eol);
    std::string text = eol == std::string::npos ? std::string() : input.substr(eol + 1);
    std::vector<std::string> words;
    {
        std::istringstream ws(command);
        for (std::string w; ws >> w;) words.push_back(w);
    }
    static const std::string file = fuzzutil::scratchDir() + "/z.zone";
    gslb::ctl::ZoneEdit ed;
    ed.file = file;
    std::string error;
    if (!ed.before.parse(file, text, "", error)) {
        FUZZ_CHECK(error.rfind(file, 0) == 0, "parse error without the file name: " + error);
        return 0;
    }
    FUZZ_CHECK(ed.before.without({}) == text, "dropping nothing changed the text");
    (void)ed.before.keys();

    bool edited = false;
    std::optional<uint32_t> setSerial;
    if (words.size() >= 2 && words[0] == "add") {
        std::vector<std::string> rest(words.begin() + 2, words.end());
        std::string ttl, type, rdata;
        if (!gslb::ctl::splitRecordWords(rest, ttl, type, rdata, error)) return 0;
        edited = gslb::ctl::addRecord(ed, words[1], ttl, type, rdata, error);
    } else if (words.size() >= 2 && words[0] == "del") {
        std::string type = words.size() > 2 ? words[2] : "", rdata;
        for (size_t i = 3; i < words.size(); ++i) rdata += (rdata.empty() ? "" : " ") + words[i];
        std::vector<std::string> removed;
        edited = gslb::ctl::deleteRecords(ed, words[1], type, rdata, removed, error);
        if (edited) FUZZ_CHECK(!removed.empty(), "deleted nothing");
    } else if (!words.empty() && words[0] == "serial") {
        gslb::ctl::keepRecords(ed);
        if (words.size() > 1 && words[1].size() <= 9 &&
            words[1].find_first_not_of("0123456789") == std::string::npos)
            setSerial = uint32_t(std::stoul(words[1]));
        edited = true;
    }
    if (!edited) return 0;
    if (!gslb::ctl::prepareZone(ed, setSerial, error)) {
        FUZZ_CHECK(error.find("internal error") == std::string::npos, command + "\n" + error);
        return 0;
    }
    gslb::ctl::ZoneText after;
    FUZZ_CHECK(after.parse(file, ed.finalText, ed.before.origin(), error), "the final text: " + error);
    FUZZ_CHECK(after.serial() == ed.newSerial, "serial " + std::to_string(after.serial()));
    return 0;
}
