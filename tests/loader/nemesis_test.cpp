// tests/loader/nemesis_test.cpp — the nemesis draws faults from the seed as
// docs/FORMAT.md says, and the same seed draws the same faults.
#include "models/nemesis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "loader/loader.hpp"
#include "sim/rng.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

Scenario with_nemesis(std::vector<FaultKind> kinds, std::uint64_t seed = 7) {
  Scenario s;
  s.name = "n";
  s.seed = seed;
  s.duration = 600s;
  s.settle = 30s;
  s.lock.redis().replicas = 1;
  for (const char* n : {"A", "B", "C"}) {
    ClientSpec c;
    c.name = n;
    s.clients.push_back(c);
  }
  NemesisSpec n;
  n.kinds = std::move(kinds);
  n.targets = {"A", "B", "C", "redis-primary"};
  n.interval_min = 2s;
  n.interval_max = 9s;
  n.max_duration = 15s;
  s.nemesis = n;
  return s;
}

bool same(const FaultSpec& a, const FaultSpec& b) {
  return a.at == b.at && a.kind == b.kind && a.target == b.target && a.duration == b.duration && a.by == b.by &&
         a.clock == b.clock && a.ppm == b.ppm && a.isolate == b.isolate && a.restart_after == b.restart_after &&
         a.delay == b.delay && a.origin == b.origin;
}

const std::vector<FaultKind> kAllNemesisKinds = {FaultKind::kPause,     FaultKind::kPartition,  FaultKind::kCrash,
                                                 FaultKind::kClockJump, FaultKind::kClockDrift, FaultKind::kSlow};

TEST(Nemesis, AGroupDrawHitsEveryNodeOfTheGroupAtOnceWithTheSameFault) {
  Scenario s = with_nemesis({FaultKind::kPause, FaultKind::kPartition});
  s.nemesis->targets.clear();
  s.nemesis->groups = {{"A"}, {"A", "B", "C"}};
  const auto faults = draw_nemesis(s);
  ASSERT_GT(faults.size(), 20u);
  bool saw_whole_group = false, saw_single = false, saw_group_cut = false;
  for (std::size_t i = 0; i < faults.size();) {
    const FaultSpec& f = faults[i];
    EXPECT_EQ(f.origin, "nemesis#" + std::to_string(i));
    if (f.kind == FaultKind::kPartition) {
      // One cut: the single node, or the whole group together.
      if (f.isolate.size() == 3) saw_group_cut = true;
      ++i;
      continue;
    }
    std::size_t n = 1;
    while (i + n < faults.size() && faults[i + n].at == f.at) ++n;
    if (n == 3) {
      saw_whole_group = true;
      EXPECT_EQ(faults[i + 1].target, "B");
      EXPECT_EQ(faults[i + 2].target, "C");
      EXPECT_EQ(faults[i + 1].duration, f.duration);
      EXPECT_EQ(faults[i + 2].duration, f.duration);
    } else {
      EXPECT_EQ(n, 1u);
      EXPECT_EQ(f.target, "A");
      saw_single = true;
    }
    i += n;
  }
  EXPECT_TRUE(saw_whole_group);
  EXPECT_TRUE(saw_single);
  EXPECT_TRUE(saw_group_cut);
}

TEST(Nemesis, NoNemesisBlockDrawsNothing) {
  Scenario s = with_nemesis({FaultKind::kPause});
  s.nemesis.reset();
  EXPECT_TRUE(draw_nemesis(s).empty());
}

TEST(Nemesis, TheSameSeedDrawsTheSameFaultsAndAnotherSeedOthers) {
  const auto a = draw_nemesis(with_nemesis(kAllNemesisKinds, 7));
  const auto b = draw_nemesis(with_nemesis(kAllNemesisKinds, 7));
  const auto c = draw_nemesis(with_nemesis(kAllNemesisKinds, 8));
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 20u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a[i], b[i])) << i;
  bool differs = a.size() != c.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = !same(a[i], c[i]);
  EXPECT_TRUE(differs);
}

TEST(Nemesis, FaultsStartAtIntervalsAndNoLaterThanSettlePlusMaxDurationBeforeTheEnd) {
  const Scenario s = with_nemesis(kAllNemesisKinds);
  const auto faults = draw_nemesis(s);
  const Duration last = s.duration - s.settle - s.nemesis->max_duration;
  Duration prev = 0s;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const Duration gap = faults[i].at - prev;
    EXPECT_GE(gap, s.nemesis->interval_min) << i;
    EXPECT_LE(gap, s.nemesis->interval_max) << i;
    EXPECT_LE(faults[i].at, last) << i;
    EXPECT_EQ(faults[i].origin, "nemesis#" + std::to_string(i));
    prev = faults[i].at;
  }
  // The schedule runs until the next start would pass the limit.
  EXPECT_GT(prev + s.nemesis->interval_max, last);
}

TEST(Nemesis, AFixedIntervalStartsTheFirstFaultAtTheInterval) {
  Scenario s = with_nemesis({FaultKind::kPause});
  s.nemesis->interval_min = s.nemesis->interval_max = 10s;
  s.duration = 100s;
  s.settle = 30s;
  s.nemesis->max_duration = 15s;
  const auto faults = draw_nemesis(s);
  // Starts at 10, 20, 30, 40, 50 s: 55 s is the last allowed start.
  ASSERT_EQ(faults.size(), 5u);
  for (std::size_t i = 0; i < faults.size(); ++i) EXPECT_EQ(faults[i].at, Duration(10s) * static_cast<int>(i + 1));
}

TEST(Nemesis, ARunTooShortForOneFaultDrawsNone) {
  Scenario s = with_nemesis({FaultKind::kPause});
  s.duration = 40s;  // 40 − 30 − 15 < 0
  EXPECT_TRUE(draw_nemesis(s).empty());
}

TEST(Nemesis, EachKindGetsItsOwnFields) {
  const Scenario s = with_nemesis(kAllNemesisKinds, 11);
  const auto faults = draw_nemesis(s);
  std::set<FaultKind> kinds;
  std::set<std::string> targets;
  bool negative_jump = false, positive_jump = false;
  for (const FaultSpec& f : faults) {
    kinds.insert(f.kind);
    // A drawn partition isolates its target and, like a faults[] entry of
    // the kind, has no target of its own.
    targets.insert(f.kind == FaultKind::kPartition ? f.isolate.at(0) : f.target);
    switch (f.kind) {
      case FaultKind::kPause:
        ASSERT_TRUE(f.duration.has_value());
        EXPECT_GE(*f.duration, 1ms);
        EXPECT_LE(*f.duration, 15s);
        EXPECT_EQ(*f.duration % 1ms, 0ns);
        break;
      case FaultKind::kPartition:
        EXPECT_EQ(f.isolate.size(), 1u);
        EXPECT_EQ(f.target, "");
        EXPECT_TRUE(f.groups.empty());
        EXPECT_FALSE(f.one_way);
        ASSERT_TRUE(f.duration.has_value());
        EXPECT_LE(*f.duration, 15s);
        break;
      case FaultKind::kCrash:
        ASSERT_TRUE(f.restart_after.has_value());
        EXPECT_GE(*f.restart_after, 1ms);
        EXPECT_LE(*f.restart_after, 15s);
        EXPECT_FALSE(f.duration.has_value());
        break;
      case FaultKind::kClockJump:
        EXPECT_EQ(f.clock, ClockSelect::kWall);
        EXPECT_NE(f.by, 0s);
        EXPECT_LE(f.by < 0s ? -f.by : f.by, 15s);
        EXPECT_EQ(f.by % 1ms, 0ns);
        (f.by < 0s ? negative_jump : positive_jump) = true;
        break;
      case FaultKind::kClockDrift:
        EXPECT_GE(f.ppm, -1000);
        EXPECT_LE(f.ppm, 1000);
        ASSERT_TRUE(f.duration.has_value());
        EXPECT_LE(*f.duration, 15s);
        break;
      case FaultKind::kSlow:
        EXPECT_GE(f.delay, 1ms);
        EXPECT_LE(f.delay, 15s);
        EXPECT_EQ(f.duration, 15s);  // slow lasts max_duration
        break;
      default: ADD_FAILURE() << "drew a non-nemesis kind " << to_string(f.kind);
    }
  }
  EXPECT_EQ(kinds.size(), 6u);
  EXPECT_EQ(targets, (std::set<std::string>{"A", "B", "C", "redis-primary"}));
  EXPECT_TRUE(negative_jump);
  EXPECT_TRUE(positive_jump);
}

TEST(Nemesis, AKindItCannotDrawAddsNothingAndOriginsStayPositions) {
  // Only a hand-built scenario can name heal; the loader refuses it.
  const auto mixed = draw_nemesis(with_nemesis({FaultKind::kPause, FaultKind::kHeal}, 3));
  const auto pauses = draw_nemesis(with_nemesis({FaultKind::kPause}, 3));
  ASSERT_GT(mixed.size(), 5u);
  EXPECT_LT(mixed.size(), pauses.size());  // the heal draws used up their turns
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    EXPECT_EQ(mixed[i].kind, FaultKind::kPause);
    EXPECT_EQ(mixed[i].origin, "nemesis#" + std::to_string(i));
  }
}

TEST(Nemesis, TheDocumentedDrawOrderReplaysTheFirstFault) {
  const Scenario s = with_nemesis(kAllNemesisKinds, 99);
  const auto faults = draw_nemesis(s);
  ASSERT_FALSE(faults.empty());
  // Replay the header's recipe by hand for fault #0.
  sim::Rng rng = sim::Rng::stream(99, "nemesis");
  const Duration at = rng.uniform(2s, 9s);
  const FaultKind kind = kAllNemesisKinds[static_cast<std::size_t>(rng.uniform(0, 5))];
  const std::string target = s.nemesis->targets[static_cast<std::size_t>(rng.uniform(0, 3))];
  const Duration d = std::chrono::milliseconds(rng.uniform(1, 15'000));
  EXPECT_EQ(faults[0].at, at);
  EXPECT_EQ(faults[0].kind, kind);
  EXPECT_EQ(kind == FaultKind::kPartition ? faults[0].isolate.at(0) : faults[0].target, target);
  switch (kind) {
    case FaultKind::kPause:
    case FaultKind::kPartition:
    case FaultKind::kClockDrift: EXPECT_EQ(faults[0].duration, d); break;
    case FaultKind::kCrash: EXPECT_EQ(faults[0].restart_after, d); break;
    case FaultKind::kClockJump: EXPECT_EQ(faults[0].by < 0s ? -faults[0].by : faults[0].by, d); break;
    case FaultKind::kSlow: EXPECT_EQ(faults[0].delay, d); break;
    default: break;
  }
}

TEST(Nemesis, TheAcceptanceCaseDrawsPausesOfItsWorkers) {
  const LoadResult r = load_scenario_text(R"({
    "scenario": "c07-like", "seed": 3, "duration": "120s",
    "lock": {"service": "etcd", "ttl": "3s"},
    "resource": {"kind": "fenced", "fence_reads": true},
    "clients": [{"name": "worker", "count": 3, "workload": {"kind": "counter", "iterations": 20}}],
    "nemesis": {"kinds": ["pause"], "targets": ["clients"], "interval": "3s", "max_duration": "8s"}})",
                                          "c07.json");
  ASSERT_TRUE(r.ok()) << r.error->to_string();
  const auto faults = draw_nemesis(*r.scenario);
  // Starts at 3, 6, …, 81 s: 120 − 30 − 8 = 82 s is the last allowed start.
  ASSERT_EQ(faults.size(), 27u);
  for (const auto& f : faults) {
    EXPECT_EQ(f.kind, FaultKind::kPause);
    EXPECT_EQ(f.target.rfind("worker-", 0), 0u);
  }
}

}  // namespace
}  // namespace fencesim

// -- swarm (docs/FORMAT.md "Nemesis", models/nemesis.hpp draw_swarm) --------

namespace fencesim {
namespace {

const std::vector<FaultKind> kSwarmKinds = {FaultKind::kPause,     FaultKind::kPartition,  FaultKind::kCrash,
                                            FaultKind::kClockJump, FaultKind::kClockDrift, FaultKind::kSlow};

TEST(NemesisSwarm, EachSeedEnablesANonEmptySubsetThatVaries) {
  std::set<std::pair<std::vector<FaultKind>, std::vector<std::string>>> subsets;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Scenario s = with_nemesis(kSwarmKinds, seed);
    s.nemesis->swarm = true;
    const std::optional<SwarmSubset> w = draw_swarm(s);
    ASSERT_TRUE(w);
    EXPECT_EQ(draw_swarm(s), w) << "same seed, same subset";
    ASSERT_FALSE(w->kinds.empty());
    ASSERT_FALSE(w->targets.empty());
    for (FaultKind k : w->kinds) EXPECT_NE(std::find(kSwarmKinds.begin(), kSwarmKinds.end(), k), kSwarmKinds.end());
    for (const std::string& t : w->targets) {
      EXPECT_NE(std::find(s.nemesis->targets.begin(), s.nemesis->targets.end(), t), s.nemesis->targets.end());
    }
    // The draws are those of a fixed nemesis over the subset alone.
    Scenario fixed = s;
    fixed.nemesis->swarm = false;
    fixed.nemesis->kinds = w->kinds;
    fixed.nemesis->targets = w->targets;
    const std::vector<FaultSpec> drawn = draw_nemesis(s);
    EXPECT_EQ(drawn, draw_nemesis(fixed)) << "seed " << seed;
    for (const FaultSpec& f : drawn) {
      EXPECT_NE(std::find(w->kinds.begin(), w->kinds.end(), f.kind), w->kinds.end());
      const std::string target = f.kind == FaultKind::kPartition ? f.isolate.at(0) : f.target;
      EXPECT_NE(std::find(w->targets.begin(), w->targets.end(), target), w->targets.end());
    }
    subsets.insert({w->kinds, w->targets});
  }
  EXPECT_GT(subsets.size(), 30u) << "60 seeds try many different mixes";
}

TEST(NemesisSwarm, OffOrWithOneChoiceItChangesNothing) {
  EXPECT_FALSE(draw_swarm(with_nemesis(kSwarmKinds, 3))) << "swarm is off by default";
  Scenario one = with_nemesis({FaultKind::kPause, FaultKind::kPause}, 3);
  one.nemesis->targets = {"B"};
  const std::vector<FaultSpec> before = draw_nemesis(one);
  one.nemesis->swarm = true;
  const std::optional<SwarmSubset> w = draw_swarm(one);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kinds, (std::vector<FaultKind>{FaultKind::kPause, FaultKind::kPause}))
      << "a kind listed twice stays twice";
  EXPECT_EQ(w->targets, std::vector<std::string>{"B"});
  EXPECT_EQ(draw_nemesis(one), before) << "swarm does not shift the nemesis stream";
}

TEST(NemesisSwarm, TheLoaderReadsSwarmAndRefusesANonBoolean) {
  const std::string text = R"({"scenario": "s", "duration": "120s", "lock": {"service": "redis", "ttl": "5s"},
    "resource": {"kind": "fenced"}, "clients": [{"name": "A", "workload": {"kind": "counter"}}],
    "nemesis": {"kinds": ["pause", "crash"], "swarm": true}})";
  const LoadResult r = load_scenario_text(text, "s.json");
  ASSERT_TRUE(r.ok()) << r.error->to_string();
  EXPECT_TRUE(r.scenario->nemesis->swarm);
  std::string bad = text;
  bad.replace(bad.find("true"), 4, "\"yes\"");
  const LoadResult e = load_scenario_text(bad, "s.json");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error->to_string().rfind("s.json: at nemesis.swarm: expected true or false", 0), 0u)
      << e.error->to_string();
}

}  // namespace
}  // namespace fencesim
