// The `fencesim` command end to end: what a user and a CI job see.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kBin = std::string(FENCESIM_BINARY_DIR) + "/fencesim";
const std::string kCases = std::string(FENCESIM_SOURCE_DIR) + "/../shared/cases";

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Command : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fencesim-cmd-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = kBin + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  fs::path write_file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  fs::path dir_;
};

const char* kWorked = R"({
  "scenario": "worked",
  "duration": "60s",
  "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
  "resource": {"kind": "fenced", "check": "strict", "initial": 1000},
  "clients": [
    {"name": "A", "workload": {"kind": "sequence_allocator", "block": 100, "work": "500ms"}},
    {"name": "B", "start": "2s", "workload": {"kind": "sequence_allocator", "block": 100, "work": "500ms"}}
  ],
  "faults": [{"at": "200ms", "kind": "pause", "target": "A", "duration": "12s"}],
  "expect": {"mutual_exclusion": "violated", "no_stale_write": "holds", "no_lost_update": "holds"}
})";

TEST_F(Command, ASharedAcceptanceCasePassesAndWritesItsFourReports) {
  if (!fs::exists(kCases)) GTEST_SKIP() << "shared cases not present";
  const Result r = run("run " + kCases + "/c02-worked-example-fenced.json --out " + (dir_ / "r").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (const char* f : {"report.json", "report.md", "timeline.html", "trace.jsonl"}) {
    EXPECT_TRUE(fs::exists(dir_ / "r" / "c02-worked-example-fenced" / f)) << f;
  }
  EXPECT_NE(r.out.find("seed 1"), std::string::npos);
  EXPECT_NE(r.out.find("no_stale_write"), std::string::npos);
}

TEST_F(Command, TheSameFileAndSeedTwiceGiveByteIdenticalReports) {
  const fs::path f = write_file("worked.json", kWorked);
  ASSERT_EQ(run("run " + f.string() + " --out " + (dir_ / "a").string()).code, 0);
  // From another working directory and another output folder.
  const std::string cd = "cd " + dir_.string() + " && ";
  int status = std::system((cd + kBin + " run worked.json --out b -q").c_str());
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // And through a relative path with a folder in it.
  const std::string up = "cd " + dir_.parent_path().string() + " && ";
  status = std::system(
      (up + kBin + " run " + dir_.filename().string() + "/worked.json --out " + (dir_ / "c").string() + " -q").c_str());
  ASSERT_EQ(WEXITSTATUS(status), 0);
  for (const char* name : {"report.json", "report.md", "timeline.html", "trace.jsonl"}) {
    const std::string a = slurp(dir_ / "a" / "worked" / name);
    EXPECT_FALSE(a.empty()) << name;
    // The reports name the file by its name alone, however the path was
    // spelled: all three runs say worked.json.
    EXPECT_EQ(a, slurp(dir_ / "b" / "worked" / name)) << name;
    EXPECT_EQ(a, slurp(dir_ / "c" / "worked" / name)) << name;
  }
}

TEST_F(Command, ReportsContainNoAbsolutePathsOrHostNames) {
  const fs::path f = write_file("worked.json", kWorked);
  ASSERT_EQ(run("run " + f.string() + " --out " + (dir_ / "a").string()).code, 0);
  for (const char* name : {"report.json", "report.md", "trace.jsonl"}) {
    const std::string text = slurp(dir_ / "a" / "worked" / name);
    EXPECT_EQ(text.find(dir_.string()), std::string::npos) << name;
    EXPECT_EQ(text.find("/tmp"), std::string::npos) << name;
  }
}

TEST_F(Command, AnUnmetExpectationExitsOneAndPrintsTheReproducingCommand) {
  std::string text = kWorked;
  text.replace(text.find("\"no_stale_write\": \"holds\""), 25, "\"no_stale_write\": \"violated\"");
  const fs::path f = write_file("wrong.json", text);
  const Result r = run("run " + f.string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos);
  EXPECT_NE(r.out.find("fencesim run"), std::string::npos);
  EXPECT_NE(r.out.find("--seed 1"), std::string::npos);
}

TEST_F(Command, AnUnmetMetricBoundAloneExitsOneAndEveryReportShowsIt) {
  // The worked example, fenced, rejects A's stale write: writes_rejected is 1.
  std::string text = kWorked;
  const std::string props = "\"no_lost_update\": \"holds\"}";
  text.replace(text.find(props), props.size(),
               "\"no_lost_update\": \"holds\", \"metrics\": {\"writes_rejected\": {\"min\": 2}}}");
  const fs::path f = write_file("metric.json", text);
  const Result r = run("run " + f.string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("metric writes_rejected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  const std::string md = slurp(dir_ / "a" / "worked" / "report.md");
  EXPECT_NE(md.find("| writes_rejected | min 2 | 1 | **NO** |"), std::string::npos) << md;
  const std::string json = slurp(dir_ / "a" / "worked" / "report.json");
  EXPECT_NE(json.find("\"metric_expectations\""), std::string::npos);
  // The same bound with min 1 is met, and the run exits 0.
  text.replace(text.find("{\"min\": 2}"), 10, "{\"min\": 1}");
  const fs::path g = write_file("metric-ok.json", text);
  EXPECT_EQ(run("run " + g.string() + " --out " + (dir_ / "b").string()).code, 0);
}

TEST_F(Command, QuietNamesEachUnmetExpectationOnItsOwnLine) {
  // Two unmet expectations, a property and a metric bound (issue #35): each
  // gets its line with what was expected and what the run gave.
  std::string text = kWorked;
  text.replace(text.find("\"no_stale_write\": \"holds\""), 25, "\"no_stale_write\": \"violated\"");
  const std::string props = "\"no_lost_update\": \"holds\"}";
  text.replace(text.find(props), props.size(),
               "\"no_lost_update\": \"holds\", \"metrics\": {\"writes_rejected\": {\"min\": 2}}}");
  const fs::path f = write_file("two-unmet.json", text);
  const Result r = run("run " + f.string() + " --quiet --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("worked: no_stale_write: expected violated, got holds\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worked: metric writes_rejected: expected min 2, got 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worked: an expectation was not met; reproduce with: "), std::string::npos) << r.out;
}

TEST_F(Command, AFileWithNoExpectBlockSaysSoNotThatEveryExpectationWasMet) {
  std::string text = kWorked;
  const std::size_t at = text.find(",\n  \"expect\"");
  text = text.substr(0, at) + "\n}";
  const fs::path f = write_file("no-expect.json", text);
  const Result r = run("run " + f.string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no expect block: nothing was expected"), std::string::npos) << r.out;
  const std::string md = slurp(dir_ / "a" / "worked" / "report.md");
  EXPECT_NE(md.find("## Verdicts: no expect block: nothing was expected"), std::string::npos) << md;
  EXPECT_EQ(md.find("every expectation met"), std::string::npos) << md;
}

TEST_F(Command, SeedOverrideWritesASeparateFolder) {
  const fs::path f = write_file("worked.json", kWorked);
  const Result r = run("run " + f.string() + " --seed 7 --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "a" / "worked-seed7" / "report.json"));
  EXPECT_NE(slurp(dir_ / "a" / "worked-seed7" / "report.json").find("\"seed\": 7"), std::string::npos);
}

TEST_F(Command, AnInvalidFileExitsTwoWithPathAndSuggestionAndWritesNothing) {
  std::string text = kWorked;
  text.replace(text.find("\"duration\": \"12s\""), 17, "\"duraton\": \"12s\"");
  const fs::path f = write_file("bad.json", text);
  const Result r = run("run " + f.string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("faults[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("duration"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "a" / "worked"));
}

TEST_F(Command, MalformedJsonGetsLineAndColumn) {
  const fs::path f = write_file("broken.json", "{\n  \"scenario\": \"x\",\n  \"duration\": 60s\n}\n");
  const Result r = run("validate " + f.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("broken.json:3:"), std::string::npos) << r.err;
}

TEST_F(Command, AMissingFileIsAnInputError) {
  const Result r = run("run " + (dir_ / "nope.json").string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.json"), std::string::npos);
}

TEST_F(Command, TwoFilesThatWouldWriteTheSameFolderAreRefusedBeforeRunning) {
  const fs::path a = write_file("one.json", kWorked);
  const fs::path b = write_file("two.json", kWorked);
  const Result r = run("run " + a.string() + " " + b.string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("would both write"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "a" / "worked"));
}

TEST_F(Command, WithSeveralFilesEachRunsAndTheHighestCodeWins) {
  std::string other = kWorked;
  other.replace(other.find("\"worked\""), 8, "\"other\"");
  const fs::path good = write_file("good.json", kWorked);
  const fs::path bad = write_file("bad.json", "{");
  const fs::path good2 = write_file("other.json", other);
  const Result r =
      run("run " + good.string() + " " + bad.string() + " " + good2.string() + " -q --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(fs::exists(dir_ / "a" / "worked" / "report.json"));
  EXPECT_TRUE(fs::exists(dir_ / "a" / "other" / "report.json"));
}

TEST_F(Command, ABadSeedIsAnInputError) {
  const fs::path f = write_file("worked.json", kWorked);
  for (const char* bad : {"-1", "0x10", "18446744073709551616", "''", "1.5"}) {
    const Result r = run("run " + f.string() + " --seed " + bad + " --out " + (dir_ / "a").string());
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--seed expects"), std::string::npos) << bad << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_EQ(run("run " + f.string() + " --seed 18446744073709551615 -q --out " + (dir_ / "a").string()).code, 0);
}

TEST_F(Command, UsageErrorsExitTwoAndHelpExitsZero) {
  EXPECT_EQ(run("").code, 2);
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("run --no-such-flag x.json").code, 2);
  EXPECT_EQ(run("run").code, 2);
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("run --help").code, 0);
  EXPECT_EQ(run("--version").code, 0);
}

// CLI11's own errors (unknown option, missing file or value, one file too
// many) come out in the project's style: one line, what is wrong, the
// nearest option where there is one, and the command's usage; exit 2.
TEST_F(Command, UsageErrorsAreOneLineWithTheUsageAndASuggestion) {
  const std::string sweep_usage =
      "usage: fencesim sweep FILE --seeds A..B [--jobs J] [--shard I/N|auto] [--out DIR] [--keep none|failing|all] "
      "[--junit FILE]; "
      "`fencesim sweep --help` says more)\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --bogus",
       "fencesim: run has no option \"--bogus\" (its options are --help, --seed, --out, --quiet, --no-color, "
       "--full-timeline, --history, --junit; usage: fencesim run FILE... [--seed N] [--out DIR] [--quiet] "
       "[--no-color] [--full-timeline] [--history edn,porcupine] [--junit FILE]; `fencesim run --help` says more)\n"},
      {"run x.json --sede 3", "fencesim: run has no option \"--sede\" (did you mean \"--seed\"? its options are"},
      {"sweep x.json --seeds 1..2 --quiet",
       "fencesim: sweep has no option \"--quiet\" (its options are --help, "
       "--seeds, --jobs, --shard, --out, --keep, --junit; " +
           sweep_usage},
      {"sweep", "fencesim: sweep needs a scenario file (" + sweep_usage},
      {"sweep x.json", "fencesim: sweep needs --seeds (" + sweep_usage},
      {"sweep x.json --seeds", "fencesim: --seeds needs a value (" + sweep_usage},
      {"sweep x.json y.json --seeds 1..2",
       "fencesim: sweep takes one scenario file; \"y.json\" is one too many (" + sweep_usage},
      {"run", "fencesim: run needs one or more scenario files (usage: fencesim run FILE..."},
      {"merge",
       "fencesim: merge needs one or more sweep.json files (usage: fencesim merge SWEEP.json... [--out DIR]; "
       "`fencesim merge --help` says more)\n"},
      {"shrink x.json", "fencesim: shrink needs --seed (usage: fencesim shrink FILE --seed N"},
      {"write", "fencesim: write needs a scenario file (usage: fencesim write FILE"},
  };
  for (const auto& [args, expected] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err.rfind(expected, 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  // An option's value is not taken for an option, nor is anything after --;
  // "-j2" is -j with its value.
  EXPECT_EQ(run("run --out -x").err.rfind("fencesim: run needs one or more scenario files", 0), 0u);
  const std::string f = std::string(FENCESIM_SOURCE_DIR) + "/tests/explore/short-pauses.json";
  EXPECT_EQ(run("sweep " + f + " --seeds 1..2 -j2 --keep none --out " + (dir_ / "j").string()).code,
            0);  // seeds 1, 2 hold
}

TEST_F(Command, AnUnknownCommandIsNamedWithTheCommandsThatExist) {
  Result r = run("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "fencesim: unknown command \"frobnicate\" (the commands are run, sweep, merge, shrink, validate, write and "
            "matrix; `fencesim --help` says more)\n");
  r = run("vaildate x.json");
  EXPECT_NE(r.err.find("did you mean \"validate\"?"), std::string::npos) << r.err;
  r = run("scenarios/x.json");
  EXPECT_NE(r.err.find("to run a scenario file: fencesim run scenarios/x.json"), std::string::npos) << r.err;
}

// Every bad invocation is one line on stderr and exit 2 (cli/usage.hpp):
// never CLI11's multi-line explanation, its exit codes (105, 106 …) or a crash.
void expect_one_line(const Result& r, const std::string& what, const std::string& start) {
  EXPECT_EQ(r.code, 2) << what << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind(start, 0), 0u) << what << ": " << r.err;
  EXPECT_EQ(r.err.find("Run with --help"), std::string::npos) << what << ": " << r.err;
}

TEST_F(Command, TopLevelUsageErrorsAreOneLine) {
  const std::string list = "the commands are run, sweep, merge, shrink, validate, write and matrix";
  expect_one_line(run(""), "no command", "fencesim: a command is required (" + list + "; `fencesim --help` says more)");
  expect_one_line(run("''"), "empty command", "fencesim: the command is empty (" + list);
  expect_one_line(run("frobnicate x"), "unknown command", "fencesim: unknown command \"frobnicate\" (" + list);
  expect_one_line(run("vaildate x.json"), "misspelt command",
                  "fencesim: unknown command \"vaildate\" (did you mean \"validate\"? " + list);
  expect_one_line(run("x.json"), "a file as the command",
                  "fencesim: unknown command \"x.json\" (to run a scenario file: fencesim run x.json; " + list);
  expect_one_line(run("--bogus run"), "option before the command", "fencesim: unknown option \"--bogus\" before");
}

TEST_F(Command, AFileThatCannotBeReadIsOneLine) {
  expect_one_line(run("run " + (dir_ / "nope.json").string()), "missing file",
                  "fencesim: " + (dir_ / "nope.json").string() + ": no such file");
  expect_one_line(run("validate " + dir_.string()), "a directory",
                  "fencesim: " + dir_.string() + ": is a directory, not a scenario file");
  expect_one_line(run("sweep " + dir_.string() + " --seeds 1..2 --out " + (dir_ / "o").string()),
                  "sweep of a directory", "fencesim: " + dir_.string() + ": is a directory");
  expect_one_line(run("write " + (dir_ / "nope.json").string()), "write of a missing file", "fencesim: ");
  const fs::path locked = write_file("locked.json", kWorked);
  fs::permissions(locked, fs::perms::none);
  if (::geteuid() != 0) {  // root reads it anyway
    expect_one_line(run("run " + locked.string() + " --out " + (dir_ / "o").string()), "unreadable file",
                    "fencesim: " + locked.string() + ": ");
  }
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(Command, BadSeedValuesAreOneLine) {
  const fs::path f = write_file("worked.json", kWorked);
  for (const char* bad : {"-1", "abc", "18446744073709551616", "99999999999999999999999999", "''", "1e3", "--", " 7"}) {
    expect_one_line(run("run " + f.string() + " --seed '" + std::string(bad) + "' --out " + (dir_ / "a").string()),
                    std::string("run --seed ") + bad, "fencesim: ");
    expect_one_line(run("write " + f.string() + " --seed '" + std::string(bad) + "'"),
                    std::string("write --seed ") + bad, "fencesim: ");
    expect_one_line(run("shrink " + f.string() + " --seed '" + std::string(bad) + "' --out " + (dir_ / "a").string()),
                    std::string("shrink --seed ") + bad, "fencesim: ");
  }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
}

// An option that takes one value, given twice, is refused rather than the
// last one kept silently; a flag twice means what it means once.
TEST_F(Command, AnOptionGivenTwiceIsRefused) {
  const fs::path f = write_file("worked.json", kWorked);
  const std::string out = " --out " + (dir_ / "a").string();
  expect_one_line(run("run " + f.string() + " --seed 1 --seed 2" + out), "--seed twice",
                  "fencesim: --seed was given 2 times; give it once (usage: fencesim run FILE...");
  expect_one_line(run("run " + f.string() + " --seed=1 --seed 1" + out), "--seed twice, same value",
                  "fencesim: --seed was given 2 times; give it once");
  expect_one_line(run("run " + f.string() + out + out), "--out twice", "fencesim: --out was given 2 times");
  expect_one_line(run("write " + f.string() + " --seed 1 --seed 2 --seed 3"), "write --seed thrice",
                  "fencesim: --seed was given 3 times; give it once (usage: fencesim write FILE");
  expect_one_line(run("sweep " + f.string() + " --seeds 1..2 --seeds 3..4" + out), "--seeds twice",
                  "fencesim: --seeds was given 2 times; give it once (usage: fencesim sweep FILE");
  expect_one_line(run("shrink " + f.string() + " --seed 1 --seed 2" + out), "shrink --seed twice",
                  "fencesim: --seed was given 2 times");
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_EQ(run("run " + f.string() + " -q -q --seed 3" + out).code, 0);
}

TEST_F(Command, HelpIsTheFullTextAndExitsZero) {
  for (const char* args : {"--help", "-h", "run --help", "sweep --help", "shrink -h", "--help-all"}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << args << ": " << r.out;
    EXPECT_GT(std::count(r.out.begin(), r.out.end(), '\n'), 4) << args;
    EXPECT_EQ(r.err, "") << args;
  }
}

// fencesim-real's command line (real/main.cpp) through the same header:
// every usage error is one line and exit 2, before any server starts.
TEST_F(Command, FencesimRealUsageErrorsAreOneLine) {
  const std::string real = std::string(FENCESIM_BINARY_DIR) + "/fencesim-real";
  if (!fs::exists(real)) GTEST_SKIP() << "fencesim-real is not built (libhiredis-dev, libpq-dev)";
  auto run_real = [&](const std::string& args) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const int status = std::system((real + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  };
  const fs::path f = write_file("worked.json", kWorked);
  const std::string usage =
      " (usage: fencesim-real FILE [--scale X] [--out DIR] [--compare] [--quiet] [--keep-dir] [--stop-when-done]; "
      "`fencesim-real --help` "
      "says more)\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "fencesim-real: a scenario file is required" + usage},
      {"a.json b.json", "fencesim-real: one scenario file only; \"b.json\" is one too many" + usage},
      {f.string() + " --bogus", "fencesim-real: unknown option \"--bogus\" (its options are --help, --scale"},
      {f.string() + " --sacle 2", "fencesim-real: unknown option \"--sacle\" (did you mean \"--scale\"?"},
      {f.string() + " --scale", "fencesim-real: --scale needs a value" + usage},
      {f.string() + " --scale abc",
       "fencesim-real: --scale expects a number greater than 0 and at most 10, got \"abc\""},
      {f.string() + " --scale -1", "fencesim-real: --scale expects a number greater than 0 and at most 10, got \"-1\""},
      {f.string() + " --scale 0", "fencesim-real: --scale expects"},
      {f.string() + " --scale 11", "fencesim-real: --scale expects"},
      {f.string() + " --scale 1 --scale 2", "fencesim-real: --scale was given 2 times; give it once" + usage},
      {f.string() + " --out a --out b", "fencesim-real: --out was given 2 times"},
      {f.string() + " --out ''", "fencesim-real: --out needs a folder name"},
      {(dir_ / "nope.json").string(), "fencesim-real: " + (dir_ / "nope.json").string() + ": no such file\n"},
      {dir_.string(), "fencesim-real: " + dir_.string() + ": is a directory, not a scenario file\n"},
  };
  for (const auto& [args, expected] : cases) expect_one_line(run_real(args), "fencesim-real " + args, expected);
  const Result help = run_real("--help");
  EXPECT_EQ(help.code, 0) << help.err;
  EXPECT_NE(help.out.find("--scale"), std::string::npos) << help.out;
}

TEST_F(Command, TheTerminalTimelineShowsOneResumeForOverlappingPauses) {
  const fs::path f = write_file("overlap.json", R"({
    "scenario": "overlap", "duration": "20s",
    "lock": {"service": "redis", "ttl": "5s"},
    "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "counter", "iterations": 1}}],
    "faults": [{"at": "1s", "kind": "pause", "target": "A", "duration": "4s"},
               {"at": "2s", "kind": "pause", "target": "A", "duration": "6s"},
               {"at": "12s", "kind": "pause", "target": "A", "duration": "1s"}]
  })");
  const Result r = run("run --no-color " + f.string() + " --out " + (dir_ / "r").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // A resumes at 8 s (the longer of the two overlapping pauses) and at 13 s, not at 5 s.
  std::vector<std::string> resumes;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("resumes") != std::string::npos) resumes.push_back(line.substr(0, line.find(" A ")));
  }
  ASSERT_EQ(resumes.size(), 2u) << r.out;
  EXPECT_NE(resumes[0].find("8.000000s"), std::string::npos) << resumes[0];
  EXPECT_NE(resumes[1].find("13.000000s"), std::string::npos) << resumes[1];
}

const std::string kSeedTable = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/matrices/seed-table.json";

TEST_F(Command, MatrixReportsProgressPerRowUnlessQuiet) {
  Result r = run("matrix " + kSeedTable + " --seeds 1 --out " + (dir_ / "m").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("fencesim matrix: 1/29 rows done (1 seed per cell): Redis single primary · unfenced\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("29/29 rows done"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "m" / "MATRIX.md"));
  r = run("matrix " + kSeedTable + " --seeds 1 --quiet --out " + (dir_ / "q").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(Command, MatrixNeedsAFileAndRefusesABadOne) {
  Result r = run("matrix --seeds 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("matrix needs a matrix file (usage: fencesim matrix FILE"), std::string::npos) << r.err;
  r = run("matrix " + kSeedTable + " --seeds 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--seeds expects the runs per cell, from 1 to 100000, got \"0\""), std::string::npos) << r.err;
  const std::string scenario = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/gc-pause.json";
  r = run("matrix " + scenario + " --seeds 1 --out " + (dir_ / "bad").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("fencesim: " + scenario +
                       ": this is a scenario file (it has \"scenario\" and no "
                       "\"matrix\"), not a matrix file"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad" / "MATRIX.md"));
  // A missing base file: one line naming the matrix file and `base`, exit 2.
  const fs::path nobase = dir_ / "nobase.json";
  std::ofstream(nobase)
      << R"({"matrix": "m", "base": "missing.json", "rows": [{"name": "r"}], "columns": [{"name": "c"}]})";
  r = run("matrix " + nobase.string() + " --out " + (dir_ / "nb").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fencesim: " + nobase.string() +
                       ": at base: cannot read the base scenario \"missing.json\" (read as " +
                       (dir_ / "missing.json").string() +
                       "): no such file; expected the path of a scenario file relative to the matrix file's folder, "
                       "or the base scenario inline as an object (check the file name, or give \"base\": {…})\n");
  EXPECT_FALSE(fs::exists(dir_ / "nb" / "MATRIX.md"));
}

TEST_F(Command, AnOptionBeforeTheCommandIsNamed) {
  const Result r = run("--bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown option \"--bogus\" before the command"), std::string::npos) << r.err;
  EXPECT_NE(run("Run x.json").err.find("did you mean \"run\"?"), std::string::npos);
}

TEST_F(Command, ANamedPipeIsRefusedInsteadOfBlocking) {
  const fs::path fifo = dir_ / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run("validate " + fifo.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is not a regular file"), std::string::npos) << r.err;
}

TEST_F(Command, SomethingInTheWayOfAReportFileFailsBeforeAnyReportIsWritten) {
  const fs::path f = write_file("worked.json", kWorked);
  const fs::path out = dir_ / "r";
  fs::create_directories(out / "worked" / "report.md");  // a directory where report.md goes
  const Result r = run("run -q " + f.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("something other than a file is in the way"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out / "worked")) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, (std::vector<std::string>{"report.md"}));  // no report.json, no .tmp files
}

/// The four report files of a folder, by name (and any other entry, hidden ones too).
std::map<std::string, std::string> folder_files(const fs::path& d) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out[e.path().filename().string()] = slurp(e.path());
  return out;
}

// Issue #35 (2): two runs writing one folder at once once shared the
// temporary names (".report.json.tmp"): one failed to rename, or the folder
// ended with report.json of one run and timeline.html of the other.
TEST_F(Command, TwoRunsWritingOneFolderAtOnceBothSucceedAndLeaveOneRunsCompleteReports) {
  // Two different scenarios with the same `scenario` name: the same folder, other reports.
  const fs::path a = write_file("a.json", kWorked);
  std::string other = kWorked;
  other.replace(other.find("\"12s\""), 5, "\"25s\"");  // a longer pause: other events, fingerprint, timeline
  const fs::path b = write_file("b.json", other);
  ASSERT_EQ(run("run -q " + a.string() + " --out " + (dir_ / "ra").string()).code, 0);
  ASSERT_EQ(run("run -q " + b.string() + " --out " + (dir_ / "rb").string()).code, 0);
  const auto ref_a = folder_files(dir_ / "ra" / "worked"), ref_b = folder_files(dir_ / "rb" / "worked");
  ASSERT_EQ(ref_a.size(), 4u);
  ASSERT_NE(ref_a.at("report.json"), ref_b.at("report.json"));
  ASSERT_NE(ref_a.at("timeline.html"), ref_b.at("timeline.html"));
  const fs::path out = dir_ / "shared";
  for (int round = 0; round < 20; ++round) {
    const std::string one = kBin + " run -q " + a.string() + " --out " + out.string() + " >/dev/null 2>" +
                            (dir_ / "e1").string() + "; echo $? >" + (dir_ / "c1").string();
    const std::string two = kBin + " run -q " + b.string() + " --out " + out.string() + " >/dev/null 2>" +
                            (dir_ / "e2").string() + "; echo $? >" + (dir_ / "c2").string();
    ASSERT_EQ(std::system(("(" + one + ") & (" + two + ") & wait").c_str()), 0);
    EXPECT_EQ(slurp(dir_ / "c1"), "0\n") << "round " << round << ": " << slurp(dir_ / "e1");
    EXPECT_EQ(slurp(dir_ / "c2"), "0\n") << "round " << round << ": " << slurp(dir_ / "e2");
    const auto got = folder_files(out / "worked");
    EXPECT_TRUE(got == ref_a || got == ref_b) << "round " << round << ": the folder mixes the two runs' files";
    std::set<std::string> left;  // nothing but the report folder: no staging or old folder
    for (const auto& e : fs::directory_iterator(out)) left.insert(e.path().filename().string());
    EXPECT_EQ(left, (std::set<std::string>{"worked"})) << "round " << round;
    if (HasFailure()) break;
  }
}

TEST_F(Command, ADescriptionCannotRestructureReportMd) {
  const fs::path f = write_file("md.json", R"({"scenario": "md", "description": "# not a heading\n1. not a list",
    "duration": "5s", "lock": {"service": "redis", "ttl": "2s"}, "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "counter"}}]})");
  const Result r = run("run -q " + f.string() + " --out " + (dir_ / "r").string());
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir_ / "r" / "md" / "report.md");
  EXPECT_NE(md.find("\n\\# not a heading\n1\\. not a list\n"), std::string::npos) << md;
}

TEST_F(Command, HtmlAndControlCharactersInADescriptionAreShownNotRun) {
  const fs::path f = write_file("html.json", R"({"scenario": "html",
    "description": "<script>alert(1)</script> &amp; 1 < 2 \u001b[31mred\u0000",
    "duration": "5s", "lock": {"service": "redis", "ttl": "2s"}, "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "counter"}}]})");
  const Result r = run("run -q " + f.string() + " --out " + (dir_ / "r").string());
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir_ / "r" / "html" / "report.md");
  EXPECT_NE(md.find("\\<script>alert(1)\\</script> \\&amp; 1 < 2 \\u001b[31mred\\u0000"), std::string::npos) << md;
  const std::string html = slurp(dir_ / "r" / "html" / "timeline.html");
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\0'), std::string::npos);
}

TEST_F(Command, AnEmptyFileNameOrALinkLoopIsNamedAsSuch) {
  const Result empty = run("run '' --out " + (dir_ / "a").string());
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("an empty file name"), std::string::npos) << empty.err;
  fs::create_symlink(dir_ / "loop.json", dir_ / "loop.json");
  const Result loop = run("run " + (dir_ / "loop.json").string() + " --out " + (dir_ / "a").string());
  EXPECT_EQ(loop.code, 2);
  EXPECT_EQ(loop.err.find("no such file"), std::string::npos) << loop.err;
  EXPECT_NE(loop.err.find("cannot read"), std::string::npos) << loop.err;
}

TEST_F(Command, NotesGoToTheSummaryOrWithQuietToStderrNotBoth) {
  const fs::path f = write_file("late.json", R"({"scenario": "late", "duration": "10s",
    "lock": {"service": "redis", "ttl": "5s"}, "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "counter"}}],
    "faults": [{"at": "11s", "kind": "pause", "target": "A", "duration": "1s"}]})");
  const std::string note = "faults[0] at 11s is not before the end of the run";
  Result r = run("run --no-color " + f.string() + " --out " + (dir_ / "a").string());
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find(note), std::string::npos) << r.err;
  r = run("run -q " + f.string() + " --out " + (dir_ / "b").string());
  EXPECT_EQ(r.out.find(note), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
}

TEST_F(Command, ValidateChecksWithoutRunning) {
  const fs::path f = write_file("worked.json", kWorked);
  const Result r = run("validate " + f.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos);
  EXPECT_FALSE(fs::exists("reports/worked"));
}

TEST_F(Command, TheEtcdAcceptanceCasePasses) {
  if (!fs::exists(kCases)) GTEST_SKIP() << "shared cases not present";
  const std::string c07 = kCases + "/c07-etcd-pauses-fenced-reads.json";
  EXPECT_EQ(run("validate " + c07).code, 0);
  const Result r = run("run " + c07 + " --out " + (dir_ / "a").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("raft_safety"), std::string::npos);
}

TEST_F(Command, TheTimelineOfABigEtcdRunStaysUnderTwoMegabytes) {
  // 5 clients on a 5-member etcd cluster for 120 s under random pauses.
  const std::string big = std::string(FENCESIM_SOURCE_DIR) + "/tests/cli/big-etcd.json";
  const Result r = run("run " + big + " -q --out " + (dir_ / "a").string());
  ASSERT_LE(r.code, 1) << r.err;
  const fs::path page = dir_ / "a" / "big-etcd" / "timeline.html";
  ASSERT_TRUE(fs::exists(page));
  EXPECT_LT(fs::file_size(page), 2u * 1024 * 1024);
  const std::string html = slurp(page);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external assets
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST_F(Command, TheTimelineOfAnHourLongRunNearTheEventBudgetStaysUnderThreeMegabytes) {
  // 50 clients on a 5-member etcd cluster for 1 h: about 4.8 million events.
  const std::string big = std::string(FENCESIM_SOURCE_DIR) + "/tests/cli/big-etcd-1h.json";
  const Result r = run("run " + big + " -q --out " + (dir_ / "a").string());
  ASSERT_LE(r.code, 1) << r.err;
  const fs::path page = dir_ / "a" / "big-etcd-1h" / "timeline.html";
  ASSERT_TRUE(fs::exists(page));
  EXPECT_LT(fs::file_size(page), 3u * 1000 * 1000);
  const std::string html = slurp(page);
  // Beyond the detail budget the page says what it drew one by one and what it counted.
  EXPECT_NE(html.find("are counted per pixel column"), std::string::npos);
  EXPECT_NE(html.find("class=\"band\""), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external assets
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST_F(Command, ReportJsonHasTheDocumentedTopLevelKeys) {
  const fs::path f = write_file("worked.json", kWorked);
  ASSERT_EQ(run("run " + f.string() + " -q --out " + (dir_ / "a").string()).code, 0);
  const std::string j = slurp(dir_ / "a" / "worked" / "report.json");
  for (const char* key : {"\"report_version\"", "\"fencesim_version\"", "\"scenario\"", "\"seed\"", "\"settings\"",
                          "\"faults\"", "\"nemesis_draws\"", "\"verdicts\"", "\"metrics\"", "\"run\"", "\"outcome\""}) {
    EXPECT_NE(j.find(key), std::string::npos) << key;
  }
  // Fixed notation: no floating-point numbers anywhere.
  EXPECT_EQ(j.find("e+"), std::string::npos);
  EXPECT_EQ(j.find("e-0"), std::string::npos);
}

TEST_F(Command, WritePrintsAScenarioThatRunsToTheSameReport) {
  const fs::path f = write_file("worked.json", kWorked);
  const Result w = run("write " + f.string());
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(w.err, "");
  EXPECT_EQ(w.out.rfind("{\n  \"version\": 1,\n  \"scenario\": \"worked\",", 0), 0u) << w.out;
  fs::create_directories(dir_ / "w");
  std::ofstream(dir_ / "w" / "worked.json") << w.out;
  ASSERT_EQ(run("run " + f.string() + " -q --out " + (dir_ / "a").string()).code, 0);
  ASSERT_EQ(run("run " + (dir_ / "w" / "worked.json").string() + " -q --out " + (dir_ / "b").string()).code, 0);
  EXPECT_EQ(slurp(dir_ / "a" / "worked" / "report.json"), slurp(dir_ / "b" / "worked" / "report.json"));
  EXPECT_EQ(run("write " + (dir_ / "w" / "worked.json").string()).out, w.out);
}

TEST_F(Command, WriteMaterializesTheNemesisForTheSeedGiven) {
  const std::string file = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/nemesis-pauses.json";
  const Result w = run("write " + file + " --materialize-nemesis --seed 5");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(w.out.find("\"nemesis\""), std::string::npos);
  EXPECT_NE(w.out.find("\"seed\": 5,"), std::string::npos);
  EXPECT_NE(w.out.find("{\"at\": "), std::string::npos);
  const fs::path m = write_file("m.json", w.out);
  EXPECT_EQ(run("validate " + m.string()).code, 0);
  // Without the option the nemesis stays.
  EXPECT_NE(run("write " + file).out.find("\"nemesis\": {\"kinds\": [\"pause\"]"), std::string::npos);
}

TEST_F(Command, WriteRefusesBadInputWithTheLoadersError) {
  const fs::path f = write_file("bad.json", R"({"scenario": "x", "duration": "60", "lock": {"service": "none"},
    "resource": {"kind": "cas"}, "clients": [{"name": "A", "workload": {"kind": "counter"}}]})");
  Result r = run("write " + f.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.find("fencesim: " + f.string() + ": at duration: invalid duration \"60\""), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run("write " + f.string() + " --seed -1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--seed expects a decimal integer"), std::string::npos) << r.err;
  EXPECT_EQ(run("write").code, 2);
  EXPECT_EQ(run("write " + (dir_ / "nope.json").string()).code, 2);
}

// --- fencesim sweep ---------------------------------------------------------

/// Short random pauses: mutual_exclusion (expected to hold) breaks in a few
/// seeds of 1..40 only, no_stale_write in more (tests/explore/short-pauses.json).
const fs::path kShortPauses = fs::path(FENCESIM_SOURCE_DIR) / "tests" / "explore" / "short-pauses.json";

std::set<std::string> subfolders(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) out.insert(e.path().filename().string());
  }
  return out;
}

TEST_F(Command, SweepWithOneJobAndTwoWritesByteIdenticalFiles) {
  const std::string file = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/nemesis-pauses.json";
  const Result one = run("sweep " + file + " --seeds 1..60 --jobs 1 --out " + (dir_ / "a").string());
  const Result two = run("sweep " + file + " --seeds 1..60 --jobs 2 --out " + (dir_ / "b").string());
  ASSERT_EQ(one.code, 0) << one.out << one.err;
  ASSERT_EQ(two.code, 0) << two.out << two.err;
  EXPECT_EQ(one.err, "");  // no progress line: stderr is not a terminal
  const fs::path a = dir_ / "a" / "nemesis-pauses-sweep", b = dir_ / "b" / "nemesis-pauses-sweep";
  const std::string json = slurp(a / "sweep.json");
  EXPECT_EQ(json, slurp(b / "sweep.json"));
  EXPECT_EQ(slurp(a / "summary.md"), slurp(b / "summary.md"));
  EXPECT_EQ(subfolders(a), subfolders(b));
  EXPECT_EQ(json.find("jobs"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["scenario"]["name"], "nemesis-pauses");
  EXPECT_EQ(j["seeds"]["count"], 60);
  EXPECT_EQ(j["runs"].size(), 60u);
  EXPECT_EQ(j["properties"][0]["property"], "mutual_exclusion");
  EXPECT_EQ(j["properties"][0]["violations"], 60);
  EXPECT_EQ(j["determinism_check"]["seeds"], nlohmann::json::array({1, 51}));
  EXPECT_NE(one.out.find("mutual_exclusion  violated  60/60"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("mutual_exclusion first broke at seed 1: fencesim run " + file + " --seed 1"),
            std::string::npos)
      << one.out;
}

TEST_F(Command, SweepFindsTheViolationsThatRunWithTheSeedReproduces) {
  const fs::path f = kShortPauses;
  const Result r = run("sweep " + f.string() + " --seeds 1..40 --jobs 2 --keep none --out " + (dir_ / "s").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // mutual_exclusion was expected to hold
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "s" / "short-pauses-sweep" / "sweep.json"));
  EXPECT_EQ(j["outcome"]["exit_code"], 1);
  const nlohmann::json& me = j["properties"][0];
  ASSERT_EQ(me["property"], "mutual_exclusion");
  ASSERT_GT(me["violations"].get<int>(), 0);
  ASSERT_LT(me["violations"].get<int>(), 40);
  const std::uint64_t first = me["first_violations"][0];
  EXPECT_NE(r.out.find("mutual_exclusion first broke at seed " + std::to_string(first) + ": fencesim run " +
                       f.string() + " --seed " + std::to_string(first) + "\n"),
            std::string::npos)
      << r.out;
  // Every run of the sweep is the run `fencesim run --seed N` makes: same
  // verdicts, same fingerprint; checked for the first violation and for
  // the seeds around it.
  for (std::uint64_t seed = std::max<std::uint64_t>(first, 2) - 1; seed <= first + 1; ++seed) {
    const Result one =
        run("run -q " + f.string() + " --seed " + std::to_string(seed) + " --out " + (dir_ / "r").string());
    const nlohmann::json& rec = j["runs"][seed - 1];
    ASSERT_EQ(rec["seed"], seed);
    EXPECT_EQ(one.code, rec["all_met"].get<bool>() ? 0 : 1) << seed;
    const nlohmann::json rep =
        nlohmann::json::parse(slurp(dir_ / "r" / ("short-pauses-seed" + std::to_string(seed)) / "report.json"));
    EXPECT_EQ(rep["run"]["fingerprint"], rec["fingerprint"]) << seed;
    for (const auto& v : rep["verdicts"]) EXPECT_EQ(rec["verdicts"][v["property"].get<std::string>()], v["status"]);
  }
  EXPECT_EQ(j["runs"][first - 1]["verdicts"]["mutual_exclusion"], "violated");
}

TEST_F(Command, SweepKeepModesWriteWhatTheySay) {
  const fs::path f = kShortPauses;
  const fs::path sweep = dir_ / "k" / "short-pauses-sweep";
  auto sweep_with = [&](const std::string& keep) {
    const Result r = run("sweep " + f.string() + " --seeds 1..12 --out " + (dir_ / "k").string() + keep);
    EXPECT_LE(r.code, 1) << r.err;
    return nlohmann::json::parse(slurp(sweep / "sweep.json"));
  };
  nlohmann::json j = sweep_with(" --keep all");
  std::set<std::string> all;
  for (int s = 1; s <= 12; ++s) all.insert("seed" + std::to_string(s));
  EXPECT_EQ(subfolders(sweep), all);
  EXPECT_EQ(j["kept"].size(), 12u);
  for (const char* file : {"report.json", "report.md", "timeline.html", "trace.jsonl"}) {
    EXPECT_TRUE(fs::exists(sweep / "seed7" / file)) << file;
  }

  j = sweep_with("");  // failing, the default: the runs that violated or missed something
  std::set<std::string> failing;
  for (const auto& run : j["runs"]) {
    bool failed = !run["unmet"].empty();
    for (const auto& [p, status] : run["verdicts"].items()) failed = failed || status == "violated";
    if (failed) failing.insert("seed" + std::to_string(run["seed"].get<int>()));
  }
  EXPECT_FALSE(failing.empty());
  EXPECT_LT(failing.size(), 12u);
  EXPECT_EQ(subfolders(sweep), failing);  // the old sweep's other folders are gone
  EXPECT_EQ(j["keep"], "failing");

  j = sweep_with(" --keep none");
  EXPECT_TRUE(subfolders(sweep).empty());
  EXPECT_TRUE(j["kept"].empty());
}

TEST_F(Command, SweepKeepsAtMostTwentyFailingRunsPerProperty) {
  const std::string file = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/nemesis-pauses.json";
  const Result r = run("sweep " + file + " --seeds 101..130 --out " + (dir_ / "k").string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> first20;
  for (int s = 101; s <= 120; ++s) first20.insert("seed" + std::to_string(s));
  EXPECT_EQ(subfolders(dir_ / "k" / "nemesis-pauses-sweep"), first20);
  EXPECT_NE(r.out.find("(20 run reports kept"), std::string::npos) << r.out;
}

TEST_F(Command, SweepRefusesBadArgumentsWithOneLineAndExitTwo) {
  const fs::path f = kShortPauses;
  const fs::path bad = write_file("bad.json", R"({"scenario": "x", "duration": "60"})");
  const std::string out = " --out " + (dir_ / "o").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"sweep " + f.string() + " --seeds 5..2", "--seeds 5..2: the first seed is greater than the last"},
      {"sweep " + f.string() + " --seeds a..b", "--seeds expects A..B"},
      {"sweep " + f.string() + " --seeds 1..", "--seeds expects A..B"},
      {"sweep " + f.string() + " --seeds 7", "--seeds expects A..B"},
      {"sweep " + f.string() + " --seeds 0..10000000", "10000001 seeds; a sweep runs at most 10000000"},
      {"sweep " + f.string() + " --seeds 1..5 --jobs 0", "--jobs expects a number of worker threads"},
      {"sweep " + f.string() + " --seeds 1..5 --jobs two", "--jobs expects a number of worker threads"},
      {"sweep " + f.string() + " --seeds 1..5 --keep bogus", "--keep expects none, failing or all, got \"bogus\""},
      {"sweep " + bad.string() + " --seeds 1..5", bad.string() + ": "},
      {"sweep " + (dir_ / "nope.json").string() + " --seeds 1..5", "nope.json"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args + out);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.rfind("fencesim: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  EXPECT_EQ(run("sweep " + f.string()).code, 2);  // --seeds is required
}

/// Random pauses against unfenced workers: seed 1 draws 44 pauses and
/// violates no_lost_update; seed 20 breaks nothing (tests/explore/shrink-nemesis.json).
const fs::path kShrinkNemesis = fs::path(FENCESIM_SOURCE_DIR) / "tests" / "explore" / "shrink-nemesis.json";

TEST_F(Command, ShrinkWritesASmallScenarioThatRunsToItsViolation) {
  const fs::path out = dir_ / "s";
  const Result r = run("shrink " + kShrinkNemesis.string() + " --seed 1 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const fs::path file = out / "shrink-nemesis-seed1-shrunk.json";
  EXPECT_NE(r.out.find("keeping no_lost_update violated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("44 faults (0 scripted, 44 drawn by the nemesis), the same run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  search: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  run it: fencesim run " + file.string() + "\n"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(j["scenario"], "shrink-nemesis-seed1-shrunk");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_FALSE(j.contains("nemesis"));
  EXPECT_EQ(j["expect"], nlohmann::json({{"no_lost_update", "violated"}}));
  ASSERT_TRUE(j.contains("faults"));
  EXPECT_LE(j["faults"].size(), 2u);
  EXPECT_NE(r.out.find("  faults:   44 -> " + std::to_string(j["faults"].size()) + "\n"), std::string::npos) << r.out;
  const std::string description = j["description"];
  EXPECT_NE(description.find("from shrink-nemesis.json (scenario shrink-nemesis) with seed 1"), std::string::npos);
  EXPECT_NE(description.find("44 faults (0 scripted, 44 drawn by the nemesis) -> "), std::string::npos);
  // What was kept: the failure's signature, in the file and the output.
  EXPECT_NE(description.find("keeping the failure's signature (no_lost_update violated after faults pause"),
            std::string::npos)
      << description;
  EXPECT_NE(r.out.find("  kept: no_lost_update violated after faults pause"), std::string::npos) << r.out;
  for (const char* f : {"report.json", "report.md", "timeline.html", "trace.jsonl"}) {
    EXPECT_TRUE(fs::exists(out / "shrink-nemesis-seed1-shrunk" / f)) << f;
  }
  // Its expectation, the violation, is met: `fencesim run` of it exits 0,
  // with the report shrink wrote.
  const Result again = run("run -q " + file.string() + " --out " + (dir_ / "r").string());
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_EQ(slurp(dir_ / "r" / "shrink-nemesis-seed1-shrunk" / "report.json"),
            slurp(out / "shrink-nemesis-seed1-shrunk" / "report.json"));
  EXPECT_EQ(run("validate " + file.string()).code, 0);
  // Nothing but the files themselves is left (written through temporary names).
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"shrink-nemesis-seed1-shrunk", "shrink-nemesis-seed1-shrunk.json"}));
}

TEST_F(Command, TwoShrinksOfTheSameFileSeedAndPropertyWriteByteIdenticalFiles) {
  // The second copy of the file sits in another folder: only its name and
  // content reach the result.
  fs::create_directories(dir_ / "copy");
  fs::copy_file(kShrinkNemesis, dir_ / "copy" / "shrink-nemesis.json");
  const Result a =
      run("shrink " + kShrinkNemesis.string() + " --seed 8 --property no_lost_update --out " + (dir_ / "a").string());
  const Result b = run("shrink " + (dir_ / "copy" / "shrink-nemesis.json").string() +
                       " --seed 8 --property no_lost_update --out " + (dir_ / "b").string());
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  for (const std::string f : {"shrink-nemesis-seed8-shrunk.json", "shrink-nemesis-seed8-shrunk/report.json",
                              "shrink-nemesis-seed8-shrunk/report.md", "shrink-nemesis-seed8-shrunk/trace.jsonl",
                              "shrink-nemesis-seed8-shrunk/timeline.html"}) {
    EXPECT_EQ(slurp(dir_ / "a" / f), slurp(dir_ / "b" / f)) << f;
    EXPECT_FALSE(slurp(dir_ / "a" / f).empty()) << f;
  }
}

TEST_F(Command, ShrinkStopsAtMaxRunsWithAFileThatStillFails) {
  const Result r = run("shrink " + kShrinkNemesis.string() + " --seed 8 --max-runs 4 --out " + (dir_ / "m").string());
  ASSERT_EQ(r.code, 0) << r.err;
  // (Shortening the run first skips candidates that leave no settle time
  // after the last fault: they are counted apart, not as runs.)
  EXPECT_NE(r.out.find("search: 4 runs (and "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; stopped at --max-runs 4"), std::string::npos) << r.out;
  const Result again =
      run("run -q " + (dir_ / "m" / "shrink-nemesis-seed8-shrunk.json").string() + " --out " + (dir_ / "r").string());
  EXPECT_EQ(again.code, 0) << again.out << again.err;
}

TEST_F(Command, ShrinkExitCodesForNothingToShrinkAndBadInput) {
  const std::string f = kShrinkNemesis.string();
  const fs::path bad = write_file("bad.json", R"({"scenario": "x", "duration": "60"})");
  const std::string out = " --out " + (dir_ / "o").string();
  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"shrink " + f + " --seed 20", 1, f + ": seed 20 breaks no property; nothing to shrink"},
      {"shrink " + f + " --seed 1 --property progress", 1,
       f + ": seed 1 does not break progress (it holds); nothing to shrink"},
      {"shrink " + f + " --seed 1 --property no_lost_updat", 2,
       "unknown property \"no_lost_updat\" (did you mean \"no_lost_update\"?"},
      {"shrink " + f + " --seed 1 --property raft_safety", 2, "raft_safety does not apply to this design"},
      {"shrink " + f + " --seed one", 2, "--seed expects a decimal integer"},
      {"shrink " + f + " --seed 1 --max-runs 0", 2, "--max-runs expects a number of runs from 1 to 1000000"},
      {"shrink " + bad.string() + " --seed 1", 2, bad.string() + ": "},
      {"shrink " + (dir_ / "nope.json").string() + " --seed 1", 2, "nope.json"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args + out);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_EQ(r.err.rfind("fencesim: ", 0), 0u) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  EXPECT_EQ(run("shrink " + f).code, 2);  // --seed is required
}

TEST_F(Command, SweepPrintsTheShrinkCommandBesideTheReproduceCommand) {
  // A file name with a space: both commands quote it for the shell.
  const fs::path f = dir_ / "my pauses.json";
  fs::copy_file(kShrinkNemesis, f);
  const Result r = run("sweep '" + f.string() + "' --seeds 1..3 --keep none --out " + (dir_ / "s").string());
  ASSERT_EQ(r.code, 1) << r.err;
  const std::string q = "'" + f.string() + "'";
  EXPECT_NE(r.out.find("  no_lost_update first broke at seed 1: fencesim run " + q +
                       " --seed 1\n    shrink it to the smallest scenario that still breaks it: fencesim shrink " + q +
                       " --seed 1 --property no_lost_update\n"),
            std::string::npos)
      << r.out;
  const std::string md = slurp(dir_ / "s" / "shrink-nemesis-sweep" / "summary.md");
  EXPECT_NE(md.find("  - shrink it to the smallest scenario that still breaks it: `fencesim shrink 'my pauses.json' "
                    "--seed 1 --property no_lost_update`\n"),
            std::string::npos)
      << md;
}

// --- fencesim sweep --shard, fencesim merge ------------------------------------

TEST_F(Command, SweepRefusesBadShardsWithOneLineAndExitTwo) {
  const std::string f = kShortPauses.string();
  // The batch engines' variables are unset for the command, whatever the machine running the test has.
  const std::string clean =
      "env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID -u PARALLEL_SEQ -u FENCESIM_SHARD_COUNT ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"sweep " + f + " --seeds 1..5 --shard 0/2", "--shard 0/2: I/N needs 1 <= I <= N (shards are numbered from 1)"},
      {"sweep " + f + " --seeds 1..5 --shard 3/2", "--shard 3/2: I/N needs 1 <= I <= N (shards are numbered from 1)"},
      {"sweep " + f + " --seeds 1..5 --shard 1/6",
       "--shard 1/6: 6 shards for 5 seeds (1..5); every shard needs at least one seed"},
      {"sweep " + f + " --seeds 1..5 --shard two", "--shard expects I/N (shard I of N, e.g. 2/4) or auto, got \"two\""},
      {"sweep " + f + " --seeds 1..5 --shard 1/0", "--shard 1/0: I/N needs 1 <= I <= N (shards are numbered from 1)"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args + " --out " + (dir_ / "o").string());
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "fencesim: " + message + "\n") << args;
  }
  const std::string bin = kBin;
  auto with_env = [&](const std::string& env, const std::string& args) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const int status =
        std::system((clean + env + " " + bin + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
    return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  };
  Result r = with_env("", "sweep " + f + " --seeds 1..5 --shard auto");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "fencesim: --shard auto: none of JOB_COMPLETION_INDEX (Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (Slurm "
            "job array) or PARALLEL_SEQ (GNU parallel) is set; give the shard as --shard I/N\n");
  r = with_env("JOB_COMPLETION_INDEX=1", "sweep " + f + " --seeds 1..5 --shard auto");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("JOB_COMPLETION_INDEX is set but FENCESIM_SHARD_COUNT is not"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  // A Slurm array numbered from 3 (--array=3-4): task 4 is shard 2 of 2.
  r = with_env("SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_COUNT=2",
               "sweep " + f + " --seeds 1..6 --keep none --shard auto --out " + (dir_ / "s").string());
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("sweep short-pauses: shard 2 of 2: seeds 4..6 (3 runs) of 1..6"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "s" / "short-pauses-sweep-shard-2-of-2" / "sweep.json"));
}

TEST_F(Command, MergeOfTheShardsWritesAndPrintsWhatTheSweepDoesAndExitsAlike) {
  const std::string f = kShortPauses.string();
  const Result full = run("sweep " + f + " --seeds 1..40 --out " + (dir_ / "full").string());
  ASSERT_EQ(full.code, 1) << full.err;  // seeds 6 and 34 break mutual_exclusion, expected to hold
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    const Result r = run("sweep " + f + " --seeds 1..40 --shard " + shard + " --out " + (dir_ / "sh").string());
    ASSERT_LE(r.code, 1) << r.err;
  }
  const fs::path sh = dir_ / "sh";
  const std::string files = (sh / "short-pauses-sweep-shard-3-of-3" / "sweep.json").string() + " " +
                            (sh / "short-pauses-sweep-shard-1-of-3" / "sweep.json").string() + " " +
                            (sh / "short-pauses-sweep-shard-2-of-3" / "sweep.json").string();
  const Result m = run("merge " + files + " --out " + (dir_ / "m").string());
  EXPECT_EQ(m.code, 1) << m.err;
  EXPECT_EQ(m.err, "");
  const fs::path a = dir_ / "full" / "short-pauses-sweep", b = dir_ / "m" / "short-pauses-sweep";
  EXPECT_EQ(slurp(b / "sweep.json"), slurp(a / "sweep.json"));
  EXPECT_EQ(slurp(b / "summary.md"), slurp(a / "summary.md"));
  EXPECT_EQ(subfolders(b), subfolders(a));
  // The same table; the reproduce lines name the file by its name (the merge has no path for it).
  const std::string table = full.out.substr(0, full.out.find("  mutual_exclusion first broke"));
  EXPECT_EQ(m.out.find(table), 0u) << m.out;
  EXPECT_NE(m.out.find("mutual_exclusion first broke at seed 6: fencesim run short-pauses.json --seed 6"),
            std::string::npos)
      << m.out;
  EXPECT_NE(m.out.find("merged 3 shards"), std::string::npos) << m.out;
}

TEST_F(Command, MergeRefusesBadInputWithOneLineAndExitTwo) {
  const std::string f = kShortPauses.string();
  for (const char* shard : {"1/2", "2/2"}) {
    ASSERT_LE(
        run("sweep " + f + " --seeds 1..6 --keep none --shard " + shard + " --out " + (dir_ / "sh").string()).code, 1);
  }
  const std::string one = (dir_ / "sh" / "short-pauses-sweep-shard-1-of-2" / "sweep.json").string();
  const std::string two = (dir_ / "sh" / "short-pauses-sweep-shard-2-of-2" / "sweep.json").string();
  const fs::path truncated = write_file("truncated.json", slurp(one).substr(0, 300));
  const fs::path other = write_file("other.json", R"({"scenario": "x", "duration": "60s"})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"merge " + one, "missing 1 of the 2 shards of short-pauses seeds 1..6: 2/2 (seeds 4..6)"},
      {"merge " + one + " " + one + " " + two, one + " and " + one + " are both shard 1/2 (overlapping shards"},
      {"merge " + one + " " + truncated.string(), truncated.string() + ": not valid JSON (parse error at line"},
      {"merge " + other.string(), other.string() + ": expected a sweep.json object (no sweep_version)"},
      {"merge " + (dir_ / "nope.json").string(), "nope.json: no such file"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args + " --out " + (dir_ / "m").string());
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.find("fencesim: merge: "), 0u) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "m"));
  EXPECT_EQ(run("merge").code, 2);  // the files are required
  EXPECT_EQ(run("merge " + one + " " + two + " --out ''").code, 2);
}

TEST_F(Command, AnOutThatCannotBeAFolderIsRefusedBeforeAnythingRuns) {
  const fs::path file = dir_ / "afile";
  std::ofstream(file) << "x";
  const std::string f = kShortPauses.string();
  for (const std::string& args :
       {"sweep " + f + " --seeds 1..20 --out " + file.string(), "shrink " + f + " --seed 1 --out " + file.string(),
        "run " + f + " --out " + (file / "below").string()}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find("fencesim: --out \""), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file.string() + "\""), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << args;  // nothing ran
  }
}

// The text timeline `fencesim run` prints: for a broken property, the lines
// around its first counterexample, not the start of the run.
const char* kLatePause = R"({
  "scenario": "late",
  "duration": "90s",
  "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
  "resource": {"kind": "fenced", "check": "strict", "initial": 0},
  "clients": [
    {"name": "A", "workload": {"kind": "counter", "work": "500ms", "iterations": 20, "think": "1s"}},
    {"name": "B", "start": "2s", "workload": {"kind": "counter", "work": "500ms", "iterations": 20, "think": "1s"}}
  ],
  "faults": [PAUSE]
})";

/// The text timeline of `fencesim run`'s output: its header line and the
/// lines after it, up to the report line.
struct PrintedTimeline {
  std::string header;
  std::vector<std::string> lines;
};

PrintedTimeline printed_timeline(const std::string& out) {
  PrintedTimeline t;
  std::istringstream in(out);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("  timeline (true time)", 0) == 0) {
      t.header = line;
      inside = true;
    } else if (inside && line.rfind("  every line: ", 0) == 0) {
      t.header += "\n" + line;
    } else if (inside) {
      if (line.empty() || line.rfind("  report: ", 0) == 0) break;
      t.lines.push_back(line);
    }
  }
  return t;
}

bool is_marker(const std::string& line) { return line.rfind("  ──── ", 0) == 0; }
bool is_elision(const std::string& line) { return line.rfind("    … ", 0) == 0; }
/// The seconds of an event line ("  10.060000s  A  grant ...") or a marker.
double seconds_of(const std::string& line) {
  const std::string rest = is_marker(line) ? line.substr(std::string("  ──── ").size()) : line;
  return std::stod(rest.substr(rest.find_first_not_of(' ')));
}

// A CROSSSLOT run grants nothing; its timeline lists each refused acquire
// (as timeline.html draws them), not "all 0 lines".
TEST_F(Command, TheTerminalTimelineListsRefusedAcquires) {
  const std::string f = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/redis-cluster-crossslot.json";
  const Result r = run("run --no-color --full-timeline " + f + " --out " + (dir_ / "cs").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const PrintedTimeline t = printed_timeline(r.out);
  std::vector<std::string> refused;
  for (const std::string& l : t.lines) {
    if (l.find(" acquire failed ") != std::string::npos) refused.push_back(l);
  }
  ASSERT_EQ(refused.size(), 6u) << r.out;  // A and B, 3 iterations each
  EXPECT_EQ(t.header, "  timeline (true time): all 6 lines") << r.out;
  EXPECT_NE(refused[0].find("A"), std::string::npos) << refused[0];
  EXPECT_NE(refused[0].find("iteration 0: CROSSSLOT Keys in request don't hash to the same slot"), std::string::npos)
      << refused[0];
  EXPECT_NEAR(seconds_of(refused[0]), 0.002, 1e-6) << refused[0];
}

TEST_F(Command, RunPrintsTheTimelineLinesAroundTheFirstCounterexample) {
  std::string text = kLatePause;
  text.replace(text.find("PAUSE"), 5, R"({"at": "20s", "kind": "pause", "target": "A", "duration": "12s"})");
  const fs::path f = write_file("late.json", text);
  const Result full = run("run " + f.string() + " --out " + (dir_ / "full").string() + " --full-timeline");
  const Result window = run("run " + f.string() + " --out " + (dir_ / "window").string());
  ASSERT_EQ(full.code, 0) << full.out << full.err;
  ASSERT_EQ(window.code, 0) << window.out << window.err;
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "window" / "late" / "report.json"));
  std::vector<std::string> broken;
  double at = -1;
  for (const auto& v : report["verdicts"]) {
    if (v["status"] != "violated") continue;
    broken.push_back(v["property"].get<std::string>());
    at = v["first_violation"]["ns"].get<double>() / 1e9;
  }
  // One broken property (the fenced store refuses the late write), late in the run.
  ASSERT_EQ(broken, std::vector<std::string>{"mutual_exclusion"}) << window.out;
  ASSERT_GT(at, 20.0);

  const PrintedTimeline all = printed_timeline(full.out);
  const std::size_t events = static_cast<std::size_t>(
      std::count_if(all.lines.begin(), all.lines.end(), [](const std::string& l) { return !is_marker(l); }));
  EXPECT_EQ(all.header, "  timeline (true time): all " + std::to_string(events) + " lines");  // no hint
  ASSERT_GT(events, 40u);  // more than the old first-40 would have shown
  const auto mark = std::find_if(all.lines.begin(), all.lines.end(), is_marker);
  ASSERT_NE(mark, all.lines.end()) << full.out;
  EXPECT_NEAR(seconds_of(*mark), at, 1e-6) << *mark;
  EXPECT_NE(mark->find("first counterexample of mutual_exclusion"), std::string::npos) << *mark;
  // The marker stands before the first line at or after its instant.
  ASSERT_NE(mark, all.lines.begin());
  EXPECT_LT(seconds_of(*(mark - 1)), at);
  ASSERT_NE(mark + 1, all.lines.end());
  EXPECT_GE(seconds_of(*(mark + 1)), at);
  const std::size_t m = static_cast<std::size_t>(mark - all.lines.begin());  // events before the marker
  ASSERT_GE(m, 10u);  // elisions of 2 lines or more on both sides
  ASSERT_GE(all.lines.size() - m - 1, 8u);

  // The window: exactly the 8 lines before the instant, the marker and the
  // 6 lines from it on, between two elisions that count the rest.
  const PrintedTimeline w = printed_timeline(window.out);
  const std::string range = std::to_string(m - 8 + 1) + "–" + std::to_string(m + 6);
  EXPECT_EQ(w.header.rfind("  timeline (true time): lines " + range + " of " + std::to_string(events) +
                               ", around the first counterexample of mutual_exclusion (",
                           0),
            0u)
      << w.header;
  EXPECT_NE(w.header.find("--full-timeline"), std::string::npos) << w.header;
  EXPECT_NE(w.header.find("timeline.html"), std::string::npos) << w.header;
  std::vector<std::string> expected;
  expected.push_back("    … " + std::to_string(m - 8) + " lines");
  expected.insert(expected.end(), all.lines.begin() + static_cast<std::ptrdiff_t>(m - 8),
                  all.lines.begin() + static_cast<std::ptrdiff_t>(m + 1 + 6));
  expected.push_back("    … " + std::to_string(events - m - 6) + " more lines");
  EXPECT_EQ(w.lines, expected) << window.out;
  // The start of the run is not printed.
  EXPECT_EQ(std::find(w.lines.begin(), w.lines.end(), all.lines.front()), w.lines.end());
}

TEST_F(Command, RunWithoutABrokenPropertyPrintsTheFirstFortyLinesAndSaysSo) {
  std::string text = kLatePause;
  text.replace(text.find("PAUSE"), 5, "");
  const fs::path f = write_file("calm.json", text);
  const Result full = run("run " + f.string() + " --out " + (dir_ / "full").string() + " --full-timeline");
  const Result first = run("run " + f.string() + " --out " + (dir_ / "first").string());
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  const PrintedTimeline all = printed_timeline(full.out);
  ASSERT_GT(all.lines.size(), 40u);
  EXPECT_EQ(std::find_if(all.lines.begin(), all.lines.end(), is_marker), all.lines.end());
  const PrintedTimeline w = printed_timeline(first.out);
  EXPECT_EQ(w.header.rfind("  timeline (true time): the first 40 of " + std::to_string(all.lines.size()) +
                               " lines (no property broke)\n  every line: run again with --full-timeline",
                           0),
            0u)
      << w.header;
  std::vector<std::string> expected(all.lines.begin(), all.lines.begin() + 40);
  expected.push_back("    … " + std::to_string(all.lines.size() - 40) + " more lines");
  EXPECT_EQ(w.lines, expected);
}

TEST_F(Command, RunMergesTheWindowsOfCounterexamplesThatAreClose) {
  // The worked example without fencing: three properties break within 2.2 s.
  std::string text = kWorked;
  const std::string fenced = "\"kind\": \"fenced\", \"check\": \"strict\"";
  text.replace(text.find(fenced), fenced.size(), "\"kind\": \"unfenced\"");
  const std::size_t expect = text.find(",\n  \"expect\"");
  text.replace(expect, text.rfind("\n}") - expect, "");
  const fs::path f = write_file("unfenced.json", text);
  const Result full = run("run " + f.string() + " --out " + (dir_ / "full").string() + " --full-timeline");
  const Result window = run("run " + f.string() + " --out " + (dir_ / "window").string());
  ASSERT_EQ(window.code, 0) << window.out << window.err;
  const PrintedTimeline all = printed_timeline(full.out);
  const PrintedTimeline w = printed_timeline(window.out);
  EXPECT_NE(w.header.find("mutual_exclusion ("), std::string::npos) << w.header;
  EXPECT_NE(w.header.find("no_stale_write"), std::string::npos) << w.header;
  EXPECT_NE(w.header.find("no_lost_update"), std::string::npos) << w.header;
  // One window: no elision between markers, and every marker of the full
  // timeline is in it, in the same order.
  std::vector<std::string> full_marks, window_marks;
  for (const std::string& l : all.lines) {
    if (is_marker(l)) full_marks.push_back(l);
  }
  for (const std::string& l : w.lines) {
    if (is_marker(l)) window_marks.push_back(l);
  }
  const auto first_mark = std::find_if(w.lines.begin(), w.lines.end(), is_marker);
  const auto last_mark = std::find_if(w.lines.rbegin(), w.lines.rend(), is_marker).base();
  EXPECT_EQ(std::find_if(first_mark, last_mark, is_elision), last_mark) << window.out;
  EXPECT_GE(full_marks.size(), 2u) << full.out;
  EXPECT_EQ(window_marks, full_marks) << window.out;
}

}  // namespace
