// The simulation's own PRNG: fixed algorithm, named streams, bounded draws.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "sim/rng.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace std::chrono_literals;

std::vector<std::uint64_t> draws(sim::Rng r, int n) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(r.next());
  return out;
}

TEST(Rng, TheAlgorithmIsXoshiro256StarStarSeededBySplitMix64) {
  // Reference values computed independently from the published algorithms
  // (prng.di.unimi.it): a change of algorithm changes every seeded run, so it
  // must show up here first.
  sim::Rng one(1);
  EXPECT_EQ(one.next(), 0xb3f2af6d0fc710c5ULL);
  EXPECT_EQ(one.next(), 0x853b559647364ceaULL);
  EXPECT_EQ(one.next(), 0x92f89756082a4514ULL);
  EXPECT_EQ(one.next(), 0x642e1c7bc266a3a7ULL);
  sim::Rng net = sim::Rng::stream(42, "network");
  EXPECT_EQ(net.next(), 0xa57a2711bc83fce9ULL);
  EXPECT_EQ(net.next(), 0xf2dd67853fa89f18ULL);
}

TEST(Rng, TheSameSeedGivesTheSameSequenceAndAnotherSeedADifferentOne) {
  EXPECT_EQ(draws(sim::Rng(42), 1000), draws(sim::Rng(42), 1000));
  EXPECT_NE(draws(sim::Rng(42), 1000), draws(sim::Rng(43), 1000));
  EXPECT_NE(draws(sim::Rng(0), 4), std::vector<std::uint64_t>(4, 0)) << "seed 0 must not give a zero state";
}

TEST(Rng, NamedStreamsOfOneSeedAreDistinctAndReproducible) {
  EXPECT_EQ(draws(sim::Rng::stream(7, "network"), 100), draws(sim::Rng::stream(7, "network"), 100));
  EXPECT_NE(draws(sim::Rng::stream(7, "network"), 100), draws(sim::Rng::stream(7, "clients"), 100));
  EXPECT_NE(draws(sim::Rng::stream(7, "network"), 100), draws(sim::Rng::stream(8, "network"), 100));
  EXPECT_NE(draws(sim::Rng::stream(7, "client-0"), 100), draws(sim::Rng::stream(7, "client-1"), 100));
}

TEST(Rng, DrawingFromOneStreamDoesNotChangeAnother) {
  // Adding a client (a new stream with many draws) leaves the lock service's
  // draws exactly as they were (ns-3 AssignStreams, TigerBeetle per-subsystem
  // seeds).
  sim::Simulation s(99);
  const std::vector<std::uint64_t> alone = draws(s.rng("lock-service"), 50);
  sim::Rng extra_client = s.rng("client-7");
  for (int i = 0; i < 10000; ++i) extra_client.next();
  EXPECT_EQ(draws(s.rng("lock-service"), 50), alone);
  EXPECT_EQ(draws(s.rng("lock-service"), 50), draws(sim::Rng::stream(99, "lock-service"), 50));
}

TEST(Rng, BoundedDrawsStayInTheirRange) {
  sim::Rng r(5);
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{7}, std::uint64_t{10},
                          std::uint64_t{1000}, (std::uint64_t{1} << 63) + 1, std::uint64_t{UINT64_MAX}}) {
    for (int i = 0; i < 2000; ++i) ASSERT_LT(r.below(n), n) << "n=" << n;
  }
  EXPECT_EQ(r.below(0), 0u);
  EXPECT_EQ(r.below(1), 0u);
  const std::array<std::pair<std::int64_t, std::int64_t>, 6> ranges = {
      {{-5, 5}, {0, 0}, {-3, -3}, {INT64_MIN, INT64_MIN + 2}, {INT64_MAX - 2, INT64_MAX}, {-1000000, 7}}};
  for (auto [lo, hi] : ranges) {
    for (int i = 0; i < 2000; ++i) {
      const std::int64_t v = r.uniform(lo, hi);
      ASSERT_GE(v, lo);
      ASSERT_LE(v, hi);
    }
  }
  // The full int64 range is allowed too.
  for (int i = 0; i < 100; ++i) (void)r.uniform(INT64_MIN, INT64_MAX);
  for (int i = 0; i < 2000; ++i) {
    const sim::Duration d = r.uniform(1ms, 50ms);
    ASSERT_GE(d, 1ms);
    ASSERT_LE(d, 50ms);
  }
}

TEST(Rng, UniformDrawsReachBothEndsAndSpreadEvenly) {
  sim::Rng r(11);
  std::array<int, 10> counts{};
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(r.uniform(-3, 6) + 3)];
  for (int c : counts) {
    // 10,000 expected per bucket; 5 standard deviations is about ±475.
    EXPECT_NEAR(c, n / 10, 500);
  }
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(r.uniform(std::int64_t{1}, std::int64_t{3}));
  EXPECT_EQ(seen, (std::set<std::int64_t>{1, 2, 3}));
}

TEST(Rng, ChanceIsAnIntegerRatio) {
  sim::Rng r(3);
  int hits = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(r.chance(0, 7));
    EXPECT_TRUE(r.chance(7, 7));
  }
  for (int i = 0; i < 100000; ++i) hits += r.chance(1, 4) ? 1 : 0;
  EXPECT_NEAR(hits, 25000, 700);
}

}  // namespace
