#include "zones/zonedb.hpp"

namespace gslb::zones {

bool ZoneDb::add(std::unique_ptr<Zone> z) {
    std::string apex(z->apex());
    if (byApex_.count(apex)) return false;
    byApex_.emplace(apex, z.get());
    if (apex.size() < 256) apexLengths_[apex.size() >> 6] |= uint64_t(1) << (apex.size() & 63);
    zones_.push_back(std::move(z));
    return true;
}

const Zone* ZoneDb::findZone(const uint8_t* lower, size_t len, const uint8_t* labelOff, size_t labels) const {
    const char* p = reinterpret_cast<const char*>(lower);
    for (size_t i = 0; i < labels; ++i) {
        if (!apexLength(len - labelOff[i])) continue;
        auto it = byApex_.find(std::string_view(p + labelOff[i], len - labelOff[i]));
        if (it != byApex_.end()) return it->second;
    }
    if (!apexLength(1)) return nullptr;
    auto it = byApex_.find(std::string_view(p + len - 1, 1));  // the root zone
    return it == byApex_.end() ? nullptr : it->second;
}

const Zone* ZoneDb::findZone(std::string_view name) const {
    uint8_t off[kMaxLabels];
    size_t n = 0;
    for (size_t p = 0; p < name.size() && name[p] != 0 && n < kMaxLabels; p += size_t(uint8_t(name[p])) + 1)
        off[n++] = uint8_t(p);
    return findZone(reinterpret_cast<const uint8_t*>(name.data()), name.size(), off, n);
}

const Zone* ZoneDb::zone(std::string_view lowerWire) const {
    auto it = byApex_.find(lowerWire);
    return it == byApex_.end() ? nullptr : it->second;
}

}  // namespace gslb::zones
