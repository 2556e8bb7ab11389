// tests/cli/nemesis_paste_test.cpp — report.json's nemesis_draws are valid
// faults[] entries: pasted into the scenario's `faults` (after its own) with
// the nemesis removed, they replay the run (docs/REPORTS.md).
//
// For every shipped scenario with a nemesis, and for a built one whose
// nemesis draws every kind it can: run it, paste the draws, load and run the
// copy, and compare report.json, report.md and trace.jsonl with every
// fault's origin left out (`nemesis#i` became `faults[k]`).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "fencesim/run.hpp"

namespace fencesim {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Rendered {
  json report;
  std::string markdown;
  std::string trace;
};

Rendered render(const Scenario& s, const RunResult& r) {
  const ReportMeta meta{s.name + ".json", false};
  return {json::parse(render_report_json(s, r, meta)), render_report_markdown(s, r, meta), render_trace_jsonl(r)};
}

/// The renderings with every fault origin removed, and what differs on
/// purpose between a nemesis run and its pasted replay taken out.
Rendered without_origins(Rendered x) {
  for (json& f : x.report["faults"]) f.erase("origin");
  x.report.erase("nemesis_draws");
  static const std::regex md_origin(R"(\| (faults\[\d+\]|nemesis#\d+) \|\n)");
  x.markdown = std::regex_replace(x.markdown, md_origin, "| ORIGIN |\n");
  static const std::regex trace_origin(R"re("origin":"(faults\[\d+\]|nemesis#\d+)")re");
  x.trace = std::regex_replace(x.trace, trace_origin, "\"origin\":\"O\"");
  return x;
}

/// `doc` (a scenario file's JSON) with its nemesis replaced by `draws`
/// appended to its faults.
std::string paste(json doc, const json& draws) {
  doc.erase("nemesis");
  json faults = doc.contains("faults") ? doc["faults"] : json::array();
  for (const json& d : draws) faults.push_back(d);
  doc["faults"] = faults;
  return doc.dump(2);
}

/// Runs `text`, pastes its draws, runs the copy; returns the draws.
json check_round_trip(const std::string& text, const std::string& label) {
  const LoadResult first = load_scenario_text(text, label);
  EXPECT_TRUE(first.ok()) << (first.error ? first.error->to_string() : "");
  if (!first.ok()) return json::array();
  const RunResult run = run_scenario(*first.scenario);
  const Rendered a = render(*first.scenario, run);
  const json draws = a.report.at("nemesis_draws");
  EXPECT_EQ(draws.size(), run.drawn.size());

  const std::string pasted = paste(json::parse(text, nullptr, true, true), draws);
  const LoadResult second = load_scenario_text(pasted, label + " (pasted)");
  EXPECT_TRUE(second.ok()) << (second.error ? second.error->to_string() : "");
  if (!second.ok()) return draws;
  EXPECT_FALSE(second.scenario->nemesis.has_value());
  const RunResult replay = run_scenario(*second.scenario);
  EXPECT_TRUE(replay.drawn.empty());
  const Rendered b = render(*second.scenario, replay);

  // The draw's index is its nemesis#i origin; the pasted copy is faults[k + i].
  const std::size_t scripted = first.scenario->faults.size();
  for (std::size_t i = 0; i < run.drawn.size(); ++i) {
    EXPECT_EQ(run.drawn[i].origin, "nemesis#" + std::to_string(i));
    EXPECT_EQ(second.scenario->faults.at(scripted + i).origin, "faults[" + std::to_string(scripted + i) + "]");
  }
  EXPECT_EQ(a.report.at("verdicts"), b.report.at("verdicts")) << label;
  // The fingerprint leaves fault origins out: the replay is the same run.
  EXPECT_EQ(run.fingerprint, replay.fingerprint) << label;
  const Rendered x = without_origins(a), y = without_origins(b);
  EXPECT_EQ(x.report, y.report) << label;
  EXPECT_EQ(x.markdown, y.markdown) << label;
  EXPECT_TRUE(x.trace == y.trace) << label << ": trace.jsonl differs beyond fault origins";
  return draws;
}

TEST(NemesisPaste, EveryShippedNemesisScenarioReplaysFromItsPastedDraws) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(fs::path(FENCESIM_SOURCE_DIR) / "scenarios")) {
    if (e.path().extension() != ".json") continue;
    const std::string text = read_text(e.path());
    const json doc = json::parse(text, nullptr, true, true);
    if (!doc.contains("nemesis")) continue;
    SCOPED_TRACE(e.path().filename().string());
    const json draws = check_round_trip(text, e.path().filename().string());
    EXPECT_FALSE(draws.empty());
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(NemesisPaste, EveryDrawableKindReplaysFromItsPastedDraws) {
  // Redis with a replica, three clients; the nemesis draws every kind it can,
  // at clients and at the primary by role.
  const std::string text = R"({
    "version": 1, "scenario": "every-nemesis-kind", "seed": 5, "duration": "120s", "settle": "20s",
    "lock": {"service": "redis", "ttl": "5s", "replicas": 1},
    "resource": {"kind": "fenced"},
    "clients": [{"name": "worker", "count": 3,
                 "workload": {"kind": "counter", "iterations": 100, "work": "200ms", "think": "300ms"}}],
    "faults": [{"at": "3s", "kind": "pause", "target": "worker-0", "duration": "1s"}],
    "nemesis": {"kinds": ["pause", "partition", "crash", "clock_jump", "clock_drift", "slow"],
                "targets": ["clients", "redis-primary"], "interval": {"min": "1s", "max": "4s"},
                "max_duration": "5s"}
  })";
  const json draws = check_round_trip(text, "every-nemesis-kind.json");
  std::set<std::string> kinds;
  bool negative_jump = false;
  for (const json& d : draws) {
    kinds.insert(d.at("kind").get<std::string>());
    EXPECT_TRUE(d.at("at").is_string());
    EXPECT_FALSE(d.contains("origin"));
    if (d.at("kind") == "partition") {
      EXPECT_FALSE(d.contains("target"));
      EXPECT_EQ(d.at("isolate").size(), 1u);
    }
    if (d.at("kind") == "clock_jump") negative_jump |= d.at("by").get<std::string>().front() == '-';
  }
  EXPECT_EQ(kinds.size(), 6u);
  EXPECT_TRUE(negative_jump);
}

}  // namespace
}  // namespace fencesim
