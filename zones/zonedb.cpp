#include "zones/zonedb.hpp"

#include <algorithm>
#include <cstring>

namespace gslb::zones {

void ZoneDb::insert(const Zone* z, uint32_t hash) {
    uint32_t h = hash & mask_;
    while (byApex_[h].zone) h = (h + 1) & mask_;
    byApex_[h] = Slot{z, hash};
}

const Zone* ZoneDb::lookup(const char* p, size_t len) const {
    if (byApex_.empty()) return nullptr;
    const uint32_t full = hashName(reinterpret_cast<const uint8_t*>(p), len);
    for (uint32_t h = full & mask_;; h = (h + 1) & mask_) {
        const Slot& s = byApex_[h];
        if (!s.zone) return nullptr;
        if (s.hash == full && s.zone->apex().size() == len && std::memcmp(s.zone->apex().data(), p, len) == 0)
            return s.zone;
    }
}

bool ZoneDb::add(std::unique_ptr<Zone> z) {
    std::string_view apex = z->apex();
    if (lookup(apex.data(), apex.size())) return false;
    if ((zones_.size() + 1) * 2 > byApex_.size()) {
        std::vector<Slot> old(std::max<size_t>(8, byApex_.size() * 2), Slot{nullptr, 0});
        old.swap(byApex_);
        mask_ = uint32_t(byApex_.size() - 1);
        for (const Slot& s : old)
            if (s.zone) insert(s.zone, s.hash);
    }
    insert(z.get(), hashName(apex));
    if (apex.size() < 256) apexLengths_[apex.size() >> 6] |= uint64_t(1) << (apex.size() & 63);
    zones_.push_back(std::move(z));
    return true;
}

const Zone* ZoneDb::findZone(const uint8_t* lower, size_t len, const uint8_t* labelOff, size_t labels) const {
    const char* p = reinterpret_cast<const char*>(lower);
    for (size_t i = 0; i < labels; ++i) {
        if (!apexLength(len - labelOff[i])) continue;
        if (const Zone* z = lookup(p + labelOff[i], len - labelOff[i])) return z;
    }
    if (!apexLength(1)) return nullptr;
    return lookup(p + len - 1, 1);  // the root zone
}

const Zone* ZoneDb::findZone(std::string_view name) const {
    uint8_t off[kMaxLabels];
    size_t n = 0;
    for (size_t p = 0; p < name.size() && name[p] != 0 && n < kMaxLabels; p += size_t(uint8_t(name[p])) + 1)
        off[n++] = uint8_t(p);
    return findZone(reinterpret_cast<const uint8_t*>(name.data()), name.size(), off, n);
}

const Zone* ZoneDb::zone(std::string_view lowerWire) const {
    return lookup(lowerWire.data(), lowerWire.size());
}

}  // namespace gslb::zones
