// The lock-service seam proven from outside: a fake service, registered at
// run time (register_service), runs through run_scenario like a built-in one
// — its nodes in the directory, its client granting the lock, its role alias
// resolved at the moment a fault starts, its own fault (counter_reset of its
// counter) and its own verdict — and its own key of the `lock` section,
// "boss_until", read from a file, checked and written back with no change
// outside this folder. Its own binary: registering changes the registry for
// the rest of the process.
#include <gtest/gtest.h>

#include "loader/loader.hpp"
#include "loader/writer.hpp"
#include "models/client/client.hpp"
#include "models/lock_service.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

using Names = std::vector<std::string>;
const ServiceKind kFake = static_cast<ServiceKind>(100);

/// The fake's own setting, `lock.boss_until` (a duration, default 5s): when
/// the role fake-boss moves from fake-0 to fake-1.
struct FakeSettings final : ServiceSettings {
  Duration boss_until = 5s;
  bool equals(const ServiceSettings& o) const override {
    const auto* f = dynamic_cast<const FakeSettings*>(&o);
    return f != nullptr && f->boss_until == boss_until;
  }
};
Duration boss_until(const LockSpec& l) {
  const auto* f = dynamic_cast<const FakeSettings*>(l.other());
  return f != nullptr ? f->boss_until : FakeSettings{}.boss_until;
}

/// A perfect in-memory lock table on node fake-0: grants in request order,
/// tokens from a counter that `counter_reset` of "fake" rewinds.
class FakeService final : public LockService {
 public:
  FakeService(sim::Simulation& s, std::vector<sim::NodeId> nodes, Duration boss_until)
      : sim_(s), nodes_(std::move(nodes)), boss_until_(boss_until) {}
  void start() override { started_ = true; }
  std::optional<sim::NodeId> resolve_role(const std::string& role, std::string& why) const override {
    if (role != "fake-boss") return LockService::resolve_role(role, why);
    // The boss is fake-0 until lock.boss_until, then fake-1.
    return sim_.now() < Time{boss_until_.count()} ? nodes_[0] : nodes_[1];
  }
  bool apply_fault(const FaultSpec& f, std::string& why) override {
    if (f.kind != FaultKind::kCounterReset) return LockService::apply_fault(f, why);
    counter_ = f.value;
    return true;
  }
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t) override;
  std::vector<Verdict> own_verdicts() const override {
    Verdict v;
    v.property = Property::kRaftSafety;
    v.summary = started_ ? "the fake service checked itself" : "never started";
    v.checked = counter_;
    return {v};
  }

  sim::Simulation& sim_;
  std::vector<sim::NodeId> nodes_;
  Duration boss_until_;
  bool started_ = false;
  std::int64_t counter_ = 0;
  std::string holder_;  ///< lease value of the holder, "" when free
};

class FakeClient final : public client::LockClientBase {
 public:
  FakeClient(FakeService& svc, sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock)
      : LockClientBase(node, h, spec, lock), svc_(svc) {}
  client::Lease acquire(sim::Process& p) override {
    while (!svc_.holder_.empty()) p.sleep(spec_.retry_interval);
    client::Lease l{fresh_value(), ++svc_.counter_, ""};
    svc_.holder_ = l.value;
    history_.grant(node_.sim().now(), spec_.name, l.value, l.token, "fake-0");
    begin_belief(l);
    return l;
  }
  void release(sim::Process&) override {
    history_.lease_end(node_.sim().now(), svc_.holder_, "released", LeaseEndCause::kReleased);
    svc_.holder_.clear();
    end_belief("released");
  }

 private:
  FakeService& svc_;
};

std::unique_ptr<client::LockClient> FakeService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                             std::size_t) {
  return std::make_unique<FakeClient>(*this, node, h, c, LockSpec{});
}

class FakeDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return kFake; }
  std::string name() const override { return "fake"; }
  std::vector<std::string> group_names() const override { return {"fakes"}; }
  std::vector<NodeGroup> groups(const Scenario&) const override { return {NodeGroup{"fakes", {"fake-0", "fake-1"}}}; }
  std::vector<std::string> role_names() const override { return {"fake-boss"}; }
  bool hands_out_tokens(const Scenario&) const override { return true; }
  std::vector<Property> own_properties() const override { return {Property::kRaftSafety}; }
  std::vector<FaultKind> service_faults() const override { return {FaultKind::kCounterReset}; }
  // Its key of the `lock` section (docs/ARCHITECTURE.md "Adding a lock service").
  std::vector<std::string> lock_keys() const override { return {"boss_until"}; }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override {
    auto f = std::make_shared<FakeSettings>();
    if (const auto x = in.duration("boss_until", /*positive=*/true)) f->boss_until = *x;
    l.set_other(std::move(f));
  }
  void write(const LockSpec& l, KeyWriter& out) const override {
    if (boss_until(l) != FakeSettings{}.boss_until) out.duration("boss_until", boss_until(l));
  }
  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<FakeService>(ctx.sim, ctx.groups.at(0), boss_until(ctx.scenario.lock));
  }
};

class FakeServiceRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_service(std::make_unique<FakeDescriptor>()); }

  static Scenario scenario() {
    Scenario s;
    s.name = "fake";
    s.duration = 20s;
    s.settle = 5s;
    s.lock.set_service(kFake);
    s.resource.kind = ResourceKind::kFenced;
    for (const char* n : {"A", "B"}) {
      ClientSpec c;
      c.name = n;
      c.renew = false;
      c.workload.kind = WorkloadKind::kCounter;
      c.workload.iterations = 3;
      c.workload.work = 100ms;
      c.workload.think = 1s;
      c.renew_interval = 1s;  // resolved by hand: run_scenario refuses an unresolved Scenario
      s.clients.push_back(c);
    }
    return s;
  }
  static FaultSpec fault(FaultKind k, Duration at, std::string target) {
    FaultSpec f;
    f.kind = k;
    f.at = at;
    f.target = std::move(target);
    f.origin = "faults[" + std::to_string(at.count()) + "]";
    return f;
  }
};

TEST_F(FakeServiceRun, ItsNodesGroupsAndRolesJoinTheDirectory) {
  const NodeDirectory d = directory(scenario());
  EXPECT_EQ(d.all(), (Names{"A", "B", "fake-0", "fake-1", "resource"}));
  EXPECT_EQ(d.group("fakes"), (Names{"fake-0", "fake-1"}));
  EXPECT_EQ(d.group("redis"), Names{});
  EXPECT_EQ(d.roles(), (Names{"fake-boss"}));
  EXPECT_EQ(all_group_names(), (Names{"clients", "redis", "sentinels", "etcd", "queues", "tables", "zookeeper",
                                      "hazelcast", "fakes", "resources"}));
  EXPECT_EQ(all_role_names(), (Names{"redis-primary", "etcd-leader", "zk-leader", "hz-leader", "fake-boss"}));
  EXPECT_TRUE(property_applies(scenario(), Property::kTokenMonotonic));
  EXPECT_TRUE(property_applies(scenario(), Property::kRaftSafety));
}

TEST_F(FakeServiceRun, RunsThroughRunScenario) {
  Scenario s = scenario();
  s.faults = {fault(FaultKind::kPause, 2s, "fake-boss"), fault(FaultKind::kPause, 6s, "fake-boss")};
  s.faults[0].duration = s.faults[1].duration = 100ms;
  s.expect[Property::kMutualExclusion] = Expectation::kHolds;
  const RunResult r = run_scenario(s);
  EXPECT_FALSE(r.budget_exceeded);
  // Both clients took the lock in turn, three iterations each, tokens 1 … 6.
  ASSERT_EQ(r.history.grants.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(r.history.grants[i].token, static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(r.metrics.iterations_ok, 6);
  // The role resolved when each fault started.
  ASSERT_EQ(r.history.faults.size(), 2u);
  EXPECT_EQ(r.history.faults[0].target, "fake-0");
  EXPECT_EQ(r.history.faults[1].target, "fake-1");
  for (const Verdict& v : r.verdicts) {
    if (v.property == Property::kRaftSafety) {
      EXPECT_EQ(v.status, Status::kHolds);
      EXPECT_EQ(v.summary, "the fake service checked itself");
    } else if (v.property == Property::kNoDuplicateEffect) {
      EXPECT_EQ(v.status, Status::kNotApplicable);  // the queue design's only
    } else {
      EXPECT_EQ(v.status, Status::kHolds) << to_string(v.property) << ": " << v.summary;
    }
  }
  EXPECT_TRUE(r.all_met);
}

TEST_F(FakeServiceRun, ItsOwnFaultReachesIt) {
  Scenario s = scenario();
  s.faults = {fault(FaultKind::kCounterReset, 1500ms, "fake")};
  s.faults[0].value = 0;
  s.expect[Property::kTokenMonotonic] = Expectation::kViolated;
  const RunResult r = run_scenario(s);
  ASSERT_EQ(r.history.faults.size(), 1u);
  EXPECT_FALSE(r.history.faults[0].skipped);
  // The rewound counter hands out a token again.
  const Verdict& tm = r.verdicts[3];
  ASSERT_EQ(tm.property, Property::kTokenMonotonic);
  EXPECT_EQ(tm.status, Status::kViolated);
  EXPECT_TRUE(tm.met);
}

TEST_F(FakeServiceRun, AFaultItDoesNotTakeIsRefusedAsAFileWouldBe) {
  Scenario s = scenario();
  s.faults = {fault(FaultKind::kFailover, 4s, "fake")};
  try {
    run_scenario(s);
    FAIL() << "a failover of a service that takes none ran";
  } catch (const InvalidScenario& e) {
    EXPECT_EQ(e.problem.path, "faults[0].target");
    EXPECT_NE(e.problem.message.find("unknown value \"fake\""), std::string::npos) << e.problem.message;
  }
}

/// A scenario file of the fake service; `lock` is the text of its lock section.
std::string fake_file(const std::string& lock) {
  return R"({"scenario": "fake-file", "duration": "20s", "settle": "5s", "lock": )" + lock +
         R"(, "resource": {"kind": "fenced"},
      "clients": [{"name": "A", "renew": false, "workload": {"kind": "counter", "iterations": 3, "work": "100ms"}}],
      "faults": [{"at": "4s", "kind": "pause", "target": "fake-boss", "duration": "100ms"}]})";
}

TEST_F(FakeServiceRun, ItsKeyIsReadFromAFileAndWrittenBack) {
  const LoadResult r = load_scenario_text(fake_file(R"({"service": "fake", "ttl": "10s", "boss_until": "3s"})"), "f");
  ASSERT_TRUE(r.ok()) << r.error->to_string();
  EXPECT_EQ(boss_until(r.scenario->lock), 3s);
  // The role moved at 3 s, so the pause at 4 s took fake-1 (fake-0 with the default 5 s).
  const RunResult run = run_scenario(*r.scenario);
  ASSERT_EQ(run.history.faults.size(), 1u);
  EXPECT_EQ(run.history.faults[0].target, "fake-1");
  const std::string text = write_scenario(*r.scenario);
  EXPECT_NE(text.find(R"("boss_until": "3s")"), std::string::npos) << text;
  const LoadResult back = load_scenario_text(text, "written");
  ASSERT_TRUE(back.ok()) << back.error->to_string();
  EXPECT_EQ(back.scenario->lock, r.scenario->lock);
}

TEST_F(FakeServiceRun, ItsKeyIsCheckedAsEveryKeyIs) {
  const LoadResult bare = load_scenario_text(fake_file(R"({"service": "fake", "ttl": "10s", "boss_until": 3})"), "f");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error->to_string(),
            "f: at lock.boss_until: durations need a unit, e.g. \"10s\"; got the bare number 3 (did you mean \"3s\" "
            "or \"3ms\"?)");
  const LoadResult typo = load_scenario_text(fake_file(R"({"service": "fake", "ttl": "10s", "boss_untl": "3s"})"), "f");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error->to_string(),
            "f: at lock.boss_untl: unknown key \"boss_untl\" in lock (service fake); expected one of service, ttl, "
            "key, keys, boss_until (did you mean \"boss_until\"?)");
  // Another service's lock does not take it.
  const LoadResult redis =
      load_scenario_text(fake_file(R"({"service": "redis", "ttl": "10s", "boss_until": "3s"})"), "f");
  ASSERT_FALSE(redis.ok());
  EXPECT_EQ(redis.error->path, "lock.boss_until");
}

}  // namespace
}  // namespace fencesim
