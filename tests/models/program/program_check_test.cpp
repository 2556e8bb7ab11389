// Resource programs (models/program/program_check.*, docs/PROTOCOL.md
// "Resource programs") with tests/programs/raw_check.py, a check written
// against the protocol document alone: what a check carries, the marks it
// keeps, its errors, and the loader's rules for `"kind": "program"`.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "loader/loader.hpp"
#include "models/program/errors.hpp"
#include "models/world.hpp"
#include "program_testing.hpp"

namespace fencesim {
namespace {

using program::ProgramError;

/// A counter client A on a resource decided by raw_check.py in `mode`; its
/// writes carry versions (one retry after a conflict).
std::string text(const std::string& mode, const std::string& program_keys = "") {
  return R"({"version": 1, "scenario": "check-)" + mode + R"(", "seed": 1, "duration": "5s",
    "network": {"latency": "1ms"}, "lock": {"service": "none"},
    "resource": {"kind": "program", "compare_versions": true,
                 "program": {"command": ["python3", "raw_check.py", ")" +
         mode + R"("])" + program_keys + R"(}},
    "clients": [{"name": "A", "workload": {"kind": "counter", "work": "100ms", "retries": 1}}]})";
}

using program_testing::error_of;
Scenario load(const std::string& t) { return program_testing::from_text(t); }

/// Each check carries the request (`lock` "": the design without a lock) (with the value and version the client
/// read), the copy's state and the copy's clocks; the decision's marks are
/// kept by the copy and shown on its records; the program's stderr is the
/// report's, under "resource".
TEST(ProgramCheck, AChecksCarriesTheRequestTheCopysStateAndClocks) {
  const RunResult r = run_scenario(load(text("echo")));
  // read (accepted), write (rejected), the retry's read and write.
  ASSERT_EQ(r.history.resource_ops.size(), 4u);
  const ResourceOpRecord& w = r.history.resource_ops[1];
  ASSERT_TRUE(w.write);
  EXPECT_FALSE(w.accepted);
  EXPECT_EQ(w.last_seen, 2);                                            // the decision's last_seen: the second check
  EXPECT_EQ(w.marks, (std::map<std::string, std::int64_t>{{"n", 2}}));  // named marks on the record
  const nlohmann::json seen = nlohmann::json::parse(w.reason);
  EXPECT_EQ(seen["copy"], "resource");
  EXPECT_EQ(seen["time"]["monotonic"], w.at.count());
  EXPECT_EQ(seen["request"],
            nlohmann::json::parse(R"({"op": "write", "client": "A", "lock": "", "token": null, "value": 1,
                                      "value_read": 0, "version_read": 0})"));
  EXPECT_EQ(seen["state"], nlohmann::json::parse(R"({"value": 0, "version": 0, "last_written": 0, "last_seen": 1,
                                                     "marks": {"n": 1}})"));
  EXPECT_EQ(nlohmann::json::parse(r.history.resource_ops[3].reason)["state"]["marks"]["n"], 3);
  ASSERT_EQ(r.program_output.size(), 1u);
  EXPECT_EQ(r.program_output[0].first, "resource");
  EXPECT_EQ(r.program_output[0].second, "init resource locks [] copies ['resource']\n");
  // Deterministic: the same run again.
  EXPECT_EQ(run_scenario(load(text("echo"))).fingerprint, r.fingerprint);
}

/// A reason is text for people: UTF-8 kept (not latin-1 service data, which
/// would put a byte 0xE9 into report.json), control characters as spaces.
TEST(ProgramCheck, AReasonIsUtf8TextOnOneLine) {
  const RunResult r = run_scenario(load(text("unicode")));
  ASSERT_GE(r.history.resource_ops.size(), 2u);
  EXPECT_EQ(r.history.resource_ops[1].reason, "412 pr\u00e9condition \u2713 no");
}

/// A program's stderr is any bytes: the report keeps it as valid UTF-8
/// (U+FFFD for a byte that is not), and the run stands. A reusable program
/// that exits with status 1 after `end` does not fail the run either.
TEST(ProgramCheck, StderrBytesAndAnExitAfterEndDoNotStopTheRun) {
  const RunResult r = run_scenario(load(text("stderr-bytes")));
  ASSERT_EQ(r.program_output.size(), 1u);
  EXPECT_NE(r.program_output[0].second.find("bad \uFFFD byte \uFFFD\n"), std::string::npos)
      << r.program_output[0].second;
  EXPECT_GE(run_scenario(load(text("exit-after-end"))).history.resource_ops.size(), 2u);
}

/// counter_reset of the resource sets the named marks too: the echo check's
/// mark n is 1 after the first read, 7 after the reset at 50 ms, and the
/// write's check makes it 8.
TEST(ProgramCheck, ACounterResetOfTheResourceSetsTheNamedMarks) {
  std::string t = text("echo");
  t.insert(t.rfind('}'), R"(, "faults": [{"at": "50ms", "kind": "counter_reset", "target": "resource", "value": 7}])");
  const RunResult r = run_scenario(load(t));
  ASSERT_GE(r.history.resource_ops.size(), 2u);
  EXPECT_EQ(r.history.resource_ops[0].marks.at("n"), 1);
  EXPECT_EQ(r.history.resource_ops[1].marks.at("n"), 8);
}

/// A reason of 6,000 bytes is cut to 1,000 at a code point boundary (é is
/// two bytes), and says how long it was: a report never carries megabytes
/// of one reason.
TEST(ProgramCheck, ALongReasonIsCutAtACodePoint) {
  const RunResult r = run_scenario(load(text("long-reason")));
  ASSERT_GE(r.history.resource_ops.size(), 2u);
  const std::string cut = "\u2026 (cut: 6000 bytes)";
  std::string expected;
  for (int i = 0; i < 500; ++i) expected += "\u00e9";
  EXPECT_EQ(r.history.resource_ops[1].reason, expected + cut);
}

TEST(ProgramCheck, ProtocolErrorsExitTwoAndNameTheResourceProgram) {
  for (const auto& [mode, words] : std::vector<std::pair<std::string, std::string>>{
           {"bad-marks",
            "the mark \"n\" must be an integer from -9223372036854775808 to 9223372036854775807 "
            "(64-bit signed), got \"one\""},
           {"huge-mark",
            "the mark \"n\" must be an integer from -9223372036854775808 to 9223372036854775807 "
            "(64-bit signed), got 18446744073709551615"},
           {"huge-seen",
            "\"last_seen\" must be an integer from -9223372036854775808 to 9223372036854775807 "
            "(64-bit signed), got 9223372036854775808"},
           {"no-reason", "a rejection needs a \"reason\""},
           {"blank", "a rejection needs a \"reason\", visible text"},
           {"huge-float", "a number beyond the range of a double"},
           {"odd-name", "a mark's name is 1 to 200 bytes without control characters, '=' or ','"},
           {"not-bool", "\"accepted\" must be true or false, got 1"},
           {"no-decision", "a yield before the decision of check 1"},
           {"chatty", "a resource program sends only \"decision\" and \"yield\", got \"note\""}}) {
    const ProgramError e = error_of(load(text(mode)));
    EXPECT_EQ(e.exit_code(), 2) << mode;
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("resource.program: the program broke the protocol", 0), 0u) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

TEST(ProgramCheck, AProgramThatDoesNotAnswerOrExitsStopsTheRunWithThree) {
  const ProgramError hang = error_of(load(text("hang", R"(, "yield_timeout": "1s")")));
  EXPECT_EQ(hang.exit_code(), 3);
  EXPECT_NE(std::string(hang.what()).find("resource.program"), std::string::npos) << hang.what();
  const ProgramError exits = error_of(load(text("exit")));
  EXPECT_EQ(exits.exit_code(), 3);
  EXPECT_NE(std::string(exits.what()).find("exited"), std::string::npos) << exits.what();
}

/// A Node check (tests/programs/node_checks.js) in `mode`.
std::string node_text(const std::string& mode) {
  return R"({"version": 1, "scenario": "node-check-)" + mode + R"(", "seed": 1, "duration": "2s",
    "network": {"latency": "1ms"}, "lock": {"service": "none"},
    "resource": {"kind": "program", "program": {"command": ["node", ")" +
         std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/node/run.js", "node_checks.js", ")" + mode + R"("]}},
    "clients": [{"name": "A", "workload": {"kind": "counter", "work": "100ms"}}]})";
}

/// The Node SDK's check: the options spelled as `state` spells them
/// (last_written) work; a timer in a check, an `accepted` that is not a
/// boolean and an unknown option stop the run with the SDK's own words.
TEST(ProgramCheck, NodeSdkChecksAnswerSynchronouslyWithKnownOptions) {
  REQUIRE_NODE_SDK();
  for (const char* mode : {"snake", "bigint"}) {
    const RunResult r = run_scenario(load(node_text(mode)));
    ASSERT_GE(r.history.resource_ops.size(), 2u) << mode;
    EXPECT_EQ(r.history.resource_ops[1].last_written, 2) << mode;
    EXPECT_EQ(r.history.resource_ops[1].marks, (std::map<std::string, std::int64_t>{{"n", 2}})) << mode;
  }
  for (const auto& [mode, words] : std::vector<std::pair<std::string, std::string>>{
           {"timer", "a resource program cannot use timers"},
           {"immediate", "a resource program cannot use timers"},
           {"map", "marks must be a plain object of integers by name, e.g. { \"row-1\": 7 } (a Map"},
           {"twice", "fencesim.check(fn): a check is registered already"},
           {"raw-map", "fencesim.check: marks must be a plain object of integers by name"},
           {"not-bool", "a decision's accepted is true or false; got 1"},
           {"typo",
            "fencesim.accept: unknown option \"lastWriten\"; the options are marks, lastWritten and lastSeen"}}) {
    const ProgramError e = error_of(load(node_text(mode)));
    EXPECT_EQ(e.exit_code(), 3) << mode;
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << mode << ": " << e.what();
  }
}

/// A Python check (tests/programs/py_checks.py) in `mode`.
std::string python_text(const std::string& mode) {
  return R"({"version": 1, "scenario": "py-check-)" + mode + R"(", "seed": 1, "duration": "2s",
    "network": {"latency": "1ms"}, "lock": {"service": "none"},
    "resource": {"kind": "program", "program": {"command": ["python3", "-m", "fencesim", "py_checks.py", ")" +
         mode + R"("], "env": {"PYTHONPATH": ")" + std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/python"}}},
    "clients": [{"name": "A", "workload": {"kind": "counter", "work": "100ms"}}]})";
}

/// The Python SDK stops a check that sleeps, a rejection without visible
/// text, a second check and a mark beyond 64 bits with its own words.
TEST(ProgramCheck, PythonSdkChecksAreCheckedBeforeTheyAreSent) {
  for (const auto& [mode, words] : std::vector<std::pair<std::string, std::string>>{
           {"sleep", "a resource program's check cannot sleep or send requests (timer)"},
           {"blank", "a rejection needs a reason, visible text; got '   '"},
           {"twice", "fencesim.check: a check is registered already"},
           {"big", "the mark 'n' must be an integer from -2**63 to 2**63-1, got 18446744073709551616"}}) {
    const ProgramError e = error_of(load(python_text(mode)));
    EXPECT_EQ(e.exit_code(), 3) << mode;
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << mode << ": " << e.what();
  }
}

std::string load_error(const std::string& resource, const std::string& service = "none") {
  const std::string lock =
      service == "queue" ? R"("queue", "visibility_timeout": "30s", "messages": 3)" : "\"" + service + "\"";
  const std::string t = R"({"version": 1, "scenario": "x", "seed": 1, "duration": "5s",
    "lock": {"service": )" +
                        lock + R"(}, "resource": )" + resource + R"(,
    "clients": [{"name": "A", "workload": {"kind": "counter"}}]})";
  LoadResult l = load_scenario_text(t, "x.json");
  return l.ok() ? "" : l.error->to_string();
}

TEST(ProgramCheck, TheLoaderNamesWhatAProgramResourceNeeds) {
  EXPECT_EQ(load_error(R"({"kind": "program"})"),
            "x.json: at resource.program: a resource of kind \"program\" needs the program that decides its reads "
            "and writes (e.g. \"program\": {\"command\": [\"python3\", \"-m\", \"fencesim\", \"check.py\"]})");
  EXPECT_NE(load_error(R"({"kind": "fenced", "program": {"command": ["x"]}})")
                .find("at resource.program: \"program\" belongs to a resource whose check is a program"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind": "cas", "compare_versions": true})").find("at resource.compare_versions"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind": "program", "check": "monotonic", "program": {"command": ["x"]}})")
                .find("at resource.check"),
            std::string::npos);
  EXPECT_EQ(load_error(R"({"kind": "program", "fence_reads": true, "program": {"command": ["x"]}})"), "");
  EXPECT_NE(load_error(R"({"kind": "program", "program": {"command": ["x"]}})", "queue")
                .find("the queue design's ledger has its own rules"),
            std::string::npos);
}

}  // namespace
}  // namespace fencesim
