// fencesim/shrink.hpp — `fencesim shrink`: from a run that breaks a
// property to the smallest scenario found that still breaks it.
//
//   fencesim::ShrinkOptions opt;
//   opt.seed = 7;                                   // the failing run's seed (kept fixed)
//   opt.property = fencesim::Property::kNoLostUpdate;  // or nullopt: see below
//   fencesim::ShrinkResult r = fencesim::shrink_scenario(scenario, opt);
//   if (r.error) ...                                // nothing to shrink, or a bug
//   std::string text = fencesim::write_scenario(r.shrunk);  // no nemesis, expect {P: violated}
//
// The search, all with the seed fixed (every candidate is one ordinary
// run_scenario with RunOptions::trace = false):
//   0. Materialize: the nemesis's draws for the seed are appended to the
//      scripted faults (loader/writer.hpp written_scenario) and the nemesis
//      is removed. The nemesis draws from its own named PRNG stream
//      (models/nemesis.hpp), so no other stream moves, and run_scenario runs
//      the scripted and drawn faults in the same stable start order either
//      way: the materialized run is the same run, with the same
//      fingerprint (tests/cli/nemesis_paste_test.cpp shows it for every
//      kind the nemesis draws). shrink_scenario checks it (ShrinkResult::same_run)
//      and, whatever it finds, starts the search only from a materialized
//      scenario that breaks P (else ShrinkError::kInternal).
//   1. The run's `duration` shortened by binary search (whole
//      milliseconds); a candidate drops the faults that would start at or
//      after its end.
//   2. Faults: delta debugging (Zeller & Hildebrandt's ddmin, below) over the
//      materialized faults.
//   3. For each remaining fault, in order: its length (a pause's, drift's,
//      partition's or slow's `duration`, a crash's `restart_after`, a clock
//      jump's |by|) shortened by binary search in whole milliseconds, then
//      its start `at` moved as early as binary search finds it still fails,
//      and, if it could not move earlier, as late (in whole milliseconds,
//      before the end of the run).
//   4. Clients: ddmin over the clients (at least one is kept; a candidate
//      whose faults target a dropped client is invalid and skipped).
//   5. The run's `duration` again.
// A candidate "still fails" iff P's verdict is `violated` (an unmet
// `holds` expectation is not enough), the run did not stop at its event
// budget, and the failure keeps the materialized run's signature
// (FailureSignature, keeps_signature): a Sentinel failover that reuses a
// token must not shrink into a primary restarting empty, which reuses one
// too but is another bug. A candidate is run only if validate_scenario (the loader's
// rules) accepts it, every fault and client starts before the end of the
// run, and — when the materialized scenario's run lasts at least `settle`
// after its last fault ends (so that `progress` judges something) — it
// does too; others are skipped without a run (ShrinkResult::skipped).
// Binary searches accept only values that were run and failed, so the
// result always fails; they assume monotonicity only to choose what to try.
//
// Bound: at most ShrinkOptions::max_runs candidate runs (default 2000; the
// two checking runs of step 0 and the final run are not counted). When
// the bound is reached the search stops where it is and returns the
// smallest failing scenario found so far (ShrinkResult::budget_reached).
// ddmin needs O(n²) runs in the worst case and about n·log n usually.
//
// Determinism: the result depends on the scenario, the seed, the property
// and max_runs only (no wall clock, no threads, no randomness of its own):
// the same inputs give the same shrunk scenario, byte for byte once
// written.
//
// Errors: ShrinkResult::error (never thrown; exceptions of a run other than
// InvalidScenario, which marks a candidate invalid, are caught and become
// kInternal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fencesim/run.hpp"

namespace fencesim {

/// Zeller & Hildebrandt's ddmin ("Simplifying and Isolating
/// Failure-Inducing Input", IEEE TSE 28(2), 2002): a 1-minimal subset of
/// the items 0 … n−1 for which `fails` is true (removing any single item of
/// the result makes it pass), given that `fails` holds for all of them.
/// Subsets are passed as ascending indices; `fails` is asked of the subsets
/// of the granularity's chunks, then of their complements, doubling the
/// granularity when neither fails. `fails` may return nullopt to stop the
/// search (a run budget): the current subset is returned (it fails, but may
/// not be 1-minimal). Deterministic: the same n and answers give the same
/// questions in the same order.
std::vector<std::size_t> ddmin(std::size_t n,
                               const std::function<std::optional<bool>(const std::vector<std::size_t>&)>& fails);

/// The default ShrinkOptions::max_runs.
inline constexpr std::size_t kDefaultShrinkRuns = 2000;

struct ShrinkOptions {
  std::uint64_t seed = 1;  ///< the seed of the run to shrink (replaces Scenario::seed)
  /// The property to keep broken; nullopt: the first property (report
  /// order) whose expectation the run did not meet and that it violated,
  /// else the first it violated.
  std::optional<Property> property;
  std::size_t max_runs = kDefaultShrinkRuns;  ///< candidate runs at most (≥ 1)
  /// Called after every candidate run (progress only; no effect on the result).
  std::function<void(std::size_t runs)> on_run;
};

struct ShrinkError {
  enum class Kind {
    kNothingToShrink,  ///< the run breaks no property, or not the one asked for (exit 1)
    kInput,            ///< the scenario cannot run, or the property does not apply to it (exit 2)
    kInternal,         ///< a bug in fencesim: a run failed inside, or materializing lost the violation (exit 3)
  } kind = Kind::kInput;
  std::string message;  ///< one line, without a "fencesim:" prefix
};

/// What a failure is, so that shrinking keeps it rather than trading it for
/// another (slippage): the property violated, the kinds of the faults that
/// started no later than its first violation (Verdict::at), and the kinds
/// of the service's events (History::notes: a Sentinel `odown`,
/// `promoted-slave`, a node's `restart`, …) recorded from the start
/// of the last of those faults to the violation — the mechanism the story
/// tells.
struct FailureSignature {
  Property property = Property::kNoLostUpdate;
  std::set<FaultKind> fault_kinds;
  std::set<std::string> events;
  /// "token_monotonic violated after faults crash, with the service events
  /// odown, promoted-slave" (one line).
  std::string text() const;
};
/// The signature of `r`'s violation of `p`; nullopt when `r` does not violate it.
std::optional<FailureSignature> failure_signature(const RunResult& r, Property p);
/// Does `candidate` keep `kept`? The same property, violated; no fault kind
/// `kept` lacks, and at least one when `kept` has one; every event of `kept`.
bool keeps_signature(const FailureSignature& kept, const FailureSignature& candidate);

struct ShrinkResult {
  Property property = Property::kNoLostUpdate;  ///< the property kept broken
  /// The failure's signature in the materialized run, which every accepted
  /// candidate keeps (printed and written into the shrunk file's description).
  FailureSignature signature;
  std::uint64_t seed = 0;
  /// The materialized scenario (step 0): every fault scripted, no nemesis.
  Scenario materialized;
  /// The smallest failing scenario found: no nemesis, faults in start order
  /// (origins "faults[i]"), `expect` {property: violated} and nothing else;
  /// name and description as the original's (write_shrink_output sets them).
  Scenario shrunk;
  /// The materialized scenario's run has the fingerprint of the original
  /// run (it should always: see step 0).
  bool same_run = true;
  std::uint64_t fingerprint_original = 0, fingerprint_materialized = 0;
  std::size_t runs = 0;     ///< candidate runs made (≤ max_runs)
  std::size_t skipped = 0;  ///< candidates skipped as invalid, without a run
  bool budget_reached = false;
  std::size_t scripted_before = 0;  ///< faults[] of the file
  std::size_t drawn_before = 0;     ///< faults the nemesis drew for the seed
  std::optional<ShrinkError> error;
};

ShrinkResult shrink_scenario(const Scenario& s, const ShrinkOptions& opt);

/// Everything `fencesim shrink` writes for a successful shrink of `file`
/// (scenario `s`) into `out`:
///   `<out>/<name>.json`, the shrunk scenario as the writer writes it, with
///     `scenario` = <name>, where <name> is `<scenario>-seed<N>-shrunk`
///     (the original name cut so that it fits the 100-byte limit), and a
///     description saying what was shrunk from what;
///   `<out>/<name>/`, its four reports (report.json, report.md,
///     timeline.html, trace.jsonl) as `fencesim run` writes them.
/// The scenario is written, loaded back, and the loaded scenario is run;
/// its run must violate the property (else an internal error). Every file
/// is written to a temporary name and renamed into place.
struct ShrinkOutput {
  std::string name;        ///< <scenario>-seed<N>-shrunk
  std::string file;        ///< <out>/<name>.json
  std::string report_dir;  ///< <out>/<name>
  std::string text;        ///< the scenario file's text
  Scenario scenario;       ///< as loaded back from `text`
  RunResult run;           ///< its run (trace on)
  std::optional<ShrinkError> error;
};
ShrinkOutput write_shrink_output(const std::string& file, const Scenario& s, const ShrinkResult& r,
                                 const std::string& out);

}  // namespace fencesim
