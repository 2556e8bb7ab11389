// models/world.hpp — build a world from a Scenario, run it, check it.
//
//   fencesim::RunOptions opt;             // seed from the scenario unless set
//   fencesim::RunResult r = fencesim::run_scenario(scenario, opt);
//   r.verdicts   // one per property, with the first counterexample
//   r.metrics    // health metrics (docs/REPORTS.md "Metrics")
//   r.all_met    // every expectation of the `expect` block met (metric bounds too)
//
// A run is a pure function of (scenario, seed, fencesim version): the same
// inputs give the same History, verdicts and fingerprint.
//
// The lock service is whichever models/lock_service.hpp registers for
// `s.lock.service`; the world knows it only through LockService.
//
// Errors: `InvalidScenario` (models/validate.hpp) for a Scenario that breaks
// a rule of the format, with the message and JSON path a file would get;
// `UnsupportedScenario` for a design this version cannot run (a
// lock.service no lock service is registered for, a client routed to an
// unknown resource copy); the run stops with `budget_exceeded` when it needs
// more than `event_budget` events, or has more than `pending_budget`
// waiting at once; sim::ModelBug for a bug in a model.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "models/checkers/checkers.hpp"
#include "models/checkers/metric_expect.hpp"
#include "models/history.hpp"
#include "models/nemesis.hpp"
#include "models/scenario.hpp"
#include "sim/trace.hpp"

namespace fencesim {

struct UnsupportedScenario : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunOptions {
  std::optional<std::uint64_t> seed;  ///< overrides Scenario::seed
  bool trace = true;                  ///< build the trace (JSON Lines) of the run
  std::uint64_t event_budget = Limits::kEventBudget;
  std::size_t pending_budget = Limits::kPendingBudget;  ///< events waiting at once
  /// The determinism self-check of a scenario with a custom ResourceCheck
  /// or ClientPolicy (models/policy.hpp): the run is made twice and each
  /// policy call's arguments and answer compared; a policy that answered
  /// the same arguments differently throws PolicyMisuse naming it. nullopt:
  /// on in a debug build of fencesim (NDEBUG not defined), off otherwise. A
  /// scenario without a custom policy is never run twice.
  std::optional<bool> self_check;
};

struct RunResult {
  std::uint64_t seed = 0;
  /// Every fault that ran: the scripted ones and those the nemesis drew, in
  /// start order (drawn ones have origin "nemesis#i").
  std::vector<FaultSpec> faults;
  std::vector<FaultSpec> drawn;  ///< the nemesis draws alone
  /// With `nemesis.swarm`, the kinds and targets this seed enabled.
  std::optional<SwarmSubset> swarm;
  History history;
  CheckContext context;
  std::vector<Verdict> verdicts;
  Metrics metrics;
  /// One per expect.metrics entry, in name order (all_met counts them).
  std::vector<MetricVerdict> metric_verdicts;
  sim::Trace trace;
  /// Hash of the History, the engine's events and the Raft events
  /// (models/fingerprint.hpp): equal for equal runs, with the trace on or off.
  std::uint64_t fingerprint = 0;
  std::uint64_t events = 0;  ///< engine events processed
  bool budget_exceeded = false;
  bool all_met = true;
  /// Program clients (clients[].program), in client order: each one's name
  /// and the end of what its program wrote to stderr (docs/PROTOCOL.md
  /// "Transport"). Not part of the fingerprint.
  std::vector<std::pair<std::string, std::string>> program_output;
};

/// Throws PolicyMisuse (models/policy.hpp) when a custom policy broke a
/// rule of models/policy.hpp "Determinism" that the debug checks catch, and
/// program::ProgramError (models/program/errors.hpp) when a program client's
/// program broke the protocol, died or hung: no result then.
RunResult run_scenario(const Scenario& s, const RunOptions& opt = {});

/// Does the scenario carry a custom ResourceCheck or ClientPolicy?
bool has_custom_policy(const Scenario& s);

/// When each fault ends (docs/FORMAT.md "Faults"): nullopt for a
/// fault that never ends. Faults that start at or after `run_end` never happen and are ignored.
std::optional<Time> last_fault_end(const std::vector<FaultSpec>& faults, Time run_end, bool& any_fault);

/// The trace of a run: every History record as an event, in true-time order
/// (run_scenario builds it; fencesim-real builds a real run's the same way).
void build_trace(const History& h, sim::Trace& trace);

}  // namespace fencesim
