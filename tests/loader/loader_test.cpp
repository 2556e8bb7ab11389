// tests/loader/loader_test.cpp — the scenario loader: shipped files load,
// defaults resolve, expansions happen, and bad input gets a clear error.
#include "loader/loader.hpp"
#include "models/nemesis.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "models/validate.hpp"
#include "models/world.hpp"
#include "tests/loader/test_paths.hpp"

namespace fencesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// A small valid scenario to start from; tests change one thing at a time.
json base_scenario() {
  return json::parse(R"({
    "scenario": "t",
    "duration": "60s",
    "lock": {"service": "redis", "ttl": "9s"},
    "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "sequence_allocator"}},
                {"name": "B", "workload": {"kind": "counter"}}]
  })");
}

Scenario load_ok(const json& j) {
  LoadResult r = load_scenario_text(j.dump(), "test.json");
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->to_string() : "");
  EXPECT_FALSE(r.error.has_value());
  return r.scenario.value_or(Scenario{});
}

std::string load_err_text(std::string_view text) {
  LoadResult r = load_scenario_text(text, "test.json");
  EXPECT_FALSE(r.ok());
  return r.error ? r.error->to_string() : "";
}
std::string load_err(const json& j) { return load_err_text(j.dump()); }

// -- the files we ship and the acceptance cases ---------------------------

TEST(LoaderFiles, EveryAcceptanceCaseInSharedCasesLoads) {
  const auto files = testing::json_files(testing::shared_cases_dir());
  if (files.empty()) GTEST_SKIP() << "no acceptance cases at " << testing::shared_cases_dir();
  for (const auto& f : files) {
    LoadResult r = load_scenario_file(f.string());
    EXPECT_TRUE(r.ok()) << f << ": " << (r.error ? r.error->to_string() : "");
  }
}

TEST(LoaderFiles, EveryGoodFileAndShippedScenarioLoads) {
  auto files = testing::json_files(testing::loader_test_dir() / "good");
  ASSERT_GE(files.size(), 5u);
  for (const auto& f : testing::json_files(testing::source_dir() / "scenarios")) files.push_back(f);
  for (const auto& f : files) {
    if (f.filename().string().find(".schema.") != std::string::npos) continue;
    LoadResult r = load_scenario_file(f.string());
    EXPECT_TRUE(r.ok()) << f << ": " << (r.error ? r.error->to_string() : "");
    // What loads passes the rules run_scenario checks, unchanged by resolving again.
    if (!r.ok()) continue;
    EXPECT_FALSE(validate_scenario(*r.scenario).has_value()) << f;
    Scenario again = *r.scenario;
    resolve_scenario(again);
    EXPECT_EQ(again.notes, r.scenario->notes) << f;
    EXPECT_EQ(again.lock.ttl, r.scenario->lock.ttl) << f;
  }
}

TEST(LoaderFiles, WorkedExampleFencedResolvesAsTheArticleDescribes) {
  const fs::path f = testing::shared_cases_dir() / "c02-worked-example-fenced.json";
  if (!fs::exists(f)) GTEST_SKIP() << "absent: " << f;
  const Scenario s = load_scenario_file(f.string()).scenario.value();
  EXPECT_EQ(s.name, "c02-worked-example-fenced");
  EXPECT_EQ(s.lock.ttl, 10s);
  EXPECT_EQ(s.lock.redis().replicas, 0);
  EXPECT_EQ(s.lock.redis().sentinels, 0);
  EXPECT_EQ(s.resource.initial, 1000);
  ASSERT_EQ(s.clients.size(), 2u);
  EXPECT_EQ(s.clients[1].start, 2s);
  EXPECT_EQ(s.clients[0].workload.work, 500ms);
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].at, 200ms);
  EXPECT_EQ(s.faults[0].duration, 12s);
  EXPECT_EQ(s.faults[0].origin, "faults[0]");
  EXPECT_EQ(s.expect.at(Property::kMutualExclusion), Expectation::kViolated);
  EXPECT_EQ(s.expect.at(Property::kNoStaleWrite), Expectation::kHolds);
}

TEST(LoaderFiles, EtcdCaseKeepsItsThreeSecondTtlWithoutANote) {
  const fs::path f = testing::shared_cases_dir() / "c07-etcd-pauses-fenced-reads.json";
  if (!fs::exists(f)) GTEST_SKIP() << "absent: " << f;
  const Scenario s = load_scenario_file(f.string()).scenario.value();
  EXPECT_EQ(s.lock.service(), ServiceKind::kEtcd);
  EXPECT_EQ(s.lock.ttl, 3s);
  EXPECT_TRUE(s.notes.empty());
  ASSERT_EQ(s.clients.size(), 3u);
  EXPECT_EQ(s.clients[2].name, "worker-2");
  EXPECT_EQ(s.clients[0].renew_interval, 1s);
  ASSERT_TRUE(s.nemesis.has_value());
  EXPECT_EQ(s.nemesis->targets, (std::vector<std::string>{"worker-0", "worker-1", "worker-2"}));
  EXPECT_EQ(s.nemesis->interval_min, 3s);
  EXPECT_EQ(s.nemesis->max_duration, 8s);
}

// -- defaults --------------------------------------------------------------

TEST(LoaderDefaults, ARedisScenarioGetsEveryDefaultOfTheFormat) {
  const Scenario s = load_ok(base_scenario());
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.duration, 60s);
  EXPECT_EQ(s.settle, 30s);
  EXPECT_EQ(s.network.latency_min, 1ms);
  EXPECT_EQ(s.network.latency_max, 1ms);
  EXPECT_EQ(s.network.loss_ppb, 0u);
  EXPECT_EQ(s.lock.service(), ServiceKind::kRedis);
  EXPECT_EQ(s.lock.ttl, 9s);
  EXPECT_EQ(s.lock.requested_ttl, 9s);
  EXPECT_EQ(s.lock.key, "lock");
  EXPECT_EQ(s.lock.redis().replicas, 1);
  EXPECT_EQ(s.lock.redis().replication_delay, 5ms);
  EXPECT_EQ(s.lock.redis().sentinels, 3);
  EXPECT_EQ(s.lock.redis().down_after, 5s);
  EXPECT_EQ(s.lock.redis().expiry_clock, sim::ClockKind::kWall);
  EXPECT_EQ(s.lock.redis().token, RedisToken::kIncr);
  EXPECT_EQ(s.lock.redis().redlock, 0);
  EXPECT_EQ(s.resource.kind, ResourceKind::kFenced);
  EXPECT_EQ(s.resource.check, FenceCheck::kStrict);
  EXPECT_FALSE(s.resource.fence_reads);
  EXPECT_EQ(s.resource.initial, 0);
  EXPECT_EQ(s.resource.replicas, 0);
  EXPECT_EQ(s.resource.replication_delay, 50ms);
  ASSERT_EQ(s.clients.size(), 2u);
  const ClientSpec& a = s.clients[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.start, 0s);
  EXPECT_TRUE(a.fencing);
  EXPECT_TRUE(a.renew);
  EXPECT_EQ(a.renew_interval, 3s);  // ttl / 3
  EXPECT_EQ(a.renew_clock, sim::ClockKind::kMonotonic);
  EXPECT_EQ(a.retry_interval, 100ms);
  EXPECT_EQ(a.command_timeout, 1s);
  EXPECT_EQ(a.resource, "resource");
  EXPECT_EQ(a.workload.kind, WorkloadKind::kSequenceAllocator);
  EXPECT_EQ(a.workload.block, 100);
  EXPECT_EQ(a.workload.work, 100ms);
  EXPECT_EQ(a.workload.iterations, 1);
  EXPECT_EQ(a.workload.think, 1s);
  EXPECT_EQ(s.clients[1].workload.kind, WorkloadKind::kCounter);
  EXPECT_TRUE(s.faults.empty());
  EXPECT_FALSE(s.nemesis.has_value());
  EXPECT_TRUE(s.expect.empty());
  EXPECT_TRUE(s.notes.empty());
}

TEST(LoaderDefaults, RenewIntervalIsAThirdOfTheTtlToTheNanosecond) {
  json j = base_scenario();
  j["lock"]["ttl"] = "10s";
  EXPECT_EQ(load_ok(j).clients[0].renew_interval, Duration{3'333'333'333});
  j["clients"][0]["renew_interval"] = "2s";
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.clients[0].renew_interval, 2s);
  EXPECT_EQ(s.clients[1].renew_interval, Duration{3'333'333'333});
}

TEST(LoaderDefaults, AnEtcdScenarioGetsTheEtcdDefaults) {
  json j = base_scenario();
  j["lock"] = {{"service", "etcd"}, {"ttl", "6s"}};
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.lock.etcd().nodes, 3);
  EXPECT_EQ(s.lock.etcd().election_timeout, 1s);
  EXPECT_EQ(s.lock.etcd().heartbeat, 100ms);
  EXPECT_EQ(s.lock.etcd().token, EtcdToken::kCreateRevision);
  EXPECT_TRUE(s.lock.etcd().pre_vote);
  EXPECT_FALSE(s.lock.etcd().keepalive_checks_leadership);
  EXPECT_EQ(s.lock.ttl, 6s);
  EXPECT_EQ(s.clients[0].renew_interval, 2s);
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.group("etcd"), (std::vector<std::string>{"etcd-0", "etcd-1", "etcd-2"}));
  EXPECT_TRUE(d.group("redis")->empty());
}

TEST(LoaderDefaults, RedlockDefaultsToNoReplicasNoSentinelsAndNoToken) {
  json j = base_scenario();
  j["lock"]["redlock"] = 5;
  j["lock"]["replicas"] = 0;  // 0 may be written out
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.lock.redis().redlock, 5);
  EXPECT_EQ(s.lock.redis().replicas, 0);
  EXPECT_EQ(s.lock.redis().sentinels, 0);
  EXPECT_EQ(s.lock.redis().token, RedisToken::kNone);
  EXPECT_EQ(directory(s).group("redis")->size(), 5u);
  EXPECT_FALSE(property_applies(s, Property::kTokenMonotonic));
}

TEST(LoaderDefaults, NemesisDefaultsToClientsEveryTenSecondsForUpToFifteen) {
  json j = base_scenario();
  j["nemesis"] = {{"kinds", {"pause"}}};
  const Scenario s = load_ok(j);
  ASSERT_TRUE(s.nemesis.has_value());
  EXPECT_EQ(s.nemesis->kinds, std::vector<FaultKind>{FaultKind::kPause});
  EXPECT_EQ(s.nemesis->targets, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(s.nemesis->interval_min, 10s);
  EXPECT_EQ(s.nemesis->interval_max, 10s);
  EXPECT_EQ(s.nemesis->max_duration, 15s);
}

TEST(LoaderDefaults, FaultDefaultsClockWallAndCounterResetValueZero) {
  json j = base_scenario();
  j["faults"] = json::parse(R"([
    {"at": "1s", "kind": "clock_jump", "target": "redis-0", "by": "-2s"},
    {"at": "2s", "kind": "counter_reset", "target": "resource"},
    {"at": "3s", "kind": "partition", "isolate": ["A"]},
    {"at": "4s", "kind": "crash", "target": "B"}])");
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.faults[0].clock, ClockSelect::kWall);
  EXPECT_EQ(s.faults[0].by, -2s);
  EXPECT_EQ(s.faults[1].value, 0);
  EXPECT_FALSE(s.faults[2].one_way);
  EXPECT_FALSE(s.faults[2].duration.has_value());
  EXPECT_FALSE(s.faults[3].restart_after.has_value());
}

// -- values ----------------------------------------------------------------

TEST(LoaderValues, LossBecomesPartsPerBillionAndLatencyARange) {
  json j = base_scenario();
  j["network"] = {{"loss", 0.001}, {"latency", {{"min", "2ms"}, {"max", "1.5s"}}}};
  Scenario s = load_ok(j);
  EXPECT_EQ(s.network.loss_ppb, 1'000'000u);
  EXPECT_EQ(s.network.latency_min, 2ms);
  EXPECT_EQ(s.network.latency_max, 1500ms);
  j["network"] = {{"loss", 0.9999999999}, {"latency", "250us"}};
  s = load_ok(j);
  EXPECT_EQ(s.network.loss_ppb, 999'999'999u);  // never certain loss
  EXPECT_EQ(s.network.latency_min, 250us);
  EXPECT_EQ(s.network.latency_max, 250us);
}

TEST(LoaderValues, CommentsAreAllowedEverywhere) {
  const Scenario s = load_scenario_text(R"(// a teaching scenario
  {
    "scenario": "commented", /* inline */ "duration": "1m",
    "lock": {"service": "redis", "ttl": "10s"}, // trailing
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "workload": {"kind": "writer"}}]
  })",
                                        "c.json")
                         .scenario.value();
  EXPECT_EQ(s.duration, 60s);
  EXPECT_EQ(s.resource.kind, ResourceKind::kUnfenced);
}

TEST(LoaderValues, WholeValuedFloatsCountAsIntegersAsInJsonSchema) {
  json j = base_scenario();
  j["clients"][0]["workload"]["iterations"] = 3.0;
  j["seed"] = 18446744073709551615ull;
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.clients[0].workload.iterations, 3);
  EXPECT_EQ(s.seed, 18446744073709551615ull);
}

// -- expansion ---------------------------------------------------------------

TEST(LoaderExpansion, CountMakesNumberedClientsInDeclarationOrder) {
  json j = base_scenario();
  j["clients"] = json::parse(R"([
    {"name": "first", "workload": {"kind": "counter"}},
    {"name": "w", "count": 3, "start": "1s", "workload": {"kind": "counter", "iterations": 4}},
    {"name": "last", "count": 1, "workload": {"kind": "counter"}}])");
  const Scenario s = load_ok(j);
  std::vector<std::string> names;
  for (const auto& c : s.clients) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"first", "w-0", "w-1", "w-2", "last"}));
  EXPECT_EQ(s.clients[3].start, 1s);
  EXPECT_EQ(s.clients[3].workload.iterations, 4);
}

TEST(LoaderExpansion, GroupNamesExpandInDeclarationOrderWithoutDuplicates) {
  json j = base_scenario();
  j["lock"]["replicas"] = 2;
  j["lock"]["sentinels"] = 2;
  j["resource"]["replicas"] = 1;
  j["faults"] = json::parse(R"([
    {"at": "1s", "kind": "partition", "isolate": ["B", "clients", "resources", "redis-primary"]},
    {"at": "2s", "kind": "partition", "groups": [["redis", "sentinels"], ["A"]], "one_way": true, "duration": "1s"}])");
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.faults[0].isolate,
            (std::vector<std::string>{"B", "A", "resource", "resource-replica-0", "redis-primary"}));
  ASSERT_EQ(s.faults[1].groups.size(), 2u);
  EXPECT_EQ(s.faults[1].groups[0],
            (std::vector<std::string>{"redis-0", "redis-1", "redis-2", "sentinel-0", "sentinel-1"}));
  EXPECT_TRUE(s.faults[1].one_way);
  EXPECT_EQ(s.faults[1].duration, 1s);
}

TEST(LoaderExpansion, RoleAliasesStayForTheEngineToResolve) {
  json j = base_scenario();
  j["faults"] = json::parse(R"([{"at": "1s", "kind": "crash", "target": "redis-primary", "restart_after": "5s"}])");
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.faults[0].target, "redis-primary");
  EXPECT_EQ(s.faults[0].restart_after, 5s);
}

TEST(LoaderEtcd, ATtlBelowTheMinimumIsRaisedWithANote) {
  json j = base_scenario();
  j["lock"] = {{"service", "etcd"}, {"ttl", "1s"}, {"election_timeout", "1s"}};
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.lock.requested_ttl, 1s);
  EXPECT_EQ(s.lock.ttl, 2s);  // ceil(1.5 × 1 s)
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("raised from 1s to 2s"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[0].find("election_timeout"), std::string::npos);
  EXPECT_EQ(s.clients[0].renew_interval, Duration{666'666'666});  // a third of the granted TTL
}

TEST(LoaderEtcd, TheMinimumRoundsUpToWholeSeconds) {
  json j = base_scenario();
  j["lock"] = {{"service", "etcd"}, {"ttl", "2s"}, {"election_timeout", "1.5s"}, {"heartbeat", "500ms"}};
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.lock.ttl, 3s);  // ceil(2.25) = 3
  j["lock"]["ttl"] = "3s";
  EXPECT_TRUE(load_ok(j).notes.empty());
}

// -- errors ------------------------------------------------------------------

struct ErrorCase {
  const char* what;
  const char* patch;  // JSON merge patch (RFC 7386) applied to base_scenario()
  std::vector<std::string> contains;
};

TEST(LoaderErrors, EachClassOfMistakeIsNamedWithPathExpectationAndSuggestion) {
  const std::vector<ErrorCase> cases = {
      {"unknown top-level key",
       R"({"seeed": 3})",
       {"test.json: at seeed:", "unknown key \"seeed\"", "did you mean \"seed\"?"}},
      {"misspelt enum value",
       R"({"resource": {"kind": "fenced", "check": "strcit"}})",
       {"at resource.check", "did you mean \"strict\"?"}},
      {"wrong type", R"({"duration": ["60s"]})", {"at duration", "expected a duration string", "got an array"}},
      {"bare number duration", R"({"settle": 5})", {"at settle", "durations need a unit, e.g. \"10s\""}},
      {"fractional nanoseconds", R"({"settle": "1.5ns"})", {"at settle", "1ns resolution"}},
      {"negative where not allowed",
       R"({"clients": [{"name": "A", "start": "-1s", "workload": {"kind": "counter"}}]})",
       {"at clients[0].start", "negative"}},
      {"bool as string",
       R"({"resource": {"kind": "fenced", "fence_reads": "true"}})",
       {"at resource.fence_reads", "without quotes"}},
      {"integer out of range",
       R"({"resource": {"kind": "fenced", "replicas": 99}})",
       {"at resource.replicas", "from 0 to 24"}},
      {"huge number", R"({"resource": {"kind": "fenced", "initial": 1e300}})", {"at resource.initial", "got 1e+300"}},
      {"etcd key on redis", R"({"lock": {"heartbeat": "1s"}})", {"at lock.heartbeat", "etcd setting"}},
      {"redis key on etcd",
       R"({"lock": {"service": "etcd", "ttl": "3s", "sentinels": 3}})",
       {"at lock.sentinels", "Redis setting"}},
      {"etcd ttl not whole seconds",
       R"({"lock": {"service": "etcd", "ttl": "1.5s"}})",
       {"at lock.ttl", "whole number of seconds", "did you mean \"2s\"?"}},
      {"etcd heartbeat multiple",
       R"({"lock": {"service": "etcd", "ttl": "3s", "heartbeat": "400ms"}})",
       {"at lock.heartbeat", "whole multiple of heartbeat"}},
      {"etcd even nodes", R"({"lock": {"service": "etcd", "ttl": "3s", "nodes": 2}})", {"at lock.nodes", "odd"}},
      {"redlock sentinels",
       R"({"lock": {"redlock": 3, "sentinels": 3}})",
       {"at lock.sentinels", "must be 0", "Redlock"}},
      {"duplicate client",
       R"({"clients": [{"name": "A", "workload": {"kind": "counter"}}, {"name": "A", "workload": {"kind": "counter"}}]})",
       {"at clients[1].name", "duplicate client name"}},
      {"client count too large in total",
       R"({"clients": [{"name": "a", "count": 150, "workload": {"kind": "counter"}}, {"name": "b", "count": 51, "workload": {"kind": "counter"}}]})",
       {"at clients[1].count", "too many clients", "200"}},
      {"unknown resource copy",
       R"({"clients": [{"name": "A", "resource": "resourse", "workload": {"kind": "counter"}}]})",
       {"at clients[0].resource", "did you mean \"resource\"?"}},
      {"missing workload",
       R"({"clients": [{"name": "A"}]})",
       {"at clients[0].workload", "missing required key \"workload\""}},
      {"fault kind typo",
       R"({"faults": [{"at": "1s", "kind": "puase", "target": "A", "duration": "1s"}]})",
       {"at faults[0].kind", "did you mean \"pause\"?"}},
      {"fault key of other kind",
       R"({"faults": [{"at": "1s", "kind": "crash", "target": "A", "duration": "1s"}]})",
       {"at faults[0].duration", "does not apply to a crash fault"}},
      {"negative jump on both clocks",
       R"({"faults": [{"at": "1s", "kind": "clock_jump", "target": "A", "by": "-1s", "clock": "both"}]})",
       {"at faults[0].by", "only jumps forward"}},
      {"failover on redlock",
       R"({"lock": {"redlock": 3}, "faults": [{"at": "1s", "kind": "failover", "target": "redis"}]})",
       {"at faults[0].kind", "Redlock"}},
      {"failover target",
       R"({"faults": [{"at": "1s", "kind": "failover", "target": "redis-0"}]})",
       {"at faults[0].target", "expected one of \"redis\""}},
      {"counter_reset on etcd",
       R"({"lock": {"service": "etcd", "ttl": "3s"}, "faults": [{"at": "1s", "kind": "counter_reset", "target": "redis"}]})",
       {"at faults[0].target", "needs the Redis service"}},
      {"role of absent service",
       R"({"faults": [{"at": "1s", "kind": "pause", "target": "etcd-leader", "duration": "1s"}]})",
       {"at faults[0].target", "etcd-leader", "needs the etcd service"}},
      {"group as target",
       R"({"faults": [{"at": "1s", "kind": "slow", "target": "redis", "delay": "1s", "duration": "1s"}]})",
       {"at faults[0].target", "is a group"}},
      {"unknown node in list",
       R"({"faults": [{"at": "1s", "kind": "partition", "isolate": ["A", "redis-9"]}]})",
       {"at faults[0].isolate[1]", "unknown node \"redis-9\""}},
      {"partition one group",
       R"({"faults": [{"at": "1s", "kind": "partition", "groups": [["A"]]}]})",
       {"at faults[0].groups", "at least two groups"}},
      {"nemesis heal",
       R"({"nemesis": {"kinds": ["heal"]}})",
       {"at nemesis.kinds[0]", "cannot be drawn by the nemesis"}},
      {"nemesis kind typo", R"({"nemesis": {"kinds": ["slwo"]}})", {"at nemesis.kinds[0]", "did you mean \"slow\"?"}},
      {"nemesis interval zero",
       R"({"nemesis": {"kinds": ["pause"], "interval": {"min": "0s", "max": "1s"}}})",
       {"at nemesis.interval.min", "greater than zero"}},
      {"nemesis targets typo",
       R"({"nemesis": {"kinds": ["pause"], "targets": ["client"]}})",
       {"at nemesis.targets[0]", "did you mean \"clients\"?"}},
      {"expect not applicable",
       R"({"lock": {"service": "none", "ttl": null}, "resource": {"kind": "cas"}, "expect": {"mutual_exclusion": "holds"}})",
       {"at expect.mutual_exclusion", "does not apply"}},
      {"expect typo", R"({"expect": {"progres": "holds"}})", {"at expect.progres", "did you mean \"progress\"?"}},
      {"version", R"({"version": 0})", {"at version", "version 1"}},
      {"scenario name", R"({"scenario": "Hello World!"})", {"at scenario", "did you mean \"hello-world\"?"}},
      {"too many faults",
       R"({"nemesis": {"kinds": ["pause"], "interval": "1us"}})",
       {"at nemesis.interval", "at most 10000"}},
  };
  for (const ErrorCase& c : cases) {
    json j = base_scenario();
    j.merge_patch(json::parse(c.patch));
    const std::string err = load_err(j);
    for (const std::string& want : c.contains) {
      EXPECT_NE(err.find(want), std::string::npos) << c.what << ": wanted \"" << want << "\" in\n  " << err;
    }
  }
}

TEST(LoaderErrors, MalformedJsonGivesLineAndColumn) {
  const LoadResult r = load_scenario_text("{\n  \"scenario\": \"x\",\n  \"duration\": 60s\n}\n", "m.json");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->line, 3);
  EXPECT_EQ(r.error->column, 17);  // the 's' after 60
  EXPECT_EQ(r.error->to_string().rfind("m.json:3:17: malformed JSON", 0), 0u) << r.error->to_string();
}

TEST(LoaderNotes, AFaultAtOrAfterTheEndOfTheRunGetsANote) {
  json j = base_scenario();  // duration 60s
  j["faults"] = json::parse(R"([{"at": "59s", "kind": "pause", "target": "A", "duration": "10s"},
                                {"at": "60s", "kind": "pause", "target": "B", "duration": "1s"},
                                {"at": "90s", "kind": "crash", "target": "A"}])");
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.notes, (std::vector<std::string>{
                         "faults[1] at 60s is not before the end of the run (duration 60s): it never happens",
                         "faults[2] at 90s is not before the end of the run (duration 60s): it never happens"}));
}

TEST(LoaderNotes, AClientThatStartsAtOrAfterTheEndOfTheRunGetsANote) {
  json j = base_scenario();
  j["clients"][1]["start"] = "2m";
  const Scenario s = load_ok(j);
  EXPECT_EQ(s.notes, (std::vector<std::string>{
                         "client B starts at 120s, not before the end of the run (duration 60s): it never runs"}));
  j["clients"][1]["start"] = "59.999s";
  EXPECT_TRUE(load_ok(j).notes.empty());
}

// The notes of docs/FORMAT.md "Notes" (models/validate.cpp scenario_notes).

TEST(LoaderNotes, ARenewIntervalNotShorterThanTheTtlGetsANote) {
  json j = base_scenario();  // ttl 9s
  j["clients"][0]["renew_interval"] = "9s";
  EXPECT_EQ(load_ok(j).notes,
            (std::vector<std::string>{"client A: renew_interval 9s is not shorter than the lease TTL 9s: the lease "
                                      "can expire before each renewal is sent"}));
  j["clients"][0]["renew"] = false;  // no renewals: nothing to say
  EXPECT_TRUE(load_ok(j).notes.empty());
  j["clients"][0]["renew"] = true;
  j["clients"][0]["renew_interval"] = "8.999s";
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, SentinelsWithNoReplicaToPromoteGetANote) {
  json j = base_scenario();
  j["lock"]["replicas"] = 0;  // sentinels default to 3
  EXPECT_EQ(
      load_ok(j).notes,
      (std::vector<std::string>{
          "lock.sentinels is 3 but lock.replicas is 0: Sentinel has no replica to promote, so it never fails over"}));
  j["lock"]["sentinels"] = 0;
  EXPECT_TRUE(load_ok(j).notes.empty());
  j["lock"] = {{"service", "redis"}, {"ttl", "9s"}, {"redlock", 3}};  // Redlock: no Sentinel at all
  j["resource"] = {{"kind", "unfenced"}};
  EXPECT_TRUE(load_ok(j).notes.empty());
}

// 0 is each key's "none": beside lock.cluster it says what the cluster
// implies anyway, so it is accepted and loads exactly as the key's absence;
// a nonzero value stays an error (tests/loader/bad/cluster-01, -02, -07).
TEST(LoaderCluster, ZeroSentinelsReplicasOrRedlockBesideAClusterAreAcceptedAsNone) {
  json j = base_scenario();
  j["lock"]["cluster"] = {{"shards", 3}};
  j["lock"]["key"] = "{lock}:key";
  j["lock"]["counter_key"] = "{lock}:counter";
  const Scenario plain = load_ok(j);
  for (const char* key : {"sentinels", "replicas", "redlock"}) {
    json z = j;
    z["lock"][key] = 0;
    const Scenario s = load_ok(z);
    ASSERT_TRUE(s.lock.redis().cluster.has_value()) << key;
    EXPECT_EQ(s.lock.redis().cluster->shards, 3) << key;
    EXPECT_EQ(s.lock.redis().sentinels, plain.lock.redis().sentinels) << key;
    EXPECT_EQ(s.lock.redis().replicas, plain.lock.redis().replicas) << key;
    EXPECT_EQ(s.lock.redis().redlock, plain.lock.redis().redlock) << key;
    EXPECT_EQ(s.notes, plain.notes) << key;
    z["lock"][key] = 2;
    EXPECT_NE(load_err(z).find("at lock." + std::string(key) + ": \"" + key + "\": 2 does not apply with lock.cluster"),
              std::string::npos)
        << load_err(z);
  }
  j["lock"]["sentinels"] = 0;
  j["lock"]["replicas"] = 0;
  j["lock"]["redlock"] = 0;
  EXPECT_EQ(load_ok(j).lock.redis().cluster->shards, 3);
  j["lock"]["sentinels"] = "0";  // not the integer 0: still refused
  EXPECT_NE(load_err(j).find("at lock.sentinels"), std::string::npos) << load_err(j);
}

TEST(LoaderNotes, ACommandTimeoutNotShorterThanTheTtlGetsOneNoteForEveryClientItAppliesTo) {
  json j = base_scenario();
  j["clients"][0]["command_timeout"] = "10s";
  j["clients"][1]["command_timeout"] = "10s";
  EXPECT_EQ(load_ok(j).notes,
            (std::vector<std::string>{"clients A, B: command_timeout 10s is not shorter than the lease TTL 9s: a "
                                      "client can still be waiting for a reply after the lease it asked for has "
                                      "expired"}));
  j["lock"] = {{"service", "none"}};  // no lease
  j["resource"] = {{"kind", "cas"}};
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, WorkLongerThanSettleGetsANoteAndCountCopiesShareIt) {
  json j = base_scenario();
  j["settle"] = "1s";
  j["clients"] = json::parse(R"([{"name": "w", "count": 3, "workload": {"kind": "counter", "work": "2s"}}])");
  EXPECT_EQ(load_ok(j).notes,
            (std::vector<std::string>{"clients w-0, w-1, w-2: workload.work 2s is longer than settle 1s: an iteration "
                                      "cannot finish within the settle time, so progress fails if it counts one (one "
                                      "that starts after the last fault ends)"}));
  j["clients"][0]["workload"]["work"] = "1s";
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, AHealWithNoPartitionActiveGetsANote) {
  json j = base_scenario();
  j["faults"] = json::parse(R"([{"at": "1s", "kind": "heal"},
                                {"at": "2s", "kind": "partition", "isolate": ["A"], "duration": "3s"},
                                {"at": "4s", "kind": "heal"},
                                {"at": "6s", "kind": "heal"},
                                {"at": "7s", "kind": "partition", "isolate": ["B"]},
                                {"at": "8s", "kind": "heal"}])");
  EXPECT_EQ(load_ok(j).notes,
            (std::vector<std::string>{"faults[0] (heal at 1s) heals nothing: no partition is active then",
                                      "faults[3] (heal at 6s) heals nothing: no partition is active then"}));
  // A nemesis that draws partitions may have one active: no note.
  j["nemesis"] = {{"kinds", {"partition"}}};
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, ANemesisThatCanDrawOnlyOneSlowDelayGetsANote) {
  json j = base_scenario();
  j["nemesis"] = {{"kinds", {"slow", "pause"}}, {"max_duration", "1ms"}};
  EXPECT_EQ(load_ok(j).notes,
            (std::vector<std::string>{"nemesis.max_duration 1ms leaves one value to draw: every slow fault the "
                                      "nemesis draws has a delay of 1ms and lasts 1ms, so a message sent while it is "
                                      "slow arrives only as it ends"}));
  j["nemesis"]["max_duration"] = "2ms";
  EXPECT_TRUE(load_ok(j).notes.empty());
  j["nemesis"] = {{"kinds", {"pause"}}, {"max_duration", "1ms"}};
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, AFencedResourceWithoutTokensGetsANote) {
  json j = base_scenario();
  j["resource"] = {{"kind", "fenced"}};
  j["clients"][1]["fencing"] = false;
  EXPECT_EQ(load_ok(j).notes, (std::vector<std::string>{"client B: fencing is false, so the writes carry no token, "
                                                        "and the fenced resource rejects every write without one"}));
  j["clients"][1].erase("fencing");
  j["lock"]["token"] = "none";
  const Scenario s = load_ok(j);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("resource.kind is \"fenced\", but the lock service hands out no token"), std::string::npos)
      << s.notes[0];
  j["resource"] = {{"kind", "unfenced"}};
  EXPECT_TRUE(load_ok(j).notes.empty());
}

TEST(LoaderNotes, ANemesisThatCanDrawNothingGetsANote) {
  json j = base_scenario();
  j["duration"] = "60s";
  j["settle"] = "30s";
  j["nemesis"] = {{"kinds", {"pause"}}, {"interval", "10s"}, {"max_duration", "25s"}};
  const Scenario s = load_ok(j);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("the nemesis draws no fault"), std::string::npos) << s.notes[0];
  EXPECT_TRUE(draw_nemesis(s).empty());
  j["nemesis"]["max_duration"] = "15s";  // 60 - 30 - 15 = 15s >= 10s: one draw
  EXPECT_TRUE(load_ok(j).notes.empty());
  EXPECT_FALSE(draw_nemesis(load_ok(j)).empty());
}

TEST(LoaderNotes, NotesComeInAFixedOrderAfterTheEtcdRaise) {
  json j = base_scenario();
  j["lock"] = {{"service", "etcd"}, {"ttl", "1s"}};  // raised to 2s
  j["clients"][1]["start"] = "70s";
  j["clients"][0]["command_timeout"] = "3s";
  j["faults"] = json::parse(R"([{"at": "1s", "kind": "heal"}])");
  const Scenario s = load_ok(j);
  ASSERT_EQ(s.notes.size(), 4u);
  EXPECT_NE(s.notes[0].find("lock.ttl raised from 1s to 2s"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[1].find("client B starts at 70s"), std::string::npos) << s.notes[1];
  EXPECT_NE(s.notes[2].find("client A: command_timeout 3s is not shorter than the lease TTL 2s"), std::string::npos)
      << s.notes[2];
  EXPECT_NE(s.notes[3].find("heals nothing"), std::string::npos) << s.notes[3];
}

TEST(LoaderErrors, AUnitSpeltAnotherWayGetsTheFormatsSpelling) {
  json j = base_scenario();
  j["duration"] = "200MS";
  EXPECT_NE(load_err(j).find("did you mean \"200ms\"?"), std::string::npos) << load_err(j);
  j["duration"] = "200µs";
  EXPECT_NE(load_err(j).find("did you mean \"200us\"?"), std::string::npos) << load_err(j);
  j["duration"] = "5 sec";
  EXPECT_NE(load_err(j).find("did you mean \"5s\"?"), std::string::npos) << load_err(j);
  j["duration"] = "five seconds";
  EXPECT_EQ(load_err(j).find("did you mean"), std::string::npos) << load_err(j);
}

TEST(LoaderErrors, AQuotedVersionSaysWriteItWithoutQuotes) {
  json j = base_scenario();
  j["version"] = "1";
  EXPECT_EQ(load_err(j), "test.json: at version: expected the number 1, got the string \"1\" (write 1 without quotes)");
}

TEST(LoaderErrors, AMatrixFileIsNamedAsOneWithTheCommandThatRunsIt) {
  EXPECT_EQ(load_err_text(R"({"version": 1, "matrix": "m", "base": {}, "rows": [], "columns": []})"),
            "test.json: this is a matrix file (docs/FORMAT.md \"Matrix files\"), not a scenario: run it with "
            "`fencesim matrix FILE`");
}

TEST(LoaderErrors, AnEmptyFileIsCalledEmpty) {
  EXPECT_EQ(load_err_text(""), "test.json: the file is empty; a scenario is one JSON object (see docs/FORMAT.md)");
  EXPECT_EQ(load_err_text(" \n\t\r\n"),
            "test.json: the file is empty; a scenario is one JSON object (see docs/FORMAT.md)");
}

TEST(LoaderErrors, TooManyClientsPointsAtTheClientThatTipsTheTotal) {
  json j = base_scenario();
  j["clients"][0]["count"] = 200;  // B, without a count, makes 201
  const std::string e = load_err(j);
  EXPECT_NE(e.find("at clients[1]: too many clients"), std::string::npos) << e;
  EXPECT_EQ(e.find("clients[1].count"), std::string::npos) << e;
  EXPECT_NE(e.find("this client makes 201"), std::string::npos) << e;
}

TEST(LoaderEtcd, AnElectionTimeoutThatWouldRaiseTheTtlPastTheLimitIsRefused) {
  json j = base_scenario();
  j["lock"] = {{"service", "etcd"}, {"ttl", "24h"}, {"election_timeout", "24h"}, {"heartbeat", "1h"}};
  const std::string e = load_err(j);
  EXPECT_NE(e.find("at lock.election_timeout"), std::string::npos) << e;
  EXPECT_NE(e.find("above the 24h limit"), std::string::npos) << e;
  j["lock"]["election_timeout"] = "16h";
  EXPECT_EQ(load_ok(j).lock.ttl, std::chrono::hours(24));
}

TEST(LoaderErrors, ErrorLineFormats) {
  LoadError e{"f.json", "faults[0].duraton", "unknown key", "did you mean \"duration\"?", 0, 0};
  EXPECT_EQ(e.to_string(), "f.json: at faults[0].duraton: unknown key (did you mean \"duration\"?)");
  e.path = "";
  e.suggestion = "";
  EXPECT_EQ(e.to_string(), "f.json: unknown key");
  e.line = 2;
  e.column = 7;
  EXPECT_EQ(e.to_string(), "f.json:2:7: unknown key");
}

TEST(LoaderErrors, MissingFileAndDirectoryAreErrorsNotCrashes) {
  LoadResult r = load_scenario_file("/nonexistent/dir/x.json");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->to_string().find("/nonexistent/dir/x.json: no such file"), std::string::npos);
  r = load_scenario_file(testing::loader_test_dir().string());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("directory"), std::string::npos);
}

TEST(LoaderErrors, HostileInputNeverCrashesOrHangs) {
  const std::vector<std::string> inputs = {
      "",
      " ",
      "null",
      "0",
      "\"x\"",
      "[]",
      "{}",
      std::string(1, '\0'),
      "\xEF\xBB\xBF{}",
      std::string(200000, '['),
      std::string(200000, '{'),
      "{\"scenario\": \"\xff\xfe\"}",
      "[1e400]",
      "{\"clients\": [" + std::string(10000, '1') + "]}",
  };
  for (const auto& in : inputs) {
    const LoadResult r = load_scenario_text(in, "hostile.json");
    EXPECT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->to_string().find('\n'), std::string::npos);
  }
  // Wrong types at every position of a valid scenario.
  const json good = base_scenario();
  std::function<void(json&, json&)> visit = [&](json& root, json& node) {
    for (const json& wrong :
         {json(nullptr), json(true), json(-1), json(1.5), json("x"), json::array(), json::object()}) {
      json saved = node;
      node = wrong;
      const LoadResult r = load_scenario_text(root.dump(), "types.json");
      EXPECT_TRUE(r.ok() || r.error.has_value());
      node = saved;
    }
    if (node.is_object()) {
      for (auto& [k, v] : node.items()) visit(root, v);
    } else if (node.is_array()) {
      for (auto& v : node) visit(root, v);
    }
  };
  json root = good;
  visit(root, root);
}

TEST(LoaderErrors, HugeArraysAreRefusedBeforeExpansion) {
  json j = base_scenario();
  j["clients"] = json::array();
  for (int i = 0; i < 5000; ++i)
    j["clients"].push_back({{"name", "c" + std::to_string(i)}, {"workload", {{"kind", "counter"}}}});
  EXPECT_NE(load_err(j).find("too many clients"), std::string::npos);
  j = base_scenario();
  j["faults"] = json::array();
  for (int i = 0; i < 10001; ++i) j["faults"].push_back({{"at", "1s"}, {"kind", "heal"}});
  EXPECT_NE(load_err(j).find("too many faults"), std::string::npos);
}

TEST(LoaderFuzzRegressions, EveryFuzzFindingLoadsOrFailsCleanly) {
  // Inputs the fuzzer (loader/fuzz_loader.cpp) once crashed, hung or tripped a
  // sanitizer with; each must now give exactly one of scenario or error.
  const fs::path dir = testing::loader_test_dir() / "fuzz_regressions";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    ++files;
    const LoadResult r = load_scenario_file(e.path().string());
    EXPECT_NE(r.ok(), r.error.has_value()) << e.path();
    if (r.error) {
      EXPECT_EQ(r.error->to_string().find('\n'), std::string::npos) << e.path();
    }
  }
  RecordProperty("files", files);
}

}  // namespace
TEST(LoaderMessages, ANameThatIsOnlyTooLongSaysSoWithoutALookAlikeSuggestion) {
  json j = base_scenario();
  j["scenario"] = std::string(101, 'a');
  const std::string e = load_err(j);
  EXPECT_NE(e.find("too long (101 characters)"), std::string::npos) << e;
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
}

TEST(LoaderMessages, AControlCharacterInADurationIsShownEscapedNeverRaw) {
  json j = base_scenario();
  j["duration"] = std::string("10s\x1b", 4);
  const std::string e = load_err(j);
  EXPECT_NE(e.find("unknown unit \"s\\u001b\""), std::string::npos) << e;
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
}

TEST(LoaderMessages, ASeedOfMinusZeroIsZero) {
  // As text: a json value of -0 would be written back as 0.
  const std::string text = base_scenario().dump().replace(1, 0, "\"seed\": -0, ");
  ASSERT_NE(text.find("-0"), std::string::npos);
  const LoadResult r = load_scenario_text(text, "test.json");
  ASSERT_TRUE(r.ok()) << (r.error ? r.error->to_string() : "");
  EXPECT_EQ(r.scenario->seed, 0u);
}

}  // namespace fencesim

// -- a fault whose start is a range (docs/FORMAT.md "Faults") ---------------

namespace fencesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json with_ranged_pause() {
  json j = base_scenario();
  j["faults"] = json::parse(R"([{"at": {"min": "3s", "max": "6s"}, "kind": "pause", "target": "A", "duration": "12s"},
                               {"at": "20s", "kind": "pause", "target": "B", "duration": "1s"}])");
  return j;
}

TEST(LoaderFaultTimes, ARangedStartIsDrawnPerSeedWithinTheRange) {
  Scenario s = load_ok(with_ranged_pause());
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].at, 3s);
  EXPECT_EQ(s.faults[0].at_max, Duration{6s});
  EXPECT_FALSE(s.faults[1].at_max) << "a plain duration is fixed";
  std::set<Duration> starts;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    s.seed = seed;
    const std::vector<FaultSpec> a = draw_fault_times(s);
    EXPECT_EQ(a, draw_fault_times(s)) << "same seed, same draw";
    ASSERT_EQ(a.size(), 2u);
    EXPECT_GE(a[0].at, 3s);
    EXPECT_LE(a[0].at, 6s);
    EXPECT_FALSE(a[0].at_max);
    EXPECT_EQ(a[1].at, 20s);
    starts.insert(a[0].at);
  }
  EXPECT_GT(starts.size(), 15u) << "the start varies with the seed";
  // A range with min = max is the fixed time.
  json j = with_ranged_pause();
  j["faults"][0]["at"] = json::parse(R"({"min": "4s", "max": "4s"})");
  EXPECT_FALSE(load_ok(j).faults[0].at_max);
}

TEST(LoaderFaultTimes, TheRunUsesTheDrawnStart) {
  Scenario s = load_ok(with_ranged_pause());
  s.seed = 5;
  const RunResult r = run_scenario(s);
  const Duration drawn = draw_fault_times(s)[0].at;
  ASSERT_FALSE(r.history.faults.empty());
  EXPECT_EQ(r.history.faults[0].start, drawn);
  EXPECT_EQ(r.faults[0].at, drawn);
}

TEST(LoaderFaultTimes, ARangeWithMaxBelowMinIsAnError) {
  json j = with_ranged_pause();
  j["faults"][0]["at"] = json::parse(R"({"min": "6s", "max": "3s"})");
  EXPECT_EQ(load_err(j), "test.json: at faults[0].at.max: max (3s) is below min (6s)");
  j["faults"][0]["at"] = json::parse(R"({"min": "6s"})");
  EXPECT_EQ(load_err(j),
            "test.json: at faults[0].at.max: missing required key \"max\": a range needs both min and max");
  j["faults"][0]["at"] = 5;
  EXPECT_EQ(load_err(j),
            "test.json: at faults[0].at: durations need a unit, e.g. \"10s\"; got the bare number 5 (did you mean "
            "\"5s\" or \"5ms\"?)");
}

}  // namespace
}  // namespace fencesim
