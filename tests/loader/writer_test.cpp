// tests/loader/writer_test.cpp — the scenario writer (loader/writer.hpp):
// every shipped scenario written and loaded back is the same Scenario and
// runs to byte-identical reports; writing is a fixed point; a materialized
// nemesis runs the same faults to the same verdicts; a Scenario built in C++
// round-trips.
#include "loader/writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fencesim/run.hpp"
#include "loader/loader.hpp"
#include "models/nemesis.hpp"
#include "models/world.hpp"
#include "tests/loader/test_paths.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<fs::path> shipped_files() {
  std::vector<fs::path> out;
  for (const fs::path& dir :
       {testing::source_dir() / "scenarios", testing::loader_test_dir() / "good", testing::shared_cases_dir()}) {
    for (const fs::path& f : testing::json_files(dir)) out.push_back(f);
  }
  return out;
}

Scenario load_ok(const std::string& text, const std::string& label) {
  LoadResult r = load_scenario_text(text, label);
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->to_string() : "") << "\n" << text;
  return r.scenario.value_or(Scenario{});
}

struct Reports {
  std::string json, md;
};
Reports reports_of(const Scenario& s, const ReportMeta& meta) {
  const RunResult r = run_scenario(s);
  return {render_report_json(s, r, meta), render_report_markdown(s, r, meta)};
}

/// The shipped files with a nemesis block.
std::vector<fs::path> nemesis_files() {
  std::vector<fs::path> out;
  for (const fs::path& f : shipped_files()) {
    LoadResult r = load_scenario_file(f.string());
    if (r.ok() && r.scenario->nemesis) out.push_back(f);
  }
  return out;
}

class ShippedFile : public ::testing::TestWithParam<fs::path> {};
class ShippedNemesis : public ::testing::TestWithParam<fs::path> {};

TEST_P(ShippedFile, WritesLoadsBackEqualRunsToTheSameReportsAndIsAFixedPoint) {
  const fs::path& file = GetParam();
  LoadResult original = load_scenario_file(file.string());
  ASSERT_TRUE(original.ok()) << original.error->to_string();
  const Scenario& s = *original.scenario;

  const std::string text = write_scenario(s);
  const Scenario back = load_ok(text, "written");
  EXPECT_TRUE(back == s) << "the written file loads to another Scenario:\n" << text;
  const WriteResult checked = write_scenario_checked(s);
  EXPECT_TRUE(checked.ok()) << *checked.error;
  EXPECT_EQ(checked.text, text);

  // Written again from what it loaded to: the same bytes.
  EXPECT_EQ(write_scenario(back), text);

  const ReportMeta meta{file.filename().string(), false};
  const Reports a = reports_of(s, meta);
  const Reports b = reports_of(back, meta);
  EXPECT_EQ(a.json, b.json);
  EXPECT_EQ(a.md, b.md);
}

TEST_P(ShippedNemesis, MaterializedRunsTheSameFaultsToTheSameVerdicts) {
  LoadResult original = load_scenario_file(GetParam().string());
  ASSERT_TRUE(original.ok()) << original.error->to_string();
  const Scenario& s = *original.scenario;
  ASSERT_TRUE(s.nemesis.has_value());
  WriteOptions opt;
  opt.materialize_nemesis = true;
  const std::string text = write_scenario(s, opt);
  const Scenario m = load_ok(text, "materialized");
  EXPECT_FALSE(m.nemesis.has_value());
  const std::vector<FaultSpec> drawn = draw_nemesis(s);
  ASSERT_FALSE(drawn.empty());
  ASSERT_EQ(m.faults.size(), s.faults.size() + drawn.size());
  EXPECT_TRUE(m == written_scenario(s, opt));
  EXPECT_TRUE(write_scenario_checked(s, opt).ok());
  EXPECT_TRUE(draw_nemesis(m).empty());
  // A fixed point too: nothing is left to materialize.
  EXPECT_EQ(write_scenario(m), text);
  EXPECT_EQ(write_scenario(m, opt), text);

  RunOptions ro;
  ro.trace = false;
  const RunResult a = run_scenario(s, ro);
  const RunResult b = run_scenario(m, ro);
  ASSERT_EQ(a.verdicts.size(), b.verdicts.size());
  for (std::size_t i = 0; i < a.verdicts.size(); ++i) {
    EXPECT_EQ(a.verdicts[i].property, b.verdicts[i].property);
    EXPECT_EQ(a.verdicts[i].status, b.verdicts[i].status) << to_string(a.verdicts[i].property);
  }
  EXPECT_EQ(a.all_met, b.all_met);
  ASSERT_EQ(a.history.faults.size(), b.history.faults.size());
  for (std::size_t i = 0; i < a.history.faults.size(); ++i) {
    const FaultRecord& x = a.history.faults[i];
    const FaultRecord& y = b.history.faults[i];
    EXPECT_EQ(x.kind, y.kind) << i;
    EXPECT_EQ(x.start, y.start) << i;
    EXPECT_EQ(x.end, y.end) << i;
    EXPECT_EQ(x.detail, y.detail) << i;
    EXPECT_EQ(x.skipped, y.skipped) << i;
    EXPECT_EQ(x.target, y.target) << i;  // a drawn partition has no target, as in the format
    if (!x.origin.starts_with("nemesis#")) {
      EXPECT_EQ(x.origin, y.origin) << i;
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Writer, ShippedFile, ::testing::ValuesIn(shipped_files()), test_name);
INSTANTIATE_TEST_SUITE_P(Writer, ShippedNemesis, ::testing::ValuesIn(nemesis_files()), test_name);

TEST(Writer, CoversTheShippedFiles) {
  // scenarios/ and tests/loader/good/ (shared/cases is optional).
  EXPECT_GE(shipped_files().size(), 30u);
  EXPECT_GE(nemesis_files().size(), 4u);
}

TEST(Writer, ABuiltScenarioWritesAndLoadsBackEqual) {
  using testing::ScenarioBuilder;
  NemesisSpec n;
  n.kinds = {FaultKind::kPause, FaultKind::kCrash};
  n.targets = {"A", "redis-primary"};
  n.interval_min = 3s;
  n.interval_max = 7s;
  n.max_duration = 2s;
  const Scenario s = ScenarioBuilder("built")
                         .seed(7)
                         .duration(60s)
                         .settle(20s)
                         .latency(1ms, 3ms)
                         .redis(10s, 1, 3)
                         .redis_spec([](RedisSpec& r) { r.expiry_clock = sim::ClockKind::kMonotonic; })
                         .fenced(FenceCheck::kMonotonic, true, 1000)
                         .client("A", testing::allocator(50, 500ms, 3, 2s))
                         .client("B", testing::counter(250ms), [](ClientSpec& c) { c.start = 1500ms; })
                         .client("w-0", testing::writer(1s), [](ClientSpec& c) { c.renew_interval = 2s; })
                         .client("w-1", testing::writer(1s), [](ClientSpec& c) { c.renew_interval = 2s; })
                         .pause("A", 200ms, 12s)
                         .clock_jump("B", 5s, -3s)
                         .drift("redis-0", 6s, -250)
                         .crash("redis-primary", 7s, 4s)
                         .failover(8s)
                         .counter_reset("resource", 9s, 5)
                         .slow("B", 10s, 400ms, 2s)
                         .partition(11s, {{"A"}, {"B", "redis-0"}}, 3s, true)
                         .isolate(12s, {"w-0"})
                         .heal(15s)
                         .nemesis(n)
                         .expect(Property::kMutualExclusion, Expectation::kViolated)
                         .build();
  const std::string text = write_scenario(s);
  const Scenario back = load_ok(text, "built");
  EXPECT_TRUE(back == s) << text;
  const WriteResult checked = write_scenario_checked(s);
  EXPECT_TRUE(checked.ok()) << checked.error.value_or("") << "\n" << checked.text;
  // Readable: what the builder left at the format's defaults is left out,
  // w-0 and w-1 become one entry with a count, durations read as written.
  EXPECT_NE(text.find(R"("name": "w", "count": 2)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("by": "-3s")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("start": "1.5s")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("interval": {"min": "3s", "max": "7s"})"), std::string::npos) << text;
  EXPECT_EQ(text.find("retry_interval"), std::string::npos) << text;
  EXPECT_EQ(text.find("origin"), std::string::npos) << text;
}

TEST(Writer, AnEtcdTtlIsWrittenAsRequestedAndRaisedAgainByTheLoader) {
  const Scenario s = load_ok(R"({"scenario": "e", "duration": "30s",
      "lock": {"service": "etcd", "ttl": "1s", "election_timeout": "2s", "heartbeat": "200ms"},
      "resource": {"kind": "fenced"},
      "clients": [{"name": "A", "workload": {"kind": "counter"}}]})",
                             "e.json");
  ASSERT_EQ(s.lock.ttl, 3s);
  ASSERT_EQ(s.notes.size(), 1u);
  const std::string text = write_scenario(s);
  EXPECT_NE(text.find(R"("ttl": "1s")"), std::string::npos) << text;
  EXPECT_EQ(text.find("renew_interval"), std::string::npos) << text;
  EXPECT_TRUE(load_ok(text, "w") == s) << text;
}

TEST(Writer, LossAndLatencyRangesAndTheNoLockDesignRoundTrip) {
  const Scenario s = load_ok(R"({"scenario": "n", "duration": "30s", "settle": "0s",
      "network": {"latency": {"min": "1us", "max": "2.5ms"}, "loss": 0.000000123},
      "lock": {"service": "none"},
      "resource": {"kind": "cas", "initial": -4},
      "clients": [{"name": "A", "fencing": false, "renew": false, "workload": {"kind": "counter", "think": "0s"}}]})",
                             "n.json");
  EXPECT_EQ(s.network.loss_ppb, 123u);
  const std::string text = write_scenario(s);
  EXPECT_TRUE(load_ok(text, "w") == s) << text;
  EXPECT_NE(text.find(R"("lock": {"service": "none"})"), std::string::npos) << text;
}

// Every key of the format with a value other than its default, once for
// each service: each is written and read back.
TEST(Writer, AnEtcdVersionIsWrittenWithOnlyTheKeysThatOverrideIt) {
  const char* kText = R"({"scenario": "v", "duration": "30s",
      "lock": {"service": "etcd", "ttl": "3s", "version": "3.4.3", "pre_vote": true, "mutex_checks_own_key": false},
      "resource": {"kind": "fenced"},
      "clients": [{"name": "A", "workload": {"kind": "counter"}}]})";
  const Scenario s = load_ok(kText, "v.json");
  EXPECT_EQ(s.lock.etcd().version, "3.4.3");
  EXPECT_TRUE(s.lock.etcd().pre_vote);                      // overridden
  EXPECT_FALSE(s.lock.etcd().keepalive_checks_leadership);  // the profile's
  EXPECT_FALSE(s.lock.etcd().lock_fails_on_session_end);    // the profile's
  const std::string written = write_scenario(s);
  EXPECT_NE(written.find(R"("version": "3.4.3")"), std::string::npos) << written;
  EXPECT_NE(written.find(R"("pre_vote": true)"), std::string::npos) << written;
  // Given, but equal to the profile's value: not an override, not written.
  EXPECT_EQ(written.find("mutex_checks_own_key"), std::string::npos) << written;
  EXPECT_TRUE(load_ok(written, "w") == s) << written;
  const RunResult r = run_scenario(s);
  const std::string json = render_report_json(s, r, ReportMeta{});
  EXPECT_NE(json.find(R"("version": "3.4.3")"), std::string::npos);
  EXPECT_NE(json.find("\"overrides\": [\n        \"pre_vote\"\n      ]"), std::string::npos) << json.substr(0, 3000);
  const std::string md = render_report_markdown(s, r, ReportMeta{});
  EXPECT_NE(md.find("(version 3.4.3, overrides: pre_vote)"), std::string::npos) << md.substr(0, 1500);
}

TEST(Writer, EveryNonDefaultValueRoundTrips) {
  const char* kRedis =
      R"({"version": 1, "scenario": "all-redis", "description": "d\n\"q\" \u00e9", "seed": 18446744073709551615,
      "duration": "2h", "settle": "1m",
      "network": {"latency": {"min": "0s", "max": "7us"}, "loss": 0.25},
      "lock": {"service": "redis", "ttl": "1ns", "key": "k", "replicas": 0, "sentinels": 0, "token": "none",
               "replication_delay": "0s", "down_after": "1.25s", "expiry_clock": "monotonic"},
      "resource": {"kind": "fenced", "check": "monotonic", "fence_reads": true, "initial": -1000000000000000,
                   "replicas": 24, "replication_delay": "3ns"},
      "clients": [{"name": "c.x_y", "count": 3, "start": "24h", "fencing": false, "renew": false,
                   "renew_interval": "1ns", "renew_clock": "wall", "retry_interval": "1us",
                   "command_timeout": "1h", "resource": "resource-replica-23",
                   "workload": {"kind": "sequence_allocator", "block": 1000000000, "work": "0s",
                                "iterations": 100000, "think": "0s"}},
                  {"name": "c.x_y-3", "workload": {"kind": "writer"}}],
      "faults": [{"at": "24h", "kind": "clock_jump", "target": "c.x_y-0", "by": "1ns", "clock": "monotonic"},
                 {"at": "1s", "kind": "partition", "groups": [["clients"], ["redis", "resources"]]},
                 {"at": "1s", "kind": "counter_reset", "target": "resource", "value": 1000000000000000}],
      "nemesis": {"kinds": ["slow", "clock_drift"], "targets": ["redis-primary", "c.x_y-2"], "interval": "1h",
                  "max_duration": "1ms"},
      "expect": {"no_lost_update": "violated", "progress": "holds"}})";
  const char* kEtcd = R"({"scenario": "all-etcd", "duration": "30s",
      "lock": {"service": "etcd", "ttl": "4s", "nodes": 25, "election_timeout": "1.2s", "heartbeat": "300ms",
               "token": "header_revision", "pre_vote": false, "keepalive_checks_leadership": true},
      "resource": {"kind": "unfenced", "initial": 5},
      "clients": [{"name": "A", "workload": {"kind": "counter"}}],
      "nemesis": {"kinds": ["crash"], "targets": ["etcd-leader", "etcd"], "interval": {"min": "1ns", "max": "20s"}},
      "expect": {"raft_safety": "violated", "token_monotonic": "holds"}})";
  const char* kRedlock = R"({"scenario": "all-redlock", "duration": "30s",
      "lock": {"service": "redis", "ttl": "3s", "redlock": 5},
      "resource": {"kind": "cas"},
      "clients": [{"name": "A", "renew_interval": "1s", "workload": {"kind": "counter"}}]})";
  for (const char* text : {kRedis, kEtcd, kRedlock}) {
    const LoadResult r = load_scenario_text(text, "all.json");
    ASSERT_TRUE(r.ok()) << r.error->to_string();
    const Scenario& s = *r.scenario;
    const std::string written = write_scenario(s);
    EXPECT_TRUE(load_ok(written, "w") == s) << written;
    EXPECT_EQ(write_scenario(load_ok(written, "w")), written);
    const WriteResult checked = write_scenario_checked(s);
    EXPECT_TRUE(checked.ok()) << checked.error.value_or("");
  }
  const Scenario redis = load_ok(kRedis, "all.json");
  ASSERT_EQ(redis.clients.size(), 4u);
  // c.x_y-0 … c.x_y-2 are one entry again; c.x_y-3 differs in its workload.
  EXPECT_NE(write_scenario(redis).find(R"("name": "c.x_y",)"), std::string::npos);
  EXPECT_NE(write_scenario(redis).find(R"("count": 3,)"), std::string::npos);
  EXPECT_NE(write_scenario(redis).find(R"({"name": "c.x_y-3", )"), std::string::npos);
}

TEST(Writer, TheSeedOptionIsWrittenAndDrawsTheMaterializedNemesis) {
  LoadResult r = load_scenario_file((testing::source_dir() / "scenarios" / "nemesis-pauses.json").string());
  ASSERT_TRUE(r.ok());
  WriteOptions opt;
  opt.seed = 42;
  opt.materialize_nemesis = true;
  const Scenario m = load_ok(write_scenario(*r.scenario, opt), "m");
  EXPECT_EQ(m.seed, 42u);
  Scenario reseeded = *r.scenario;
  reseeded.seed = 42;
  const std::vector<FaultSpec> drawn = draw_nemesis(reseeded);
  ASSERT_EQ(m.faults.size(), r.scenario->faults.size() + drawn.size());
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    const FaultSpec& f = m.faults[r.scenario->faults.size() + i];
    EXPECT_EQ(f.at, drawn[i].at);
    EXPECT_EQ(f.target, drawn[i].target);
    EXPECT_EQ(f.duration, drawn[i].duration);
  }
  EXPECT_NE(draw_nemesis(*r.scenario).front().at, drawn.front().at) << "seed 42 draws another schedule";
}

TEST(Writer, FaultEntryJsonIsAValidFaultsEntryOfEachKind) {
  FaultSpec f;
  f.kind = FaultKind::kClockJump;
  f.at = 2500ms;
  f.target = "A";
  f.by = -5s;
  f.origin = "nemesis#3";
  EXPECT_EQ(fault_entry_json(f).dump(), R"({"at":"2.5s","kind":"clock_jump","target":"A","by":"-5s"})");
  f = FaultSpec{};
  f.kind = FaultKind::kPartition;
  f.target = "B";  // as a drawn partition carries it; not a partition key
  f.isolate = {"B"};
  f.duration = 1ms;
  EXPECT_EQ(fault_entry_json(f).dump(), R"({"at":"0s","kind":"partition","isolate":["B"],"duration":"1ms"})");
  f = FaultSpec{};
  f.kind = FaultKind::kHeal;
  f.at = 1h;
  EXPECT_EQ(fault_entry_json(f).dump(), R"({"at":"3600s","kind":"heal"})");
}

TEST(Writer, ACheckedWriteNamesWhatCannotBeWritten) {
  using testing::ScenarioBuilder;
  Scenario s =
      ScenarioBuilder("odd").duration(30s).redis(5s).client("A", testing::counter(1s)).pause("A", 1s, 2s).build();
  EXPECT_TRUE(write_scenario_checked(s).ok());
  s.faults[0].origin = "mine";  // the loader names it faults[0]
  WriteResult r = write_scenario_checked(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(*r.error, "written and loaded back, faults[0] differs");
  s.faults[0].origin = "faults[0]";
  s.faults[0].duration.reset();  // a pause needs its duration
  r = write_scenario_checked(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->find("does not load: odd (written): at faults[0].duration: missing required key"),
            std::string::npos)
      << *r.error;
}

}  // namespace
}  // namespace fencesim

// -- swarm and ranged fault starts are written back, and materialize ---------

namespace fencesim {
namespace {

const char* kSwarmAndRange = R"({"scenario": "sw", "duration": "120s", "settle": "20s",
  "lock": {"service": "redis", "ttl": "5s", "replicas": 0, "sentinels": 0},
  "resource": {"kind": "fenced"},
  "clients": [{"name": "A", "workload": {"kind": "counter", "iterations": 50}},
              {"name": "B", "workload": {"kind": "counter", "iterations": 50}}],
  "faults": [{"at": {"min": "3s", "max": "6s"}, "kind": "pause", "target": "A", "duration": "2s"}],
  "nemesis": {"kinds": ["pause", "crash", "slow"], "targets": ["clients"], "swarm": true}})";

TEST(WriterSwarm, SwarmAndARangedStartAreWrittenBackAndTheReportSaysTheSubset) {
  Scenario s = load_ok(kSwarmAndRange, "sw.json");
  s.seed = 4;
  const std::string text = write_scenario(s);
  EXPECT_NE(text.find("\"swarm\": true"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("at": {"min": "3s", "max": "6s"})"), std::string::npos) << text;
  EXPECT_TRUE(write_scenario_checked(s).ok());
  EXPECT_TRUE(load_ok(text, "written") == s);

  const std::optional<SwarmSubset> w = draw_swarm(s);
  ASSERT_TRUE(w);
  const RunResult r = run_scenario(s);
  ASSERT_TRUE(r.swarm);
  EXPECT_EQ(*r.swarm, *w);
  ReportMeta meta;
  meta.source = "sw.json";
  const std::string js = render_report_json(s, r, meta);
  std::string kinds;
  for (FaultKind k : w->kinds) kinds += std::string(kinds.empty() ? "" : ",") + "\"" + to_string(k) + "\"";
  EXPECT_NE(js.find("\"nemesis_swarm\""), std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(js);
  EXPECT_EQ(report["nemesis_swarm"]["kinds"].dump(), "[" + kinds + "]");
  EXPECT_EQ(report["nemesis_swarm"]["targets"].get<std::vector<std::string>>(), w->targets);
  EXPECT_NE(render_report_markdown(s, r, meta).find("Swarm: this seed's nemesis draws from kinds "), std::string::npos);

  // Materialized: no nemesis, the drawn faults and the drawn start as a script,
  // running to the same verdicts.
  WriteOptions opt;
  opt.materialize_nemesis = true;
  const Scenario m = load_ok(write_scenario(s, opt), "materialized");
  EXPECT_FALSE(m.nemesis);
  ASSERT_FALSE(m.faults.empty());
  EXPECT_FALSE(m.faults[0].at_max);
  EXPECT_EQ(m.faults[0].at, draw_fault_times(s)[0].at);
  EXPECT_EQ(m.faults.size(), 1 + draw_nemesis(s).size());
  const RunResult mr = run_scenario(m);
  ASSERT_EQ(mr.verdicts.size(), r.verdicts.size());
  for (std::size_t i = 0; i < r.verdicts.size(); ++i) EXPECT_EQ(mr.verdicts[i].status, r.verdicts[i].status);
  EXPECT_EQ(mr.history.faults.size(), r.history.faults.size());
}

TEST(WriterSwarm, WithoutSwarmTheReportHasNoSubset) {
  std::string text = kSwarmAndRange;
  text.replace(text.find(", \"swarm\": true"), 15, "");
  const Scenario s = load_ok(text, "plain.json");
  const RunResult r = run_scenario(s);
  EXPECT_FALSE(r.swarm);
  EXPECT_EQ(render_report_json(s, r, ReportMeta{}).find("nemesis_swarm"), std::string::npos);
}

/// A story line is made inert in report.md like every other free text: a
/// resource program's reason may hold HTML ("<b>412</b>"), which a Markdown
/// viewer would render.
TEST(Writer, ReportMarkdownStoriesAreInert) {
  const Scenario s = load_ok(R"({"scenario": "h", "duration": "5s", "lock": {"service": "none"},
    "resource": {"kind": "unfenced"}, "clients": [{"name": "A", "workload": {"kind": "counter"}}]})",
                             "h.json");
  RunResult r = run_scenario(s);
  ASSERT_FALSE(r.verdicts.empty());
  r.verdicts[0].status = Status::kViolated;
  r.verdicts[0].story = {"1.0s  write rejected: <b>412</b> &amp;"};
  const std::string md = render_report_markdown(s, r, ReportMeta{});
  EXPECT_NE(md.find("write rejected: \\<b>412\\</b> \\&amp;"), std::string::npos) << md;
}

}  // namespace
}  // namespace fencesim
