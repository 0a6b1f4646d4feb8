#include "zones/catalog.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <set>

#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

std::string label(std::string_view l) {
    std::string o(1, char(l.size()));
    o.append(l);
    return o;
}

std::string txt(std::string_view s) {
    return label(s);  // one character-string (RFC 1035 §3.3.14): a length octet, then the octets
}

}  // namespace

std::string catalogMemberId(std::string_view wire) {
    uint8_t d[32];
    unsigned len = 0;
    EVP_Digest(wire.data(), wire.size(), d, &len, EVP_sha256(), nullptr);
    return fmt::format("{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3], d[4], d[5],
                       d[6], d[7]);
}

bool catalogRecords(std::string_view apex, const std::vector<CatalogMember>& members, uint32_t serial,
                    const std::string& file, SourceSet& out, std::string& error) {
    uint32_t f = out.fileIndex(file);
    int line = 0;
    auto add = [&](std::string_view owner, uint16_t type, std::string_view rdata) {
        out.records.push_back(SourceRecord{out.store(owner), out.store(rdata), type, 0, f, ++line});
    };
    const std::string invalid = label("invalid") + std::string(1, '\0');
    std::string soa = invalid + invalid;
    for (uint32_t v : {serial, 3600u, 600u, 2147483646u, 0u})
        for (int s = 24; s >= 0; s -= 8) soa.push_back(char(v >> s));
    add(apex, kTypeSOA, soa);
    add(apex, kTypeNS, invalid);
    add(label("version") + std::string(apex), kTypeTXT, txt("2"));
    const std::string zones = label("zones") + std::string(apex);
    std::set<std::string> seen;
    for (const auto& m : members) {
        WireName w;
        if (!textToName(m.name, {}, w)) {
            error = fmt::format("{}: catalog member {} is not a domain name", file, m.name);
            return false;
        }
        std::string lower(w);
        lowerName(reinterpret_cast<uint8_t*>(lower.data()), lower.size());
        if (!seen.insert(lower).second) {
            error = fmt::format("{}: zone {} is a member of the catalog twice", file, m.name);
            return false;
        }
        std::string owner = label(catalogMemberId(lower)) + zones;
        add(owner, kTypePTR, lower);
        if (!m.group.empty()) {
            if (m.group.size() > 255) {
                error = fmt::format("{}: catalog_group of {} is longer than 255 octets", file, m.name);
                return false;
            }
            add(label("group") + owner, kTypeTXT, txt(m.group));
        }
    }
    return true;
}

}  // namespace gslb::zones
