#pragma once
// Small, fast, seeded PRNG for the choosers: randomness is an input of every stage so tests are
// deterministic (doc/design.md "Principles" 5). One Rng per worker thread; not thread-safe, not
// cryptographic.

#include <cstdint>

namespace gslb::metrics {

/// splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014; the constants of Stafford's "Mix13"): a bijection of 64-bit words in which every input bit affects
/// every output bit, so keys that differ in one bit hash independently. The hashes built on it (rendezvous
/// ranks, resolver demand keys) are part of what every build must agree on: never change it.
inline std::uint64_t mix64(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), state seeded from one 64-bit value through splitmix64 as its authors
// recommend (so seeds 0, 1, 2 ... give unrelated streams and the state is never all zero).
class Rng {
  public:
    explicit Rng(std::uint64_t seed = 0x9e3779b97f4a7c15ULL) noexcept { reseed(seed); }

    void reseed(std::uint64_t seed) noexcept {
        for (auto& s : s_) s = splitmix64(seed);
    }

    // Next raw 64-bit value.
    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform integer in [0, n) without modulo bias (Lemire's multiply-and-reject). n == 0 returns 0.
    std::uint64_t uniform(std::uint64_t n) noexcept {
        if (n == 0) return 0;
        unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
        auto low = static_cast<std::uint64_t>(m);
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n: the biased low values to reject
            while (low < threshold) {
                m = static_cast<unsigned __int128>(next()) * n;
                low = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }

    // Uniform double in [0, 1): the top 53 bits, so every value is an exact multiple of 2^-53.
    double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix64(std::uint64_t& x) noexcept { return mix64(x += 0x9e3779b97f4a7c15ULL); }

    std::uint64_t s_[4];
};

}  // namespace gslb::metrics
