#include "zones/name.hpp"

#include "zones/ldns.hpp"

namespace gslb::zones {

void lowerName(uint8_t* name, size_t len) {
    for (size_t i = 0; i < len;) {
        uint8_t l = name[i];
        if (l == 0) break;
        for (size_t j = i + 1; j <= i + l && j < len; ++j) name[j] = lowerByte(name[j]);
        i += size_t(l) + 1;
    }
}

size_t labelCount(std::string_view wire) {
    size_t n = 0;
    for (size_t i = 0; i < wire.size() && wire[i] != 0; i += size_t(uint8_t(wire[i])) + 1) ++n;
    return n;
}

std::string nameToText(std::string_view wire) {
    std::string out;
    size_t i = 0;
    if (wire.empty() || wire[0] == 0) return ".";
    while (i < wire.size() && wire[i] != 0) {
        size_t l = uint8_t(wire[i]);
        for (size_t j = i + 1; j <= i + l && j < wire.size(); ++j) {
            unsigned char c = uint8_t(wire[j]);
            if (c == '.' || c == '\\' || c == '(' || c == ')' || c == ';' || c == '"' || c == '@' ||
                c == '$') {
                out += '\\';
                out += char(c);
            } else if (c <= 32 || c >= 127) {
                char buf[5];
                snprintf(buf, sizeof buf, "\\%03u", c);
                out += buf;
            } else {
                out += char(c);
            }
        }
        out += '.';
        i += l + 1;
    }
    return out;
}

bool endsInDot(std::string_view text) noexcept {
    if (text.empty() || text.back() != '.') return false;
    // The backslashes just before the dot: an odd count escapes it, an even count escapes one another.
    size_t n = 0;
    while (n + 1 < text.size() && text[text.size() - 2 - n] == '\\') ++n;
    return n % 2 == 0;
}

bool textToName(std::string_view text, std::string_view originWire, WireName& out) {
    std::string s(text);
    ldns_rdf* rdf = nullptr;
    if (s == "@") {
        out.assign(originWire);
        return true;
    }
    if (ldns_str2rdf_dname(&rdf, s.c_str()) != LDNS_STATUS_OK || !rdf) return false;
    std::string wire(reinterpret_cast<const char*>(ldns_rdf_data(rdf)), ldns_rdf_size(rdf));
    ldns_rdf_deep_free(rdf);
    const bool absolute = endsInDot(s);
    if (!absolute) {
        // ldns gives "label...\0" for a relative name: drop the root and append the origin.
        wire.pop_back();
        wire.append(originWire);
    }
    if (wire.size() > kMaxNameLen) return false;
    lowerName(reinterpret_cast<uint8_t*>(wire.data()), wire.size());
    out = std::move(wire);
    return true;
}

bool isSubdomain(std::string_view name, std::string_view ancestor) {
    if (name.size() < ancestor.size()) return false;
    // Walk labels of `name` until the remaining suffix has the ancestor's length, then compare bytes.
    size_t i = 0;
    while (name.size() - i > ancestor.size()) {
        uint8_t l = uint8_t(name[i]);
        if (l == 0) return false;
        i += size_t(l) + 1;
    }
    return name.size() - i == ancestor.size() && name.substr(i) == ancestor;
}

}  // namespace gslb::zones
