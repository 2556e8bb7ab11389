// tests/models/faults/faults_test.cpp — the table of fault kinds
// (models/faults.hpp): names, keys, nemesis eligibility, end times, detail
// text, the faults[] form, and applying through a FaultEnv.
#include "models/faults.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace fencesim {
namespace {

using namespace std::chrono_literals;
using Keys = std::vector<std::string_view>;

FaultSpec spec(FaultKind k, Duration at = 2s) {
  FaultSpec f;
  f.kind = k;
  f.at = at;
  return f;
}

TEST(FaultTable, EveryKindHasOneEntryInEnumOrderAndItsName) {
  const std::vector<std::pair<FaultKind, const char*>> names = {{FaultKind::kPause, "pause"},
                                                                {FaultKind::kClockJump, "clock_jump"},
                                                                {FaultKind::kClockDrift, "clock_drift"},
                                                                {FaultKind::kPartition, "partition"},
                                                                {FaultKind::kHeal, "heal"},
                                                                {FaultKind::kCrash, "crash"},
                                                                {FaultKind::kFailover, "failover"},
                                                                {FaultKind::kCounterReset, "counter_reset"},
                                                                {FaultKind::kSlow, "slow"}};
  ASSERT_EQ(fault_kinds().size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(fault_kinds()[i].kind, names[i].first);
    EXPECT_STREQ(to_string(names[i].first), names[i].second);
    EXPECT_EQ(fault_kind_from_string(names[i].second), names[i].first);
    EXPECT_EQ(&fault_info(names[i].first), &fault_kinds()[i]);
  }
  EXPECT_FALSE(fault_kind_from_string("Pause"));
}

TEST(FaultTable, KeysBesidesAtAndKind) {
  const std::map<FaultKind, Keys> want = {
      {FaultKind::kPause, {"target", "duration"}},
      {FaultKind::kClockJump, {"target", "by", "clock"}},
      {FaultKind::kClockDrift, {"target", "ppm", "duration"}},
      {FaultKind::kPartition, {"groups", "isolate", "one_way", "duration"}},
      {FaultKind::kHeal, {}},
      {FaultKind::kCrash, {"target", "restart_after", "power_loss"}},
      {FaultKind::kFailover, {"target"}},
      {FaultKind::kCounterReset, {"target", "value"}},
      {FaultKind::kSlow, {"target", "delay", "duration"}},
  };
  for (const FaultKindInfo& k : fault_kinds()) EXPECT_EQ(k.keys, want.at(k.kind)) << k.name;
}

TEST(FaultTable, NemesisKindsInTheirListOrderAndOnlyThoseDraw) {
  const std::vector<FaultKind> want = {FaultKind::kPause,     FaultKind::kPartition,  FaultKind::kCrash,
                                       FaultKind::kClockJump, FaultKind::kClockDrift, FaultKind::kSlow};
  EXPECT_EQ(nemesis_fault_kinds(), want);
  for (const FaultKindInfo& k : fault_kinds()) {
    EXPECT_EQ(k.nemesis > 0, k.draw != nullptr) << k.name;
    EXPECT_TRUE(k.apply && k.end && k.detail && k.write) << k.name;
  }
  for (FaultKind k : {FaultKind::kHeal, FaultKind::kFailover, FaultKind::kCounterReset}) {
    EXPECT_EQ(fault_info(k).nemesis, 0) << to_string(k);
  }
}

TEST(FaultTable, EndTimes) {
  const std::vector<FaultSpec> none;
  FaultSpec pause = spec(FaultKind::kPause);
  pause.duration = 3s;
  EXPECT_EQ(fault_end(pause, none), Time{5s});
  FaultSpec slow = spec(FaultKind::kSlow);
  slow.duration = 1s;
  EXPECT_EQ(fault_end(slow, none), Time{3s});
  for (FaultKind k : {FaultKind::kClockJump, FaultKind::kHeal, FaultKind::kFailover, FaultKind::kCounterReset}) {
    EXPECT_EQ(fault_end(spec(k), none), Time{2s}) << to_string(k);
  }
  FaultSpec drift = spec(FaultKind::kClockDrift);
  EXPECT_EQ(fault_end(drift, none), std::nullopt);
  drift.duration = 4s;
  EXPECT_EQ(fault_end(drift, none), Time{6s});
  FaultSpec crash = spec(FaultKind::kCrash);
  EXPECT_EQ(fault_end(crash, none), std::nullopt);
  crash.restart_after = 7s;
  EXPECT_EQ(fault_end(crash, none), Time{9s});
  // A partition without a duration ends at the first heal at or after it.
  FaultSpec part = spec(FaultKind::kPartition);
  const std::vector<FaultSpec> heals = {spec(FaultKind::kHeal, 1s), spec(FaultKind::kHeal, 10s),
                                        spec(FaultKind::kHeal, 4s)};
  EXPECT_EQ(fault_end(part, none), std::nullopt);
  EXPECT_EQ(fault_end(part, heals), Time{4s});
  part.duration = 1s;
  EXPECT_EQ(fault_end(part, heals), Time{3s});
}

TEST(FaultTable, DetailText) {
  FaultSpec pause = spec(FaultKind::kPause);
  pause.duration = 1500ms;
  EXPECT_EQ(fault_detail(pause), "for 1.5s");
  FaultSpec jump = spec(FaultKind::kClockJump);
  jump.by = -5s;
  EXPECT_EQ(fault_detail(jump), "wall clock by -5s");
  jump.clock = ClockSelect::kBoth;
  jump.by = 25s;
  EXPECT_EQ(fault_detail(jump), "wall and monotonic clock by 25s");
  jump.clock = ClockSelect::kMonotonic;
  EXPECT_EQ(fault_detail(jump), "monotonic clock by 25s");
  FaultSpec drift = spec(FaultKind::kClockDrift);
  drift.ppm = -200;
  EXPECT_EQ(fault_detail(drift), "-200 ppm");
  drift.duration = 3s;
  EXPECT_EQ(fault_detail(drift), "for 3s, -200 ppm");
  FaultSpec part = spec(FaultKind::kPartition);
  part.isolate = {"A", "redis-0"};
  EXPECT_EQ(fault_detail(part), "isolate [A, redis-0]");
  part.isolate.clear();
  part.groups = {{"A"}, {"B", "redis-0"}};
  part.one_way = true;
  part.duration = 250ms;
  EXPECT_EQ(fault_detail(part), "for 250ms, groups [A] | [B, redis-0] one-way");
  EXPECT_EQ(fault_detail(spec(FaultKind::kHeal)), "");
  FaultSpec crash = spec(FaultKind::kCrash);
  EXPECT_EQ(fault_detail(crash), "no restart");
  crash.restart_after = 2s;
  EXPECT_EQ(fault_detail(crash), "restart after 2s");
  EXPECT_EQ(fault_detail(spec(FaultKind::kFailover)), "");
  FaultSpec reset = spec(FaultKind::kCounterReset);
  reset.value = 7;
  EXPECT_EQ(fault_detail(reset), "to 7");
  FaultSpec slow = spec(FaultKind::kSlow);
  slow.delay = 4s;
  slow.duration = 10s;
  EXPECT_EQ(fault_detail(slow), "for 10s, +4s per message");
}

/// Records what write_fault writes, as text.
class RecordingWriter final : public FaultWriter {
 public:
  std::vector<std::pair<std::string, std::string>> out;
  void text(std::string_view k, const std::string& v) override { out.emplace_back(k, v); }
  void integer(std::string_view k, std::int64_t v) override { out.emplace_back(k, std::to_string(v)); }
  void boolean(std::string_view k, bool v) override { out.emplace_back(k, v ? "true" : "false"); }
  void duration(std::string_view k, Duration v) override { out.emplace_back(k, sim::format_duration(v)); }
  void nodes(std::string_view k, const std::vector<std::string>& v) override {
    out.emplace_back(k, fmt::format("{}", fmt::join(v, ",")));
  }
  void node_groups(std::string_view k, const std::vector<std::vector<std::string>>& v) override {
    std::string s;
    for (const auto& g : v) s += "[" + fmt::format("{}", fmt::join(g, ",")) + "]";
    out.emplace_back(k, s);
  }
  void null_value(std::string_view k) override { out.emplace_back(k, "null"); }
  void object(std::string_view k, const std::function<void(KeyWriter&)>& fill) override {
    RecordingWriter inner;
    fill(inner);
    out.emplace_back(k, "{" + std::to_string(inner.out.size()) + " keys}");
  }
};

TEST(FaultTable, WritesOnlyTheKeysTheKindTakes) {
  // A fault of each kind with every FaultSpec field set.
  for (const FaultKindInfo& k : fault_kinds()) {
    FaultSpec f = spec(k.kind, 1500ms);
    f.target = "A";
    f.duration = 3s;
    f.by = -2s;
    f.ppm = 5;
    f.isolate = {"A"};
    f.restart_after = 1s;
    f.value = 3;
    f.delay = 250ms;
    f.origin = "nemesis#0";
    RecordingWriter w;
    write_fault(f, w);
    ASSERT_GE(w.out.size(), 2u);
    EXPECT_EQ(w.out[0], (std::pair<std::string, std::string>{"at", "1.5s"}));
    EXPECT_EQ(w.out[1], (std::pair<std::string, std::string>{"kind", k.name}));
    std::set<std::string> seen;
    for (std::size_t i = 2; i < w.out.size(); ++i) {
      EXPECT_NE(std::find(k.keys.begin(), k.keys.end(), w.out[i].first), k.keys.end())
          << k.name << " wrote " << w.out[i].first;
      EXPECT_TRUE(seen.insert(w.out[i].first).second) << k.name << " wrote " << w.out[i].first << " twice";
    }
  }
  FaultSpec jump = spec(FaultKind::kClockJump);
  jump.target = "A";
  jump.by = -250ms;
  RecordingWriter w;
  write_fault(jump, w);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"at", "2s"}, {"kind", "clock_jump"}, {"target", "A"}, {"by", "-250ms"}};  // clock wall is the default
  EXPECT_EQ(w.out, want);
}

/// A FaultEnv over a bare simulation with nodes A, B and "redis-0", where
/// "redis-primary" is redis-0 and "etcd-leader" has no node.
class FakeEnv final : public FaultEnv {
 public:
  FakeEnv() : sim_(1) {
    for (const char* n : {"A", "B", "redis-0"}) sim_.add_node(n);
  }
  sim::Simulation& sim() override { return sim_; }
  History& history() override { return history_; }
  std::optional<sim::NodeId> resolve(const std::string& name, std::string& why) override {
    if (name == "redis-primary") return sim_.find_node("redis-0");
    auto id = name == "etcd-leader" ? std::nullopt : sim_.find_node(name);
    if (!id) why = "no node " + name;
    return id;
  }
  bool apply_service_fault(const FaultSpec& f, std::string& why) override {
    service_calls.push_back(f.kind);
    if (!service_ok) why = "service says no";
    return service_ok;
  }
  void reset_resource_marks(std::int64_t value) override { marks = value; }

  std::vector<FaultKind> service_calls;
  bool service_ok = true;
  std::optional<std::int64_t> marks;
  History history_;

 private:
  sim::Simulation sim_;
};

TEST(FaultApply, PauseOfARoleRecordsTheNodeItResolvedTo) {
  FakeEnv env;
  FaultSpec f = spec(FaultKind::kPause, 0s);
  f.target = "redis-primary";
  f.duration = 2s;
  f.origin = "faults[0]";
  apply_fault(env, f, {f});
  ASSERT_EQ(env.history_.faults.size(), 1u);
  const FaultRecord& r = env.history_.faults[0];
  EXPECT_EQ(r.kind, FaultKind::kPause);
  EXPECT_EQ(r.target, "redis-0");
  EXPECT_EQ(r.end, Time{2s});
  EXPECT_EQ(r.detail, "for 2s");
  EXPECT_EQ(r.origin, "faults[0]");
  EXPECT_FALSE(r.skipped);
  EXPECT_TRUE(env.sim().node(*env.sim().find_node("redis-0")).paused());
  EXPECT_FALSE(env.sim().node(*env.sim().find_node("A")).paused());
}

TEST(FaultApply, AnUnresolvableTargetIsSkippedWithTheEnvsReason) {
  FakeEnv env;
  FaultSpec f = spec(FaultKind::kCrash, 0s);
  f.target = "etcd-leader";
  apply_fault(env, f, {f});
  ASSERT_EQ(env.history_.faults.size(), 1u);
  EXPECT_TRUE(env.history_.faults[0].skipped);
  EXPECT_EQ(env.history_.faults[0].skip_reason, "no node etcd-leader");
  EXPECT_EQ(env.history_.faults[0].target, "etcd-leader");
}

TEST(FaultApply, CrashTakesTheNodeDown) {
  FakeEnv env;
  FaultSpec f = spec(FaultKind::kCrash, 0s);
  f.target = "B";
  apply_fault(env, f, {f});
  EXPECT_FALSE(env.sim().node(*env.sim().find_node("B")).up());
  EXPECT_FALSE(env.history_.faults.at(0).skipped);
}

TEST(FaultApply, ServiceFaultsGoToTheServiceAndItsRefusalIsASkip) {
  FakeEnv env;
  FaultSpec fo = spec(FaultKind::kFailover, 0s);
  fo.target = "redis";
  apply_fault(env, fo, {});
  EXPECT_FALSE(env.history_.faults.at(0).skipped);
  env.service_ok = false;
  FaultSpec reset = spec(FaultKind::kCounterReset, 0s);
  reset.target = "redis";
  apply_fault(env, reset, {});
  EXPECT_TRUE(env.history_.faults.at(1).skipped);
  EXPECT_EQ(env.history_.faults.at(1).skip_reason, "service says no");
  EXPECT_EQ(env.service_calls, (std::vector<FaultKind>{FaultKind::kFailover, FaultKind::kCounterReset}));
  EXPECT_FALSE(env.marks);
}

TEST(FaultApply, CounterResetOfTheResourceResetsItsMarks) {
  FakeEnv env;
  FaultSpec f = spec(FaultKind::kCounterReset, 0s);
  f.target = "resource";
  f.value = 42;
  apply_fault(env, f, {});
  EXPECT_EQ(env.marks, 42);
  EXPECT_TRUE(env.service_calls.empty());
  EXPECT_FALSE(env.history_.faults.at(0).skipped);
  EXPECT_EQ(env.history_.faults.at(0).detail, "to 42");
}

TEST(FaultApply, DriftEndsAfterItsDuration) {
  FakeEnv env;
  FaultSpec f = spec(FaultKind::kClockDrift, 0s);
  f.target = "A";
  f.ppm = 1000;
  f.duration = 1s;
  apply_fault(env, f, {f});
  env.sim().run_until(Time{10s});
  // 1 s at +1000 ppm, then none: the wall clock is 1 ms ahead.
  EXPECT_EQ(env.sim().node(*env.sim().find_node("A")).wall(), Time{10s} + 1ms);
}

}  // namespace
}  // namespace fencesim
