// Sweeps across machines (include/fencesim/sweep.hpp "Shards",
// include/fencesim/sweep_merge.hpp): the shard rule covers every seed once,
// `--shard auto` reads the batch engines' variables, the merge of the shards
// is the unsharded sweep byte for byte, and every refusal says what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fencesim/sweep.hpp"
#include "fencesim/sweep_merge.hpp"

namespace {

namespace fs = std::filesystem;
using fencesim::Keep;
using fencesim::SeedRange;
using fencesim::Shard;
using fencesim::SweepOptions;
using fencesim::SweepResult;

fencesim::Scenario load(const std::string& path) {
  const fencesim::LoadResult r = fencesim::load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/" + path);
  if (!r.ok()) throw std::runtime_error(r.error->to_string());
  return *r.scenario;
}

/// mutual_exclusion (expected to hold) breaks in seeds 6 and 34 of 1..40.
fencesim::Scenario short_pauses() { return load("tests/explore/short-pauses.json"); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ShardRule, ParseAcceptsIOfNAndRefusesEverythingElseWithOneLine) {
  std::string error;
  EXPECT_EQ(fencesim::parse_shard("1/1", error), (Shard{1, 1}));
  EXPECT_EQ(fencesim::parse_shard("3/4", error), (Shard{3, 4}));
  EXPECT_EQ(fencesim::parse_shard("10000000/10000000", error), (Shard{10'000'000, 10'000'000}));
  for (const char* bad : {"0/4", "5/4", "1/0", "0/0", "a/b", "1/", "/2", "1-2", "", "2", "1/2/3", "-1/2", "1/+2",
                          "1/10000001", "auto", "1 / 2"}) {
    error.clear();
    EXPECT_FALSE(fencesim::parse_shard(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  fencesim::parse_shard("5/4", error);
  EXPECT_EQ(error, "--shard 5/4: I/N needs 1 <= I <= N (shards are numbered from 1)");
}

TEST(ShardRule, TheShardsCoverEverySeedExactlyOnceInContiguousBlocksOfEqualSize) {
  for (const SeedRange all : {SeedRange{1, 1}, SeedRange{0, 1}, SeedRange{5, 11}, SeedRange{1, 50}, SeedRange{7, 107},
                              SeedRange{1, 1000}, SeedRange{UINT64_MAX - 99, UINT64_MAX}}) {
    for (std::uint64_t n = 1; n <= std::min<std::uint64_t>(all.count(), 13); ++n) {
      std::map<std::uint64_t, int> seen;
      std::uint64_t next = all.first, smallest = UINT64_MAX, largest = 0;
      for (std::uint64_t i = 1; i <= n; ++i) {
        const SeedRange own = fencesim::shard_seeds(all, Shard{i, n});
        EXPECT_EQ(own.first, next) << i << "/" << n;  // in order, no gap
        for (std::uint64_t s = own.first;; ++s) {
          ++seen[s];
          if (s == own.last) break;
        }
        next = own.last + 1;
        smallest = std::min(smallest, own.count());
        largest = std::max(largest, own.count());
      }
      EXPECT_EQ(seen.size(), all.count()) << n;
      for (const auto& [seed, times] : seen) EXPECT_EQ(times, 1) << seed;
      EXPECT_LE(largest - smallest, 1u) << n;
    }
  }
  EXPECT_EQ(fencesim::shard_seeds({1, 10}, Shard{1, 1}), (SeedRange{1, 10}));
  EXPECT_EQ(fencesim::shard_seeds({1, 10}, Shard{2, 3}), (SeedRange{4, 6}));
  std::string error;
  EXPECT_TRUE(fencesim::check_shard(Shard{10, 10}, {1, 10}, error));
  EXPECT_FALSE(fencesim::check_shard(Shard{1, 11}, {1, 10}, error));
  EXPECT_EQ(error, "--shard 1/11: 11 shards for 10 seeds (1..10); every shard needs at least one seed");
}

TEST(ShardRule, EachShardChecksTheSweepsCheckSeedsThatAreItsOwnAndAtLeastOne) {
  const SeedRange all{1, 400};
  EXPECT_EQ(fencesim::shard_check_seeds(all, Shard{1, 1}, 50), fencesim::check_seeds(all, 50));
  for (std::uint64_t n : {2u, 3u, 8u, 9u, 200u}) {
    std::set<std::uint64_t> checked;
    for (std::uint64_t i = 1; i <= n; ++i) {
      const SeedRange own = fencesim::shard_seeds(all, Shard{i, n});
      const std::vector<std::uint64_t> mine = fencesim::shard_check_seeds(all, Shard{i, n}, 50);
      ASSERT_FALSE(mine.empty());
      for (std::uint64_t s : mine) {
        EXPECT_GE(s, own.first);
        EXPECT_LE(s, own.last);
        checked.insert(s);
      }
    }
    for (std::uint64_t s : fencesim::check_seeds(all, 50)) EXPECT_TRUE(checked.contains(s)) << s << " of " << n;
  }
  // 8 shards of 50 seeds: each holds exactly one of the sweep's check seeds.
  EXPECT_EQ(fencesim::shard_check_seeds(all, Shard{3, 8}, 50), (std::vector<std::uint64_t>{101}));
  // 200 shards of 2: a shard without one checks its first seed.
  EXPECT_EQ(fencesim::shard_check_seeds(all, Shard{2, 200}, 50), (std::vector<std::uint64_t>{3}));
}

// --- --shard auto -------------------------------------------------------------

std::optional<Shard> from_env(const std::map<std::string, std::string>& vars, std::string& error) {
  return fencesim::shard_from_environment(
      [&](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      error);
}

TEST(ShardAuto, ReadsKubernetesSlurmAndGnuParallel) {
  std::string error;
  // Kubernetes Indexed Job: 0-based index, the count from FENCESIM_SHARD_COUNT.
  EXPECT_EQ(from_env({{"JOB_COMPLETION_INDEX", "0"}, {"FENCESIM_SHARD_COUNT", "4"}}, error), (Shard{1, 4}));
  EXPECT_EQ(from_env({{"JOB_COMPLETION_INDEX", "3"}, {"FENCESIM_SHARD_COUNT", "4"}}, error), (Shard{4, 4}));
  // Slurm: ids from SLURM_ARRAY_TASK_MIN, with or without a step.
  EXPECT_EQ(
      from_env({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, error),
      (Shard{1, 8}));
  EXPECT_EQ(
      from_env({{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, error),
      (Shard{8, 8}));
  EXPECT_EQ(from_env({{"SLURM_ARRAY_TASK_ID", "14"},
                      {"SLURM_ARRAY_TASK_MIN", "10"},
                      {"SLURM_ARRAY_TASK_STEP", "2"},
                      {"SLURM_ARRAY_TASK_COUNT", "8"}},
                     error),
            (Shard{3, 8}));
  EXPECT_EQ(from_env({{"SLURM_ARRAY_TASK_ID", "2"},
                      {"SLURM_ARRAY_TASK_MIN", "1"},
                      {"SLURM_ARRAY_TASK_COUNT", "3"},
                      {"FENCESIM_SHARD_COUNT", "3"}},
                     error),
            (Shard{2, 3}));
  // GNU parallel: PARALLEL_SEQ counts from 1.
  EXPECT_EQ(from_env({{"PARALLEL_SEQ", "2"}, {"FENCESIM_SHARD_COUNT", "2"}}, error), (Shard{2, 2}));
}

TEST(ShardAuto, RefusesWithOneLineNamingTheVariables) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{},
       "none of JOB_COMPLETION_INDEX (Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (Slurm job array) or "
       "PARALLEL_SEQ (GNU parallel) is set; give the shard as --shard I/N"},
      {{{"JOB_COMPLETION_INDEX", "1"}}, "JOB_COMPLETION_INDEX is set but FENCESIM_SHARD_COUNT is not"},
      {{{"PARALLEL_SEQ", "1"}}, "PARALLEL_SEQ is set but FENCESIM_SHARD_COUNT is not"},
      {{{"PARALLEL_SEQ", "0"}, {"FENCESIM_SHARD_COUNT", "2"}}, "PARALLEL_SEQ is 0"},
      {{{"JOB_COMPLETION_INDEX", "4"}, {"FENCESIM_SHARD_COUNT", "4"}}, "gives shard 5 of 4"},
      {{{"JOB_COMPLETION_INDEX", "x"}, {"FENCESIM_SHARD_COUNT", "4"}}, "JOB_COMPLETION_INDEX is \"x\", not a"},
      {{{"JOB_COMPLETION_INDEX", "0"}, {"FENCESIM_SHARD_COUNT", "four"}}, "FENCESIM_SHARD_COUNT is \"four\""},
      {{{"JOB_COMPLETION_INDEX", "0"}, {"FENCESIM_SHARD_COUNT", "0"}}, "gives shard 1 of 0"},
      {{{"JOB_COMPLETION_INDEX", "0"}, {"PARALLEL_SEQ", "1"}, {"FENCESIM_SHARD_COUNT", "2"}},
       "more than one of JOB_COMPLETION_INDEX PARALLEL_SEQ is set"},
      {{{"SLURM_ARRAY_TASK_ID", "3"}}, "SLURM_ARRAY_TASK_COUNT is not"},
      {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, "SLURM_ARRAY_TASK_MIN is not"},
      {{{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}},
       "gives shard 7 of 3"},  // --array=1,3,7: not evenly spaced
      {{{"SLURM_ARRAY_TASK_ID", "4"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_STEP", "2"},
        {"SLURM_ARRAY_TASK_COUNT", "4"}},
       "SLURM_ARRAY_TASK_ID=4 is not SLURM_ARRAY_TASK_MIN=1 plus a multiple of SLURM_ARRAY_TASK_STEP=2"},
      {{{"SLURM_ARRAY_TASK_ID", "1"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_COUNT", "4"},
        {"FENCESIM_SHARD_COUNT", "3"}},
       "FENCESIM_SHARD_COUNT=3 but SLURM_ARRAY_TASK_COUNT=4"},
      {{{"SLURM_ARRAY_TASK_ID", "1"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_STEP", "0"},
        {"SLURM_ARRAY_TASK_COUNT", "4"}},
       "SLURM_ARRAY_TASK_STEP=0; Slurm's step is at least 1"},
  };
  for (const auto& [vars, message] : cases) {
    std::string error;
    EXPECT_FALSE(from_env(vars, error)) << message;
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(error.find("--shard auto: "), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

// --- merge --------------------------------------------------------------------

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fencesim-merge-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs the sweep (or one shard of it) into dir_/<name>/, writes its
  /// sweep.json and summary.md there, returns the sweep.json's path.
  std::string sweep(const fencesim::Scenario& s, SweepOptions opt, const std::string& name) {
    opt.report_dir = (dir_ / name).string();
    opt.source = "short-pauses.json";
    const SweepResult r = fencesim::run_sweep(s, opt);
    EXPECT_FALSE(r.error) << r.error->message;
    EXPECT_FALSE(r.mismatch);
    std::string error;
    EXPECT_TRUE(fencesim::write_sweep_files(opt.report_dir, r, error)) << error;
    return (dir_ / name / "sweep.json").string();
  }

  /// Every shard of `opt` as a file.
  std::vector<std::string> shards(const fencesim::Scenario& s, SweepOptions opt, std::uint64_t n,
                                  const std::string& prefix = "shard") {
    std::vector<std::string> out;
    for (std::uint64_t i = 1; i <= n; ++i) {
      opt.shard = Shard{i, n};
      out.push_back(sweep(s, opt, prefix + std::to_string(i)));
    }
    return out;
  }

  static std::vector<fencesim::SweepFile> read(const std::vector<std::string>& paths) {
    std::vector<fencesim::SweepFile> out;
    for (const std::string& p : paths) {
      std::string error;
      std::optional<fencesim::SweepFile> f = fencesim::read_sweep_file(p, error);
      EXPECT_TRUE(f) << error;
      if (f) out.push_back(std::move(*f));
    }
    return out;
  }

  /// merge_sweeps' error for `paths` ("" when it merges).
  static std::string merge_error(const std::vector<std::string>& paths) {
    std::string error;
    const std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(read(paths), error);
    EXPECT_EQ(m.has_value(), error.empty());
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    return error;
  }

  static std::set<std::string> subfolders(const fs::path& d) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) {
      if (e.is_directory()) out.insert(e.path().filename().string());
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(Merge, TheMergedShardsAreTheUnshardedSweepByteForByte) {
  const fencesim::Scenario s = short_pauses();
  SweepOptions opt;
  opt.seeds = {1, 40};
  opt.jobs = 2;
  opt.keep_per_property = 2;  // fewer than a shard's failures: the merge keeps a subset of the shards' folders
  const std::string full = sweep(s, opt, "full");
  for (std::uint64_t n : {1u, 2u, 3u, 7u, 40u}) {
    const std::vector<std::string> files = shards(s, opt, n, "n" + std::to_string(n) + "-");
    std::vector<fencesim::SweepFile> read_back = read(files);
    std::reverse(read_back.begin(), read_back.end());  // any order
    std::string error;
    std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(read_back, error);
    ASSERT_TRUE(m) << error;
    EXPECT_EQ(m->shards, n);
    const fs::path out = dir_ / ("merged" + std::to_string(n));
    std::vector<std::string> notes;
    ASSERT_TRUE(fencesim::copy_kept_reports(*m, out.string(), notes, error)) << error;
    EXPECT_TRUE(notes.empty());
    ASSERT_TRUE(fencesim::write_sweep_files(out.string(), m->sweep, error)) << error;
    EXPECT_EQ(slurp(out / "sweep.json"), slurp(full)) << n << " shards";
    EXPECT_EQ(slurp(out / "summary.md"), slurp(dir_ / "full" / "summary.md")) << n << " shards";
    EXPECT_EQ(fencesim::render_sweep_summary(m->sweep, "F"),
              fencesim::render_sweep_summary(read({full}).front().sweep, "F"));
    EXPECT_EQ(subfolders(out), subfolders(dir_ / "full")) << n << " shards";
    for (const std::string& seed : subfolders(out)) {
      EXPECT_EQ(slurp(out / seed / "report.json"), slurp(dir_ / "full" / seed / "report.json")) << seed;
    }
    EXPECT_FALSE(m->sweep.all_met);  // seeds 6 and 34 break mutual_exclusion, expected to hold
  }
}

TEST_F(Merge, EveryKeepModeMergesToTheUnshardedSweep) {
  const fencesim::Scenario s = short_pauses();
  for (Keep keep : {Keep::kNone, Keep::kAll}) {
    SweepOptions opt;
    opt.seeds = {3, 14};
    opt.keep = keep;
    const std::string name = to_string(keep);
    const std::string full = sweep(s, opt, name + "-full");
    std::string error;
    std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(read(shards(s, opt, 3, name + "-")), error);
    ASSERT_TRUE(m) << error;
    const fs::path out = dir_ / (name + "-merged");
    std::vector<std::string> notes;
    ASSERT_TRUE(fencesim::copy_kept_reports(*m, out.string(), notes, error)) << error;
    ASSERT_TRUE(fencesim::write_sweep_files(out.string(), m->sweep, error)) << error;
    EXPECT_EQ(slurp(out / "sweep.json"), slurp(full)) << name;
    EXPECT_EQ(slurp(out / "summary.md"), slurp(dir_ / (name + "-full") / "summary.md")) << name;
    EXPECT_EQ(subfolders(out), subfolders(dir_ / (name + "-full"))) << name;
    EXPECT_EQ(subfolders(out).size(), keep == Keep::kAll ? 12u : 0u) << name;
  }
}

TEST_F(Merge, AShardsFileRecordsItsShardAndTheWholeRange) {
  SweepOptions opt;
  opt.seeds = {1, 40};
  opt.shard = Shard{2, 3};
  const std::string f = sweep(short_pauses(), opt, "s");
  const std::string text = slurp(f);
  EXPECT_NE(text.find("\"seeds\": {\"first\": 1, \"last\": 40, \"count\": 40},\n"
                      "  \"shard\": {\"index\": 2, \"count\": 3, \"seeds\": {\"first\": 14, \"last\": 26, \"count\": "
                      "13}},\n"),
            std::string::npos)
      << text.substr(0, 400);
  const std::vector<fencesim::SweepFile> r = read({f});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].sweep.runs.size(), 13u);
  EXPECT_EQ(r[0].sweep.runs.front().seed, 14u);
  EXPECT_EQ(r[0].sweep.checked_seeds, (std::vector<std::uint64_t>{14}));  // no check seed (1, 51, …) in 14..26
  EXPECT_NE(slurp(dir_ / "s" / "summary.md").find("shard 2 of 3: seeds 14 to 26 (13 runs) of 1 to 40"),
            std::string::npos);
}

TEST_F(Merge, RefusesShardsOfDifferentSweepsNamingBothFiles) {
  const fencesim::Scenario s = short_pauses();
  SweepOptions opt;
  opt.seeds = {1, 12};
  const std::vector<std::string> two = shards(s, opt, 2);
  auto refused = [&](const std::string& other, const std::string& what) {
    const std::string e = merge_error({two[0], other});
    EXPECT_NE(e.find(two[0] + " and " + other + " are from different " + what), std::string::npos) << e;
  };
  fencesim::Scenario renamed = s;
  renamed.name = "other-pauses";
  opt.shard = Shard{2, 2};
  refused(sweep(renamed, opt, "renamed"), "scenarios (\"short-pauses\" from short-pauses.json vs \"other-pauses\"");
  fencesim::Scenario expect = s;
  expect.expect.erase(fencesim::Property::kNoLostUpdate);
  refused(sweep(expect, opt, "expect"), "scenarios (expect blocks)");
  SweepOptions o = opt;
  o.seeds = {1, 13};
  refused(sweep(s, o, "range"), "seed ranges (1..12 vs 1..13)");
  o = opt;
  o.keep = Keep::kNone;
  refused(sweep(s, o, "keep"), "keep modes (--keep failing vs --keep none)");
  o = opt;
  o.first_seeds = 3;
  refused(sweep(s, o, "limits"), "tally limits");
  o = opt;
  o.shard = Shard{2, 3};
  refused(sweep(s, o, "count"), "shard counts (2 shards vs 3 shards)");
  // Another fencesim version: the same file with the version changed (it still reads back).
  std::string text = slurp(two[1]);
  const std::string v = std::string("\"fencesim_version\": \"") + fencesim::version() + "\"";
  text.replace(text.find(v), v.size(), "\"fencesim_version\": \"0.0.1-other\"");
  const fs::path other = dir_ / "version.json";
  std::ofstream(other, std::ios::binary) << text;
  refused(other.string(), std::string("fencesim versions (") + fencesim::version() + " vs 0.0.1-other)");
  // The same name, file name and expect block, other content: the content hash tells them apart.
  fencesim::Scenario longer = s;
  longer.duration += std::chrono::seconds(1);
  const std::string changed = sweep(longer, opt, "content");
  refused(changed, "scenarios: the same name, file name and expect block, but other content (content_hash " +
                       fencesim::scenario_content_hash(s) + " vs " + fencesim::scenario_content_hash(longer) +
                       ": was the file edited between the shards?)");
  // A file from before the hash was recorded (none): refused beside one that has it.
  std::string old = slurp(two[1]);
  const std::string hash = ",\"content_hash\":\"" + fencesim::scenario_content_hash(s) + "\"";
  ASSERT_NE(old.find(hash), std::string::npos) << old.substr(0, 300);
  old.erase(old.find(hash), hash.size());
  const fs::path unhashed = dir_ / "unhashed.json";
  std::ofstream(unhashed, std::ios::binary) << old;
  refused(unhashed.string(), "scenarios: the same name, file name and expect block, but other content (content_hash " +
                                 fencesim::scenario_content_hash(s) + " vs none");
  EXPECT_EQ(merge_error(two), "");
}

// The content hash is of the normal form: formatting, comments, key order,
// spelled-out defaults, the description and the seed do not change it; any
// other change does.
TEST(ContentHash, IsOfTheNormalFormWithoutSeedAndDescription) {
  const fencesim::Scenario s = short_pauses();
  const std::string h = fencesim::scenario_content_hash(s);
  EXPECT_EQ(h.size(), 24u);
  EXPECT_EQ(h.rfind("fnv1a64:", 0), 0u) << h;
  const fencesim::LoadResult same = fencesim::load_scenario_text(R"(// reformatted, keys reordered, defaults spelled out
    {"expect": {"no_lost_update": "holds", "mutual_exclusion": "holds"},
     "description": "other prose", "seed": 99, "version": 1,
     "scenario": "short-pauses", "settle": "30s", "duration": "90000ms",
     "lock": {"sentinels": 0, "replicas": 0, "ttl": "5s", "service": "redis"},
     "resource": {"initial": 0, "fence_reads": true, "check": "strict", "kind": "fenced"},
     "clients": [{"name": "worker", "count": 2,
                  "workload": {"think": "10s", "iterations": 1000, "work": "3s", "kind": "counter"}}],
     "nemesis": {"max_duration": "6s", "interval": {"max": "20s", "min": "10s"},
                 "targets": ["clients"], "kinds": ["pause"]}})",
                                                                 "same.json");
  ASSERT_TRUE(same.ok()) << same.error->to_string();
  EXPECT_EQ(fencesim::scenario_content_hash(*same.scenario), h);
  fencesim::Scenario other = s;
  other.settle += std::chrono::milliseconds(1);
  EXPECT_NE(fencesim::scenario_content_hash(other), h);
  // A sweep records it.
  SweepOptions opt;
  opt.seeds = {1, 1};
  opt.keep = Keep::kNone;
  EXPECT_EQ(fencesim::run_sweep(s, opt).content_hash, h);
}

TEST_F(Merge, RefusesOverlappingAndMissingShards) {
  const fencesim::Scenario s = short_pauses();
  SweepOptions opt;
  opt.seeds = {1, 40};
  opt.keep = Keep::kNone;
  const std::vector<std::string> four = shards(s, opt, 4);
  std::string e = merge_error({four[0], four[1], four[1], four[2], four[3]});
  EXPECT_EQ(e, four[1] + " and " + four[1] + " are both shard 2/4 (overlapping shards: the same seeds twice)");
  e = merge_error({four[0], four[2]});
  EXPECT_EQ(e,
            "missing 2 of the 4 shards of short-pauses seeds 1..40: 2/4 (seeds 11..20), 4/4 (seeds 31..40); give "
            "every shard's sweep.json");
  e = merge_error({});
  EXPECT_NE(e, "");
  // A 1/1 sweep with a shard of 2: different shard counts, not a silent double count.
  opt.shard = Shard{1, 1};
  e = merge_error({sweep(s, opt, "whole"), four[0]});
  EXPECT_NE(e.find("different shard counts (1 shards vs 4 shards)"), std::string::npos) << e;
}

TEST_F(Merge, RefusesFilesThatAreNotSweepJsonWithOneLineAndNeverCrashes) {
  SweepOptions opt;
  opt.seeds = {1, 5};
  const std::string good = sweep(short_pauses(), opt, "good");
  const std::string text = slurp(good);
  auto file = [&](const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {file("truncated.json", text.substr(0, text.size() / 2)), "not valid JSON (parse error at line"},
      {file("cut-at-end.json", text.substr(0, text.size() - 3)), "is the file complete"},
      {file("empty.json", ""), "not valid JSON"},
      {file("object.json", R"({"scenario": "x"})"), "expected a sweep.json object (no sweep_version)"},
      {file("array.json", "[1, 2]"), "no sweep_version"},
      {file("report.json", slurp(fs::path(FENCESIM_SOURCE_DIR) / "reports" / "worked-example-fenced" / "report.json")),
       "no sweep_version"},
      {file("version2.json", replaced("\"sweep_version\": 1", "\"sweep_version\": 2")), "at sweep_version: expected 1"},
      {file("seed.json", replaced("{\"seed\":3,", "{\"seed\":\"3\",")), "at runs[2].seed: expected a non-negative"},
      {file("shard.json", replaced("\"shard\": {\"index\": 1, \"count\": 1", "\"shard\": {\"index\": 2, \"count\": 1")),
       "at shard: expected a shard I/N of the seed range"},
      {file("verdict.json", replaced("\"no_lost_update\":\"holds\"", "\"no_lost_update\":\"maybe\"")),
       "at runs[0].verdicts.no_lost_update: expected holds, violated or not_applicable"},
      {file("edited.json", replaced("\"no_lost_update\":\"holds\"", "\"no_lost_update\":\"violated\"")),
       "is not the sweep.json fencesim writes for the runs it lists"},
      {file("missing-run.json", replaced("\"last\": 5, \"count\": 5}", "\"last\": 6, \"count\": 6}")),
       "at runs: expected 6 runs, one per seed 1..6 of shard 1/1 (it has 5)"},
      {file("check.json", replaced("\"seeds\":[1]}", "\"seeds\":[2]}")),
       "at determinism_check.seeds: expected the seeds shard 1/1 re-runs"},
      {(dir_ / "nope.json").string(), "nope.json: no such file"},
      {dir_.string(), ": is a folder; give the sweep.json inside it"},
  };
  for (const auto& [path, message] : cases) {
    std::string error;
    EXPECT_FALSE(fencesim::read_sweep_file(path, error)) << path;
    EXPECT_EQ(error.find(path), 0u) << error;
    EXPECT_NE(error.find(message), std::string::npos) << path << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  std::string error;
  EXPECT_TRUE(fencesim::read_sweep_file(good, error)) << error;
}

TEST_F(Merge, KeptFoldersMissingBesideTheirShardAreListedAsNotKeptWithANote) {
  const fencesim::Scenario s = short_pauses();
  SweepOptions opt;
  opt.seeds = {1, 40};
  const std::vector<std::string> two = shards(s, opt, 2);
  const std::set<std::string> kept1 = subfolders(dir_ / "shard1");
  ASSERT_FALSE(kept1.empty());
  fs::remove_all(dir_ / "shard1" / *kept1.begin());
  std::string error;
  std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(read(two), error);
  ASSERT_TRUE(m) << error;
  std::vector<std::string> notes;
  ASSERT_TRUE(fencesim::copy_kept_reports(*m, (dir_ / "m").string(), notes, error)) << error;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("1 kept run report folder not found"), std::string::npos) << notes[0];
  const std::uint64_t gone = std::stoull(kept1.begin()->substr(4));
  for (const fencesim::SweepRun& r : m->sweep.runs) {
    if (r.seed == gone) {
      EXPECT_FALSE(r.kept);
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "m" / *kept1.begin()));
  // Merging into a shard's own folder would remove what it copies: refused,
  // whether or not that shard has a run to copy.
  for (const char* own : {"shard1", "shard2"}) {
    m = fencesim::merge_sweeps(read(two), error);
    ASSERT_TRUE(m);
    error.clear();
    EXPECT_FALSE(fencesim::copy_kept_reports(*m, (dir_ / own).string(), notes, error)) << own;
    EXPECT_NE(error.find("is a shard's own folder"), std::string::npos) << error;
  }
}

}  // namespace
