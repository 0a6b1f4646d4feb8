// Per-client caps on what one client may hold at once: TCP connections (tcp_max_connections_per_client) and
// zone transfers in flight (axfr_max_concurrent_per_client). A client is an IPv4 address or an IPv6 /64 (a
// host usually has a whole /64 to pick source addresses from), IPv4-mapped IPv6 counted as IPv4.
//
// The global caps (tcp_max_connections, axfr_max_concurrent) keep the server alive; these keep one client
// from taking all of it: without them a single address could open every TCP slot (a full table then closes
// the least recently active connection, which is another client's) or every transfer slot.
//
// The counts are exact, in a map under a mutex: they change on accept, close and the start and end of a
// transfer, never per query, and the map holds at most one entry per connection (or transfer) open, so its
// memory is bounded by the global caps.
#pragma once
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gslb::server {

class ClientCounter {
  public:
    /// The key of `client`: family and its address (IPv4) or first 8 octets (IPv6). {0, 0} when it is
    /// neither (such a client is never counted).
    struct Key {
        uint64_t hi = 0, lo = 0;
        bool operator==(const Key&) const = default;
    };
    static Key keyOf(const sockaddr* client) noexcept;

    /// Takes one unit for `client` when it holds fewer than `max`; false (nothing taken) when it already
    /// holds `max`. A client without a key (not IPv4/IPv6) always gets one. Thread-safe; O(1) expected.
    bool acquire(const Key& client, int max);
    /// Gives back one unit that acquire() took for `client`.
    void release(const Key& client);
    /// What `client` holds now (tests, status).
    int held(const Key& client) const;

  private:
    struct Hash {
        size_t operator()(const Key& k) const noexcept {
            uint64_t h = k.hi * 0x9E3779B97F4A7C15ULL ^ k.lo;
            h ^= h >> 29;
            h *= 0xBF58476D1CE4E5B9ULL;
            return size_t(h ^ (h >> 32));
        }
    };
    mutable std::mutex mu_;
    std::unordered_map<Key, int, Hash> held_;
};

}  // namespace gslb::server
