// tests/models/faults/faults_test.cpp — the table of fault kinds
// (models/faults.hpp): names, keys, nemesis eligibility, end times, detail
// text, the faults[] form, and applying through a FaultEnv.
#include "models/faults.hpp"
#include "models/sim_fault_env.hpp"
#include "models/words.hpp"

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
                                                                {FaultKind::kSlow, "slow"},
                                                                {FaultKind::kDiskStall, "disk_stall"}};
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
      {FaultKind::kDiskStall, {"target", "duration"}},
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
class FakeEnv final : public SimFaultEnv {
 public:
  FakeEnv() : SimFaultEnv(sim_, history_) {
    for (const char* n : {"A", "B", "redis-0"}) sim_.add_node(n);
  }
  std::optional<std::string> resolve(const std::string& name, std::string& why) override {
    if (name == "redis-primary") return "redis-0";
    if (name == "etcd-leader" || !sim_.find_node(name)) {
      why = "no node " + name;
      return std::nullopt;
    }
    return name;
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
  sim::Simulation sim_{1};
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

namespace fencesim {
namespace {

/// A world with no simulation: it records the verbs the fault table calls
/// and keeps the ends it schedules, so that the table is seen to drive any
/// FaultEnv (the real stack's RealFaultEnv is another such world).
class VerbLog final : public FaultEnv {
 public:
  Time now() override { return Time{1s}; }
  void record(FaultRecord rec) override { records.push_back(std::move(rec)); }
  std::optional<std::string> resolve(const std::string& target, std::string& why) override {
    if (target == "nobody") {
      why = "no such node";
      return std::nullopt;
    }
    return target == "redis-primary" ? "redis-1" : target;
  }
  void after(Duration d, std::function<void(FaultEnv&)> then) override { ends.emplace_back(d, std::move(then)); }
  bool pause(const std::string& n, Duration d, std::string&) override { return log("pause " + n, d); }
  bool crash(const std::string& n, bool power_loss, std::string& why) override {
    if (power_loss) why = "cannot lose power here";
    return !power_loss && log("crash " + n);
  }
  bool restart(const std::string& n, std::string&) override { return log("restart " + n); }
  bool clock_jump(const std::string& n, Duration by, ClockSelect c, std::string&) override {
    return log(fmt::format("clock_jump {} {}", n, word(c)), by);
  }
  bool set_drift(const std::string& n, std::int64_t ppm, std::string&) override {
    return log(fmt::format("set_drift {} {}", n, ppm));
  }
  std::optional<std::uint64_t> partition(const std::vector<std::vector<std::string>>& groups,
                                         const std::vector<std::string>& isolate, bool one_way, std::string&) override {
    log(fmt::format("partition {} groups, isolate {}{}", groups.size(), fmt::join(isolate, ","),
                    one_way ? " one-way" : ""));
    return 7;
  }
  void end_partition(std::uint64_t id) override { log(fmt::format("end_partition {}", id)); }
  void heal() override { log("heal"); }
  std::optional<std::uint64_t> slow(const std::string& n, Duration delay, std::string&) override {
    log("slow " + n, delay);
    return 3;
  }
  void end_slow(const std::string& n, Duration delay, std::uint64_t id) override {
    log(fmt::format("end_slow {} #{}", n, id), delay);
  }
  bool apply_service_fault(const FaultSpec& f, std::string&) override {
    return log(std::string("service ") + to_string(f.kind));
  }
  void reset_resource_marks(std::int64_t value) override { log(fmt::format("marks {}", value)); }

  /// Runs the scheduled ends in the order scheduled.
  void run_ends() {
    auto pending = std::move(ends);
    for (auto& [d, then] : pending) {
      log(fmt::format("(+{})", sim::format_duration(d)));
      then(*this);
    }
  }

  std::vector<std::string> calls;
  std::vector<FaultRecord> records;
  std::vector<std::pair<Duration, std::function<void(FaultEnv&)>>> ends;

 private:
  bool log(std::string s, std::optional<Duration> d = std::nullopt) {
    if (d) s += " " + sim::format_duration(*d);
    calls.push_back(std::move(s));
    return true;
  }
};

FaultSpec verb_spec(FaultKind k, const std::string& target) {
  FaultSpec f;
  f.kind = k;
  f.target = target;
  f.origin = "faults[0]";
  return f;
}

TEST(FaultVerbs, TheTableDrivesAWorldWithoutASimulation) {
  VerbLog env;
  FaultSpec pause = verb_spec(FaultKind::kPause, "redis-primary");
  pause.duration = 2s;
  FaultSpec crash = verb_spec(FaultKind::kCrash, "A");
  crash.restart_after = 3s;
  FaultSpec drift = verb_spec(FaultKind::kClockDrift, "B");
  drift.ppm = 500;
  drift.duration = 4s;
  FaultSpec part = verb_spec(FaultKind::kPartition, "");
  part.isolate = {"redis-primary", "nobody"};
  part.duration = 5s;
  FaultSpec slow = verb_spec(FaultKind::kSlow, "A");
  slow.delay = 100ms;
  slow.duration = 6s;
  FaultSpec jump = verb_spec(FaultKind::kClockJump, "B");
  jump.by = -250ms;
  for (const FaultSpec& f : {pause, crash, drift, part, slow, jump}) apply_fault(env, f, {});
  env.run_ends();
  const std::vector<std::string> want = {"pause redis-1 2s",
                                         "crash A",
                                         "set_drift B 500",
                                         "partition 0 groups, isolate redis-1",
                                         "slow A 100ms",
                                         "clock_jump B wall -250ms",
                                         "(+3s)",
                                         "restart A",
                                         "(+4s)",
                                         "set_drift B 0",
                                         "(+5s)",
                                         "end_partition 7",
                                         "(+6s)",
                                         "end_slow A #3 100ms"};
  EXPECT_EQ(env.calls, want);
  ASSERT_EQ(env.records.size(), 6u);
  EXPECT_EQ(env.records[0].target, "redis-1");  // the node the role resolved to
  EXPECT_EQ(env.records[0].start, Time{1s});
  for (const FaultRecord& r : env.records) EXPECT_FALSE(r.skipped) << r.target;
}

TEST(FaultVerbs, AVerbTheWorldCannotDoSkipsTheFaultWithItsReason) {
  VerbLog env;
  FaultSpec crash = verb_spec(FaultKind::kCrash, "A");
  crash.power_loss = true;
  crash.restart_after = 1s;
  apply_fault(env, crash, {});
  ASSERT_EQ(env.records.size(), 1u);
  EXPECT_TRUE(env.records[0].skipped);
  EXPECT_EQ(env.records[0].skip_reason, "cannot lose power here");
  EXPECT_TRUE(env.ends.empty());  // nothing crashed, so no restart is scheduled
}

}  // namespace
}  // namespace fencesim
