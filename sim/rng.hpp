// sim/rng.hpp — the simulation's own PRNG.
//
// xoshiro256** (Blackman & Vigna, https://prng.di.unimi.it/) seeded through
// SplitMix64, with our own bounded draws (Lemire's nearly-divisionless
// method with rejection), so a seed gives the same numbers with any compiler
// or standard library. Never use <random> distributions inside a run: their
// output is implementation-defined.
//
// Streams: every component draws from its own named sub-stream,
//   sim::Rng net = sim::Rng::stream(seed, "network");
// so adding a client does not change the lock service's draws.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/time.hpp"

namespace sim {

/// SplitMix64 step (Steele, Lea & Flood 2014); used for seeding only.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a, 64 bit: stable hash of names and traces.
constexpr std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed = 1) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }

  /// The sub-stream `name` of the run seeded with `seed`.
  static constexpr Rng stream(std::uint64_t seed, std::string_view name) {
    std::uint64_t mix = seed ^ fnv1a64(name);
    return Rng(splitmix64(mix));
  }

  /// Next raw 64-bit output.
  constexpr std::uint64_t next() {
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

  /// Uniform in [0, n); n == 0 returns 0. Unbiased (Lemire 2019).
  constexpr std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform integer in [lo, hi] (inclusive); requires lo <= hi.
  constexpr std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span == UINT64_MAX) return static_cast<std::int64_t>(next());
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + below(span + 1));
  }

  /// Uniform duration in [lo, hi] at 1 ns resolution.
  constexpr Duration uniform(Duration lo, Duration hi) { return Duration{uniform(lo.count(), hi.count())}; }

  /// True with probability num/den (integer ratio, TigerBeetle style).
  constexpr bool chance(std::uint64_t num, std::uint64_t den) { return below(den) < num; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace sim
