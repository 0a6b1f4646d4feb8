// The set of zones one server serves: an immutable snapshot once built (doc/design.md "Principles" 3).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zones/zone.hpp"

namespace gslb::zones {

class ZoneDb {
  public:
    /// Adds a zone; false when a zone of that name is already there.
    bool add(std::unique_ptr<Zone> z);

    /// The most specific zone that holds `lower` (lower-case wire, labels at `labelOff`), on label
    /// boundaries; nullptr when none does (the server then answers REFUSED). At most one hash look-up per
    /// label (only suffixes as long as some apex are looked up), no allocation.
    const Zone* findZone(const uint8_t* lower, size_t len, const uint8_t* labelOff, size_t labels) const;
    /// Same for a name given as a wire string (build time, tools).
    const Zone* findZone(std::string_view lowerWire) const;
    /// The zone whose apex is exactly `lowerWire`, or nullptr.
    const Zone* zone(std::string_view lowerWire) const;

    const std::vector<std::unique_ptr<Zone>>& zones() const { return zones_; }
    std::vector<std::unique_ptr<Zone>>& zones() { return zones_; }

  private:
    void insert(const Zone* z, uint32_t hash);
    std::vector<std::unique_ptr<Zone>> zones_;
    // The apexes, open addressing with linear probing, a power-of-two size at most half full, keyed by
    // hashName (what std::hash of a string cost was a tenth of a static query's user-space instructions).
    struct Slot {
        const Zone* zone;  // nullptr: empty
        uint32_t hash;
    };
    std::vector<Slot> byApex_;
    uint32_t mask_ = 0;
    const Zone* lookup(const char* p, size_t len) const;
    // Bit L set: some apex is L octets long (wire form, at most 255). findZone hashes only the suffixes of
    // those lengths: with one zone, one look-up per query instead of one per label of the QNAME.
    uint64_t apexLengths_[4] = {};
    bool apexLength(size_t len) const { return len < 256 && (apexLengths_[len >> 6] >> (len & 63) & 1); }
};

}  // namespace gslb::zones
