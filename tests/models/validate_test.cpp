// tests/models/validate_test.cpp — models/validate.hpp: a Scenario built in
// code (fencesim/builder.hpp) is resolved as a file is and refused with the
// path and message the loader gives the same mistake in a file.
#include "models/validate.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "loader/loader.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using nlohmann::json;

/// The worked example, as a builder and as the file that says the same.
ScenarioBuilder worked_example() {
  return ScenarioBuilder("worked-example")
      .duration(60s)
      .redis(10s)
      .fenced(FenceCheck::kStrict, false, 1000)
      .client("A", allocator(100, 500ms))
      .client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; })
      .pause("A", 200ms, 12s);
}
json worked_example_file() {
  return json::parse(R"({
    "scenario": "worked-example", "duration": "60s",
    "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
    "resource": {"kind": "fenced", "check": "strict", "initial": 1000},
    "clients": [{"name": "A", "workload": {"kind": "sequence_allocator", "block": 100, "work": "500ms"}},
                {"name": "B", "start": "2s",
                 "workload": {"kind": "sequence_allocator", "block": 100, "work": "500ms"}}],
    "faults": [{"at": "200ms", "kind": "pause", "target": "A", "duration": "12s"}]
  })");
}

/// The loader's error for `file`, as path and message.
std::pair<std::string, std::string> loader_error(const json& file) {
  const LoadResult r = load_scenario_text(file.dump(), "test.json");
  EXPECT_FALSE(r.ok()) << "the file loaded";
  if (!r.error) return {};
  return {r.error->path, r.error->message};
}

/// run_scenario's refusal of `b`, as path and message.
std::pair<std::string, std::string> run_error(const ScenarioBuilder& b) {
  try {
    run_scenario(b.build());
  } catch (const InvalidScenario& e) {
    EXPECT_EQ(std::string(e.what()), e.problem.to_string());
    return {e.problem.path, e.problem.message};
  }
  ADD_FAILURE() << "run_scenario ran an invalid scenario";
  return {};
}

TEST(Validate, TheBuilderAndTheFileResolveToTheSameScenario) {
  const LoadResult loaded = load_scenario_text(worked_example_file().dump(), "test.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error->to_string();
  const Scenario built = worked_example().build();
  EXPECT_EQ(built.lock.ttl, loaded.scenario->lock.ttl);
  EXPECT_EQ(built.lock.requested_ttl, loaded.scenario->lock.requested_ttl);
  ASSERT_EQ(built.clients.size(), 2u);
  EXPECT_EQ(built.clients[1].renew_interval, loaded.scenario->clients[1].renew_interval);
  EXPECT_EQ(built.faults[0].origin, loaded.scenario->faults[0].origin);
  EXPECT_EQ(built.notes, loaded.scenario->notes);
  EXPECT_FALSE(validate_scenario(built).has_value());
}

TEST(Validate, AZeroRenewIntervalIsRefusedByRunScenarioWithTheLoadersMessage) {
  ScenarioBuilder b = worked_example();
  b.client("C", counter(100ms), [](ClientSpec& c) { c.renew_interval = 0s; });
  json file = worked_example_file();
  file["clients"].push_back({{"name", "C"}, {"renew_interval", "0s"}, {"workload", {{"kind", "counter"}}}});
  const auto want = loader_error(file);
  EXPECT_EQ(want.first, "clients[2].renew_interval");
  EXPECT_EQ(run_error(b), want);
}

TEST(Validate, AFaultTargetThatDoesNotExistIsRefusedWithTheLoadersMessageAndSuggestion) {
  ScenarioBuilder b = worked_example();
  b.pause("Z", 1s, 1s).crash("redis-9", 2s);
  json file = worked_example_file();
  file["faults"].push_back({{"at", "1s"}, {"kind", "pause"}, {"target", "Z"}, {"duration", "1s"}});
  const auto want = loader_error(file);
  EXPECT_EQ(want.first, "faults[1].target");
  EXPECT_EQ(run_error(b), want);
  // The suggestion too: "redis-9" is one edit from "redis-0".
  ScenarioBuilder typo = worked_example();
  typo.crash("redis-9", 2s);
  const auto p = typo.validate();
  ASSERT_TRUE(p.has_value());
  file["faults"][1] = {{"at", "2s"}, {"kind", "crash"}, {"target", "redis-9"}};
  const LoadResult r = load_scenario_text(file.dump(), "test.json");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(p->suggestion, r.error->suggestion);
  EXPECT_EQ(p->suggestion, "did you mean \"redis-0\"?");
}

TEST(Validate, CrossFieldRulesGiveTheLoadersWords) {
  {  // Redlock with a replica but no Sentinel to promote it
    ScenarioBuilder b = worked_example();
    b.redlock(3, 10s).redis_spec([](RedisSpec& r) { r.replicas = 1; }).unfenced();
    json file = worked_example_file();
    file["lock"] = {{"service", "redis"}, {"ttl", "10s"}, {"redlock", 3}, {"replicas", 1}};
    file["resource"] = {{"kind", "unfenced"}};
    EXPECT_EQ(run_error(b), loader_error(file));
  }
  {  // an even etcd cluster
    ScenarioBuilder b = worked_example();
    b.etcd(10s, 4);
    json file = worked_example_file();
    file["lock"] = {{"service", "etcd"}, {"ttl", "10s"}, {"nodes", 4}};
    EXPECT_EQ(run_error(b), loader_error(file));
  }
  {  // expecting a property that does not apply
    ScenarioBuilder b = worked_example();
    b.redlock(3, 10s).unfenced().expect(Property::kTokenMonotonic, Expectation::kHolds);
    json file = worked_example_file();
    file["lock"] = {{"service", "redis"}, {"ttl", "10s"}, {"redlock", 3}};
    file["resource"] = {{"kind", "unfenced"}};
    file["expect"] = {{"token_monotonic", "holds"}};
    EXPECT_EQ(run_error(b), loader_error(file));
  }
  {  // a client routed to a copy that does not exist
    ScenarioBuilder b = worked_example();
    b.client("C", counter(100ms), [](ClientSpec& c) { c.resource = "resource-replica-0"; });
    json file = worked_example_file();
    file["clients"].push_back({{"name", "C"}, {"resource", "resource-replica-0"}, {"workload", {{"kind", "counter"}}}});
    EXPECT_EQ(run_error(b), loader_error(file));
  }
}

TEST(Validate, AHandBuiltScenarioMustBeResolved) {
  Scenario s = worked_example().build();
  s.clients[0].renew_interval = 0s;  // an explicit zero: not a valid interval
  ASSERT_TRUE(validate_scenario(s).has_value());
  EXPECT_EQ(validate_scenario(s)->path, "clients[0].renew_interval");
  s.clients[0].renew_interval = kResolveRenewInterval;
  EXPECT_NE(validate_scenario(s)->message.find("not resolved"), std::string::npos);
  resolve_scenario(s);
  EXPECT_EQ(s.clients[0].renew_interval, Duration{10s} / 3);
  EXPECT_FALSE(validate_scenario(s).has_value());
  s.lock.ttl = 5s;  // set without requested_ttl
  ASSERT_TRUE(validate_scenario(s).has_value());
  EXPECT_EQ(validate_scenario(s)->path, "lock.ttl");
}

TEST(Validate, AHandBuiltClientSpecIsValidAndGetsTheDefaultRenewInterval) {
  // ClientSpec{} names no renewal interval: run_scenario gives it a third of
  // the TTL, as resolve_scenario does, so the run equals the resolved one's.
  EXPECT_EQ(ClientSpec{}.renew_interval, kResolveRenewInterval);
  Scenario resolved = worked_example().build();
  Scenario hand = resolved;
  for (ClientSpec& c : hand.clients) c.renew_interval = ClientSpec{}.renew_interval;
  EXPECT_EQ(resolved.clients[0].renew_interval, default_renew_interval(resolved.lock, resolved.clients[0]));
  const RunResult a = run_scenario(resolved);
  const RunResult b = run_scenario(hand);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
}

TEST(Validate, ResolutionIsIdempotent) {
  Scenario s = ScenarioBuilder("raised")
                   .etcd(1s)
                   .etcd_spec([](EtcdSpec& e) { e.election_timeout = 3s, e.heartbeat = 500ms; })
                   .client("A", counter(100ms))
                   .heal(1s)
                   .build();
  const Scenario once = s;
  resolve_scenario(s);
  EXPECT_EQ(s.notes, once.notes);
  EXPECT_EQ(s.lock.ttl, 5s);
  EXPECT_EQ(s.clients[0].renew_interval, once.clients[0].renew_interval);
  ASSERT_EQ(s.notes.size(), 2u);  // the raise, then the heal that heals nothing
  EXPECT_NE(s.notes[0].find("raised from 1s to 5s"), std::string::npos);
  EXPECT_NE(s.notes[1].find("heals nothing"), std::string::npos);
}

TEST(Validate, EveryShippedScenarioIsValidAsLoaded) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(FENCESIM_SOURCE_DIR) / "scenarios")) {
    const std::string f = e.path().string();
    if (e.path().extension() != ".json" || f.find(".schema.") != std::string::npos) continue;
    const LoadResult r = load_scenario_file(f);
    ASSERT_TRUE(r.ok()) << f;
    EXPECT_FALSE(validate_scenario(*r.scenario).has_value())
        << f << ": " << validate_scenario(*r.scenario)->to_string();
    ++n;
  }
  EXPECT_GT(n, 5);
}

}  // namespace

TEST(Validate, EveryDurationIsBoundedAsInAFile) {
  ScenarioBuilder longer = worked_example();
  longer.duration(25h);
  json file = worked_example_file();
  file["duration"] = "25h";
  EXPECT_EQ(loader_error(file).first, "duration");
  EXPECT_EQ(run_error(longer).first, "duration");
  ScenarioBuilder pause = worked_example();
  pause.pause("A", 1s, Duration::max());
  const auto p = pause.validate();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "faults[1].duration");
  EXPECT_NE(p->message.find("is too long: at most 24h"), std::string::npos) << p->message;
  ScenarioBuilder timeout = worked_example();
  timeout.client("C", counter(100ms), [](ClientSpec& c) { c.command_timeout = Duration::max(); });
  ASSERT_TRUE(timeout.validate().has_value());
  EXPECT_EQ(timeout.validate()->path, "clients[2].command_timeout");
}

TEST(Validate, GroupNamesInTheBuildersNodeListsExpandAsInAFile) {
  ScenarioBuilder b = worked_example();
  b.isolate(1s, {"clients"}, 1s);
  NemesisSpec n;
  n.kinds = {FaultKind::kPause};
  b.nemesis(n);  // targets left out: the clients, as the format's default
  const Scenario s = b.build();
  EXPECT_FALSE(validate_scenario(s).has_value()) << validate_scenario(s)->to_string();
  EXPECT_EQ(s.faults.back().isolate, (std::vector<std::string>{"A", "B"}));
  ASSERT_TRUE(s.nemesis.has_value());
  EXPECT_EQ(s.nemesis->targets, (std::vector<std::string>{"A", "B"}));
  // A group with no nodes in this design: the loader's words.
  ScenarioBuilder etcd = worked_example();
  etcd.isolate(1s, {"etcd"});
  json file = worked_example_file();
  file["faults"].push_back({{"at", "1s"}, {"kind", "partition"}, {"isolate", {"etcd"}}});
  EXPECT_EQ(run_error(etcd), loader_error(file));
}

TEST(Validate, AFaultAtTheEndOfTheRunNeverHappens) {
  ScenarioBuilder b = worked_example();
  b.crash("redis-0", 60s);
  const Scenario s = b.build();
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("it never happens"), std::string::npos) << s.notes.back();
  const RunResult r = run_scenario(s);
  for (const FaultRecord& f : r.history.faults) EXPECT_NE(f.kind, FaultKind::kCrash) << "the crash at the end fired";
  // progress is judged after the pause, not held vacuously by a crash that never happened.
  const Verdict& progress = verdict_of(r, Property::kProgress);
  EXPECT_EQ(progress.summary.find("never ends"), std::string::npos) << progress.summary;
}

}  // namespace fencesim::testing

namespace fencesim::testing {
namespace {

TEST(Scenario, ALockSpecHoldsItsOwnServicesSettingsOnly) {
  LockSpec l;  // Redis by default
  EXPECT_EQ(l.service(), ServiceKind::kRedis);
  l.redis().replicas = 2;
  l.set_service(ServiceKind::kRedis);  // the same service: its settings stay
  EXPECT_EQ(l.redis().replicas, 2);
  l.set_service(ServiceKind::kEtcd);  // another: its defaults
  EXPECT_EQ(l.service(), ServiceKind::kEtcd);
  EXPECT_EQ(l.etcd(), EtcdSpec{});
  try {
    (void)l.redis();
    ADD_FAILURE() << "redis() of an etcd LockSpec returned";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "LockSpec: the settings of lock.service \"redis\" asked of a scenario whose lock.service is \"etcd\"");
  }
  EXPECT_EQ(l.use<RedisSpec>(), RedisSpec{});  // by type, as the builder does
  EXPECT_EQ(l.service(), ServiceKind::kRedis);
  l.use<std::monostate>();
  EXPECT_EQ(l.service(), ServiceKind::kNone);
  // A service registered at run time keeps its kind and its own settings.
  const auto registered = static_cast<ServiceKind>(100);
  l.set_service(registered);
  EXPECT_EQ(l.service(), registered);
  EXPECT_EQ(l.other(), nullptr);
  EXPECT_THROW((void)l.zookeeper(), std::logic_error);
  LockSpec same;
  same.set_service(registered);
  EXPECT_EQ(l, same);
  same.set_service(static_cast<ServiceKind>(101));
  EXPECT_NE(l, same);
}

TEST(Scenario, EveryNamedPropertyIsListed) {
  // A Property with a name (to_string) must be in kAllProperties, in enum
  // order, or sweeps (arrays of kPropertyCount) would silently drop it.
  std::size_t named = 0;
  for (int i = 0; i < 64; ++i) {
    const std::string name = to_string(static_cast<Property>(i));
    if (name == "?") continue;
    ++named;
    ASSERT_LT(static_cast<std::size_t>(i), kPropertyCount) << name << " is not in kAllProperties";
    EXPECT_EQ(static_cast<int>(kAllProperties[static_cast<std::size_t>(i)]), i) << name;
  }
  EXPECT_EQ(named, kPropertyCount);
}

}  // namespace
}  // namespace fencesim::testing
