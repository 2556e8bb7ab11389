// fencesim/sweep.hpp — `fencesim sweep`: one scenario over a range of seeds,
// on several worker threads, with a per-property tally.
//
//   fencesim::SweepOptions opt;
//   opt.seeds = {1, 200};                  // seeds 1 … 200, both included
//   opt.jobs = 2;                          // worker threads
//   opt.report_dir = "reports/x-sweep";    // kept runs' report folders go here
//   fencesim::SweepResult r = fencesim::run_sweep(scenario, opt);
//   if (r.error) ...                       // a run could not run (exit 2 or 3)
//   if (r.mismatch) ...                    // the determinism self-check failed
//   fencesim::write_sweep_files("reports/x-sweep", r, error);  // sweep.json, summary.md
//
// Every run is an ordinary run_scenario of the scenario with its seed
// overridden, single-threaded and independent: a worker thread runs one seed
// at a time and shares nothing a run can see with the others (the only
// shared state is the next seed to take and the table the results are
// stored in, by seed). The result — and everything rendered from it — does
// not depend on the number of jobs, nor on the order in which runs finish.
//
// Runs whose report is not kept are run with RunOptions::trace = false and
// build no report. Kept runs (Keep) are run again with the trace on and
// their four reports written (write_reports) to `<report_dir>/seed<N>/`;
// with Keep::kAll every run is run with the trace on once instead.
//
// Determinism self-check: 1 in 50 seeds (at least one; the seeds
// first, first + 50, first + 100, …) is run a second time after the sweep, on
// another thread and with the trace switched the other way; every kept run's
// second run is compared as well. A fingerprint that differs is a bug in
// fencesim and is returned in SweepResult::mismatch.
//
// Shards (several machines): SweepOptions::shard = {I, N} runs only shard
// I of N of the seed range — a contiguous block (shard_seeds below): with C
// seeds from A, shard I runs the seeds A + ⌊(I−1)·C/N⌋ … A + ⌊I·C/N⌋ − 1, so
// the N shards cover every seed exactly once and differ in size by at most
// one. A block, not every N-th seed, so that the self-check's seeds (A,
// A + 50, …) fall into every shard of at least 50 seeds. A shard's
// SweepResult has the full range in `seeds`, its own runs only (its seeds,
// in order) and aggregates over them; its self-check re-runs the sweep's
// check seeds that are its own (shard_check_seeds; its first seed when none
// is). merge_sweeps (fencesim/sweep_merge.hpp) puts the N results back
// together into the SweepResult of the whole range, through the same tally
// (tally_sweep) and renderers.
//
// Errors: a run that cannot run (UnsupportedScenario, InvalidScenario, a run
// stopped at its event budget, a report folder that cannot be written) or
// that fails inside fencesim (std::bad_alloc, any other exception) stops the
// sweep; SweepResult::error names the lowest such seed. Nothing throws out of
// run_sweep except std::system_error when a thread cannot be started.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fencesim/run.hpp"

namespace fencesim {

// kPropertyCount (models/scenario.hpp): the properties in report order
// (kAllProperties), as a fixed-size array index.

/// An inclusive range of seeds: first … last.
struct SeedRange {
  std::uint64_t first = 1;
  std::uint64_t last = 1;
  std::uint64_t count() const { return last - first + 1; }
  bool operator==(const SeedRange&) const = default;
};

/// The most seeds one sweep runs.
inline constexpr std::uint64_t kMaxSweepSeeds = 10'000'000;

/// A seed as the command line writes it: plain decimal digits that fit in 64
/// bits (no sign, no prefix, no exponent); nullopt otherwise.
std::optional<std::uint64_t> parse_seed(const std::string& text);

/// Parses "A..B" (decimal seeds from 0 to 2^64−1, A ≤ B, at most
/// kMaxSweepSeeds seeds). On failure nullopt, with `error` set to one line
/// saying why (without a "fencesim:" prefix).
std::optional<SeedRange> parse_seed_range(const std::string& text, std::string& error);

/// Shard `index` of `count` (1 ≤ index ≤ count); {1, 1} is the whole sweep.
struct Shard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
  bool operator==(const Shard&) const = default;
};

/// The most shards a sweep is split into (and never more than its seeds).
inline constexpr std::uint64_t kMaxShards = kMaxSweepSeeds;

/// Parses "I/N" (decimal, 1 ≤ I ≤ N ≤ kMaxShards). On failure nullopt, with
/// `error` set to one line saying why (without a "fencesim:" prefix). "auto"
/// is not parsed here: see shard_from_environment.
std::optional<Shard> parse_shard(const std::string& text, std::string& error);

/// `--shard auto`: the shard from the batch engine's environment, read
/// through `env` (getenv, or a fake in tests):
///   - Kubernetes Indexed Job: JOB_COMPLETION_INDEX (0-based) is shard
///     index + 1; the count is FENCESIM_SHARD_COUNT (Kubernetes exports no
///     count: set it to the Job's `completions`).
///   - Slurm job array: shard (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) /
///     SLURM_ARRAY_TASK_STEP (1 when unset) + 1 of SLURM_ARRAY_TASK_COUNT, so
///     `--array=0-7`, `--array=1-8` and `--array=10-24:2` all work; the ids
///     must be evenly spaced (not a list such as `1,3,4`).
///   - GNU parallel: PARALLEL_SEQ (1-based) of FENCESIM_SHARD_COUNT.
/// FENCESIM_SHARD_COUNT, when set with Slurm, must equal the task count.
/// None of the three set, two of them set, or a value that is no number or
/// out of range: nullopt with `error` (one line, naming the variables).
std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& env, std::string& error);

/// The seeds shard `sh` of `all` runs (see the header comment): a
/// contiguous block. Requires 1 ≤ sh.index ≤ sh.count ≤ all.count().
SeedRange shard_seeds(const SeedRange& all, const Shard& sh);

/// A shard that can split `all`: false with `error` (one line) when it has
/// more shards than seeds.
bool check_shard(const Shard& sh, const SeedRange& all, std::string& error);

/// Which runs get their full report folder.
enum class Keep {
  kNone,     ///< none
  kFailing,  ///< per property, the first SweepOptions::keep_per_property runs that violated it, and the first
             ///< as many that did not meet its expectation
  kAll,      ///< every run
};
const char* to_string(Keep k);
std::optional<Keep> keep_from_string(const std::string& s);

/// The 95 % Wilson score interval of a proportion of `k` successes in `n`
/// trials, z = 1.96, clamped to [0, 1]. For n = 0: {0, 1}.
struct Interval {
  double low = 0;
  double high = 1;
};
Interval wilson_interval(std::uint64_t k, std::uint64_t n, double z = 1.96);

/// Progress after each finished run (for a progress line: no effect on
/// the results).
struct SweepProgress {
  std::uint64_t done = 0;                                  ///< runs finished (first pass)
  std::uint64_t total = 0;                                 ///< runs in the sweep
  std::array<std::uint64_t, kPropertyCount> violations{};  ///< so far, per property (report order)
};

struct SweepOptions {
  SeedRange seeds;    ///< the whole sweep's range (a shard runs its share of it)
  Shard shard;        ///< {1, 1}: every seed
  unsigned jobs = 1;  ///< worker threads, ≥ 1 (more than the seeds: as many as the seeds)
  Keep keep = Keep::kFailing;
  std::size_t keep_per_property = 20;  ///< Keep::kFailing: runs kept per property (see Keep)
  std::size_t first_seeds = 10;        ///< how many first failing / unmet seeds each aggregate lists
  std::uint64_t check_every = 50;      ///< the self-check re-runs 1 seed in this many (≥ 1)
  /// Where the kept runs' folders go (`<report_dir>/seed<N>/`); "" writes
  /// none whatever `keep` says. Old `seed<N>` folders there are removed
  /// first, so that the folder holds this sweep's runs only.
  std::string report_dir;
  /// The kept reports' `scenario.source` (the file name without its folder).
  std::string source;
  /// Called after every first-pass run, from the worker thread that ran it,
  /// one call at a time (under a lock); may be empty.
  std::function<void(const SweepProgress&)> on_progress;
  /// Asked before each run starts, from any worker thread (may be empty):
  /// once it answers true no further run starts, the runs under way finish,
  /// and run_sweep returns with `interrupted` set (`fencesim sweep` asks
  /// InterruptScope::signal(), so that Ctrl-C stops between runs).
  std::function<bool()> interrupted;
};

/// Key metrics of a run (docs/REPORTS.md "Metrics").
struct SweepMetrics {
  std::int64_t writes_accepted = 0, writes_rejected = 0, grants = 0, lease_losses = 0;
  sim::Duration longest_overlap{0};  ///< longest_two_holder_overlap
  std::int64_t audit_findings = 0, iterations = 0, iterations_ok = 0;
  std::int64_t updates_lost = 0;  ///< Metrics::updates_lost
  /// Metrics::acquire_latency of the run: iterations that acquired, and the
  /// p50 and p99 (nearest rank) from first acquire request to grant.
  std::int64_t acquires = 0;
  sim::Duration acquire_latency_p50{0}, acquire_latency_p99{0};
  bool operator==(const SweepMetrics&) const = default;
};

/// One run of the sweep.
struct SweepRun {
  std::uint64_t seed = 0;
  std::array<Status, kPropertyCount> status{};  ///< per property, report order
  std::array<bool, kPropertyCount> met{};       ///< its expectation met (true without one)
  bool all_met = true;
  std::uint64_t faults = 0;  ///< faults that ran (scripted and drawn)
  std::uint64_t events = 0;
  std::uint64_t fingerprint = 0;
  SweepMetrics metrics;
  bool kept = false;  ///< its report folder was written
  bool operator==(const SweepRun&) const = default;
};

/// One property over the whole sweep.
struct PropertyAggregate {
  Property property = Property::kMutualExclusion;
  std::optional<Expectation> expected;  ///< from the scenario's `expect` block
  std::uint64_t runs = 0;               ///< runs in which it applied (holds or violated)
  std::uint64_t violations = 0;
  std::uint64_t not_applicable = 0;
  std::uint64_t unmet = 0;                      ///< runs that did not meet its expectation
  std::optional<double> rate;                   ///< violations / runs; nullopt when runs is 0
  Interval interval;                            ///< Wilson 95 % of violations / runs
  std::vector<std::uint64_t> first_violations;  ///< the first SweepOptions::first_seeds violating seeds
  std::vector<std::uint64_t> first_unmet;       ///< the first such seeds that did not meet its expectation
};

/// A run that could not run: the sweep stopped.
struct SweepError {
  enum class Kind { kInput, kInternal } kind = Kind::kInput;  ///< exit 2 or 3
  std::uint64_t seed = 0;
  std::string message;  ///< one line
};

/// The self-check found a seed whose two runs differ.
struct SweepMismatch {
  std::uint64_t seed = 0;
  std::uint64_t first = 0, second = 0;  ///< the two fingerprints
};

struct SweepResult {
  std::string fencesim_version;  ///< version() of the fencesim that ran the runs
  std::string scenario;          ///< Scenario::name
  std::string source;            ///< SweepOptions::source
  /// scenario_content_hash() of the scenario swept: "fnv1a64:" and 16 hex
  /// digits; "" in a sweep.json written before it was recorded.
  std::string content_hash;
  SeedRange seeds;  ///< the whole sweep's range
  Shard shard;      ///< SweepOptions::shard; runs holds shard_seeds(seeds, shard)
  Keep keep = Keep::kFailing;
  std::size_t keep_per_property = 20;         ///< SweepOptions::keep_per_property
  std::size_t first_seeds = 10;               ///< SweepOptions::first_seeds
  std::vector<SweepRun> runs;                 ///< by seed (this shard's); empty on error
  std::vector<PropertyAggregate> properties;  ///< report order, every property
  std::uint64_t check_every = 50;             ///< SweepOptions::check_every
  std::vector<std::uint64_t> checked_seeds;   ///< re-run by the self-check (check_seeds)
  bool all_met = true;                        ///< every run met the `expect` block
  std::optional<SweepError> error;
  std::optional<SweepMismatch> mismatch;
  /// SweepOptions::interrupted answered true: the runs are incomplete; write nothing.
  bool interrupted = false;
};

SweepResult run_sweep(const Scenario& s, const SweepOptions& opt);

/// A hash of what decides a sweep's runs and verdicts: FNV-1a 64 over the
/// scenario's normal form (what `fencesim write` prints: comments, spacing,
/// key order and spelled-out defaults do not count) with its `seed` (a sweep
/// replaces it) and `description` (prose) left out. "fnv1a64:" followed by
/// 16 lowercase hex digits; the same scenario gives the same hash on any
/// machine. sweep.json records it (`scenario.content_hash`) and `fencesim
/// merge` refuses shards whose hashes differ (docs/SWEEP.md).
std::string scenario_content_hash(const Scenario& s);

/// Acknowledged updates lost over a sweep (docs/REPORTS.md "sweep.json"):
/// the pooled fraction (all updates lost / all writes accepted) and the
/// per-run fractions' mean over the runs that accepted a write, with a 95 %
/// interval for that mean (mean ± 1.96 × sample standard deviation / √runs;
/// runs are independent, a run's writes are not).
struct UpdatesLostAggregate {
  std::int64_t updates_lost = 0, writes_accepted = 0;
  std::uint64_t runs = 0;  ///< runs with at least one accepted write
  double pooled = 0, mean = 0, low = 0, high = 0;
};
UpdatesLostAggregate aggregate_updates_lost(const std::vector<SweepRun>& runs);

/// The seeds the self-check re-runs: first, first + every, … (at least one).
std::vector<std::uint64_t> check_seeds(const SeedRange& seeds, std::uint64_t every);

/// The seeds shard `sh` of `all` re-runs: check_seeds(all, every) within
/// its share, or its first seed when none is. For {1, 1}: check_seeds.
std::vector<std::uint64_t> shard_check_seeds(const SeedRange& all, const Shard& sh, std::uint64_t every);

/// The runs Keep::kFailing keeps: per property, the first `per` runs that
/// violated it and the first `per` that missed its expectation; their seeds
/// in order. (The shards' own choices always include the whole sweep's.)
std::vector<std::uint64_t> failing_to_keep(const std::vector<SweepRun>& runs, std::size_t per);

/// The tally — the one place it is made: r.properties (report order, every
/// property, with `expected` from `expect`) and r.all_met from r.runs and
/// r.first_seeds. run_sweep and merge_sweeps both end here.
void tally_sweep(SweepResult& r, const std::map<Property, Expectation>& expect);

/// sweep.json (docs/REPORTS.md "sweep.json"): byte-identical for the same
/// scenario, seed range, keep mode and fencesim version, whatever the jobs.
std::string render_sweep_json(const SweepResult& r);
/// summary.md: the same for people.
std::string render_sweep_markdown(const SweepResult& r);
/// The terminal summary: the property table, and for each property that
/// broke the `fencesim run FILE --seed N` that reproduces its first failure
/// (`file` as the user gave it).
std::string render_sweep_summary(const SweepResult& r, const std::string& file);

/// Removes the `seed<N>/` folders (kept run reports) of an earlier sweep
/// from `dir`, leaving everything else; nothing when `dir` does not exist.
void remove_seed_folders(const std::string& dir);

/// Writes sweep.json and summary.md into `dir` (created if needed), each to
/// a temporary name renamed into place. False with `error` set on failure.
bool write_sweep_files(const std::string& dir, const SweepResult& r, std::string& error);

}  // namespace fencesim
