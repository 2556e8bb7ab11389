// The fault-kind recipe proven from outside (docs/ARCHITECTURE.md "Adding a
// fault kind"): a kind that exists only in this test, "hiccup", registered
// at run time (register_fault_kind) with one FaultKindInfo entry, is read
// from a file by the loader (through its KeyReader, with the loader's
// words), checked by validate_scenario, drawn by the nemesis, run, written
// back, shortened by the shrinker's length and drawn on both timelines —
// with no other file of fencesim changed. Its own binary: registering
// changes the table for the rest of the process.
#include <gtest/gtest.h>

#include "fencesim/run.hpp"
#include "loader/loader.hpp"
#include "loader/writer.hpp"
#include "models/faults.hpp"
#include "models/nemesis.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

/// A hiccup: the target stalls for `duration`; a "loud" one (at most 1s)
/// says so in its detail. The world does not notice it (apply changes
/// nothing): what is under test is the table, not a new behaviour.
FaultKindInfo hiccup_entry() {
  FaultKindInfo k{};
  k.kind = static_cast<FaultKind>(fault_kinds().size());
  k.name = "hiccup";
  k.keys = {"target", "duration", "loud"};
  k.nemesis = 7;
  k.apply = [](FaultEnv&, const FaultSpec&, FaultRecord&) -> std::optional<std::string> { return std::nullopt; };
  k.end = [](const FaultSpec& f, const std::vector<FaultSpec>&) -> std::optional<Time> { return f.at + *f.duration; };
  k.detail = [](const FaultSpec& f) { return std::string(f.power_loss ? "loud" : ""); };
  k.draw = [](FaultSpec& f, Duration d, Duration, sim::Rng&) { f.duration = d; };
  k.write = [](const FaultSpec& f, FaultWriter& out) {
    out.text("target", f.target);
    out.duration("duration", *f.duration);
    if (f.power_loss) out.boolean("loud", true);
  };
  k.parse = [](NodeKeyReader& in, FaultSpec& f) {
    f.target = *in.node("target", "the node that hiccups");
    f.duration = in.duration("duration", KeyReader::kPositive, "how long it stalls, e.g. \"2s\"");
    if (const auto loud = in.boolean("loud")) f.power_loss = *loud;  // (a test kind borrows a field)
  };
  k.validate = [](const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
    if (auto p = ctx.target(f.target, path + ".target")) return p;
    if (f.power_loss && f.duration && *f.duration > 1s) {
      return std::optional(ScenarioProblem{path + ".duration", "a loud hiccup lasts at most 1s", ""});
    }
    return std::optional<ScenarioProblem>();
  };
  k.length = [](const FaultSpec& f) { return f.duration; };
  k.set_length = [](FaultSpec& f, Duration d) { f.duration = d; };
  k.mark = [](const FaultRecord& r) { return FaultMark{FaultMark::Look::kStopped, "hiccup " + r.detail, "recovers"}; };
  return k;
}

const FaultKind kHiccup = [] {
  register_fault_kind(hiccup_entry());
  return static_cast<FaultKind>(fault_kinds().size() - 1);
}();

std::string file(const std::string& faults, const std::string& extra = "") {
  return R"({"scenario": "hiccups", "duration": "30s", "seed": 7, "lock": {"service": "redis", "ttl": "9s"},
             "resource": {"kind": "fenced"},
             "clients": [{"name": "A", "workload": {"kind": "sequence_allocator", "iterations": 3}}],
             "faults": [)" +
         faults + "]" + extra + "}";
}

std::string load_error(const std::string& faults) {
  const LoadResult r = load_scenario_text(file(faults), "h.json");
  return r.error ? r.error->to_string() : "(loaded)";
}

TEST(FakeFaultKind, TheTableNamesItAndTheNemesisMayDrawIt) {
  EXPECT_STREQ(to_string(kHiccup), "hiccup");
  EXPECT_EQ(fault_kind_from_string("hiccup"), kHiccup);
  EXPECT_EQ(nemesis_fault_kinds().back(), kHiccup);
  EXPECT_THROW(register_fault_kind(hiccup_entry()), std::invalid_argument);  // "hiccup" again
  FaultKindInfo unnumbered = hiccup_entry();
  unnumbered.kind = FaultKind::kPause;
  EXPECT_THROW(register_fault_kind(unnumbered), std::invalid_argument);
}

TEST(FakeFaultKind, TheLoaderReadsItsKeysWithTheLoadersWords) {
  const LoadResult r = load_scenario_text(
      file(R"({"at": "2s", "kind": "hiccup", "target": "redis-primary", "duration": "500ms", "loud": true})"),
      "h.json");
  ASSERT_TRUE(r.ok()) << r.error->to_string();
  const FaultSpec& f = r.scenario->faults.at(0);
  EXPECT_EQ(f.kind, kHiccup);
  EXPECT_EQ(f.target, "redis-primary");  // a role alias, resolved when it fires
  EXPECT_EQ(f.duration, 500ms);
  EXPECT_TRUE(f.power_loss);

  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "hiccup", "target": "A"})"),
            "h.json: at faults[0].duration: missing required key \"duration\": how long it stalls, e.g. \"2s\"");
  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "hiccup", "target": "A", "duration": 5})"),
            "h.json: at faults[0].duration: durations need a unit, e.g. \"10s\"; got the bare number 5 (did you mean "
            "\"5s\" or \"5ms\"?)");
  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "hiccup", "target": "nobody", "duration": "1s"})"),
            "h.json: at faults[0].target: unknown node \"nobody\"; nodes in this scenario are A, redis-0, redis-1, "
            "sentinel-0, sentinel-1, sentinel-2, resource, roles redis-primary");
  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "hiccup", "target": "A", "duration": "1s", "loud": "yes"})"),
            "h.json: at faults[0].loud: expected true or false, got the string \"yes\"");
  // Its keys and another kind's, from the table.
  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "pause", "target": "A", "duration": "1s", "loud": true})"),
            "h.json: at faults[0].loud: \"loud\" does not apply to a pause fault (it belongs to hiccup); a pause fault "
            "takes at, kind, target, duration");
  // Its rule, run by validate_faults.
  EXPECT_EQ(load_error(R"({"at": "2s", "kind": "hiccup", "target": "A", "duration": "2s", "loud": true})"),
            "h.json: at faults[0].duration: a loud hiccup lasts at most 1s");
}

TEST(FakeFaultKind, ItRunsIsWrittenBackAndDrawnOnBothTimelines) {
  Scenario s =
      *load_scenario_text(file(R"({"at": "2s", "kind": "hiccup", "target": "A", "duration": "800ms", "loud": true})"),
                          "h.json")
           .scenario;
  const RunResult r = run_scenario(s);
  ASSERT_EQ(r.history.faults.size(), 1u);
  const FaultRecord& rec = r.history.faults[0];
  EXPECT_EQ(rec.kind, kHiccup);
  EXPECT_EQ(rec.end, Time{2800ms});
  EXPECT_EQ(rec.detail, "for 800ms, loud");

  EXPECT_EQ(fault_entry_json(s.faults[0]).dump(),
            R"({"at":"2s","kind":"hiccup","target":"A","duration":"800ms","loud":true})");

  const std::string html = render_timeline_html(s, r, ReportMeta{});
  EXPECT_NE(html.find("fault hiccup"), std::string::npos);  // the span's class
  EXPECT_NE(html.find("hiccup for 800ms, loud"), std::string::npos);
  TerminalTimeline whole;
  whole.whole = true;
  const std::string text = render_terminal_timeline(s, r, whole);
  EXPECT_NE(text.find("hiccup"), std::string::npos);
  EXPECT_NE(text.find("recovers"), std::string::npos) << text;
}

TEST(FakeFaultKind, TheNemesisDrawsItAndTheShrinkerKnowsItsLength) {
  Scenario s = *load_scenario_text(file("", R"(, "settle": "5s", "nemesis": {"kinds": ["hiccup"], "targets": ["A"],
                                                 "interval": "5s", "max_duration": "1s"})"),
                                   "h.json")
                    .scenario;
  const std::vector<FaultSpec> drawn = draw_nemesis(s);
  ASSERT_FALSE(drawn.empty());
  for (const FaultSpec& f : drawn) {
    EXPECT_EQ(f.kind, kHiccup);
    ASSERT_TRUE(f.duration);
    EXPECT_LE(*f.duration, 1s);
  }
  FaultSpec f = drawn[0];
  const FaultKindInfo& k = fault_info(kHiccup);
  k.set_length(f, 3ms);
  EXPECT_EQ(k.length(f), 3ms);
}

}  // namespace
}  // namespace fencesim
