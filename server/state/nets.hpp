// A longest-prefix-match table of client networks (the `[topology] nets` of the config), compiled once into
// sorted disjoint intervals per address family, so a lookup is a 64k-entry index step and a short binary
// search: a few cache lines whatever the table size (100k prefixes cost the same as 10). gdnsd's nlist
// flattens its networks the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "zones/client.hpp"

namespace gslb::server {

class NetTable {
  public:
    struct Entry {
        uint8_t family = zones::kFamilyIPv4;  // RFC 7871 family numbers: 1 IPv4, 2 IPv6
        uint8_t bits = 0;
        uint8_t addr[16]{};
        uint32_t value = 0;  // what the prefix maps to (a region id)
        std::string text;    // as configured, for messages and explain
    };
    struct Match {
        int32_t entry = -1;  // index into entries(), -1: no prefix covers the client
        uint8_t scope = 0;  // the shortest prefix of the client's address all of whose addresses get the same
                            // result (the ECS scope this lookup justifies, RFC 7871 §7.2.1)
    };

    /// Builds the table. False and `error` naming the prefix for host bits set past the length or the same
    /// prefix twice.
    bool build(std::vector<Entry> entries, std::string& error);
    /// Longest prefix covering `client` (its address with the bits past its prefix zero). noexcept, no
    /// allocation.
    Match lookup(const zones::ClientSubnet& client) const noexcept;
    const std::vector<Entry>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

  private:
    template <class K>
    struct Family {
        std::vector<K> starts;        // sorted; starts[0] == 0: the intervals tile the whole space
        std::vector<int32_t> value;   // entry index per interval, -1 for gaps
        std::vector<uint32_t> index;  // [top 16 bits] -> first interval that may hold such an address
        void build(std::vector<std::pair<K, K>> ranges, const std::vector<int32_t>& ids);
        Match lookup(K key, int width) const noexcept;
    };
    std::vector<Entry> entries_;
    Family<uint32_t> v4_;
    Family<unsigned __int128> v6_;
};

}  // namespace gslb::server
