// fencesim/history_export.hpp — a run's History in the formats the field's
// independent checkers read (`fencesim run --history edn|porcupine`;
// docs/REPORTS.md "Histories for outside checkers").
//
// Both files hold the same operations (report/history_ops.hpp), per client
// process, with true simulated times in ns since the start of the run:
//   mutex ops     one per lock belief: :acquire (request → grant), then
//                 :release (:ok when the client released; :info when the
//                 belief ended by a crash, a refused renewal or
//                 lease_loss_after; none while still held at the end);
//                 a grant the client never handled (paused or crashed
//                 before the reply): an :acquire that ends :info
//   register ops  each read and write the resource copy answered: :read
//                 (value returned), :cas [value read, value written] (what
//                 the client meant to do under its lock); :ok accepted,
//                 :fail refused (a fencing check)
// Deterministic: the same scenario and seed give the same bytes.
#pragma once

#include <string>

#include "fencesim/run.hpp"

namespace fencesim {

/// history.edn: Jepsen's history, one operation map per line
/// ({:type :invoke|:ok|:fail|:info, :f …, :value …, :process N, :time ns,
/// :index N}), after `;` comment lines naming the scenario, seed, the
/// register's initial value and which knossos model reads which ops.
std::string render_history_edn(const Scenario& s, const RunResult& r);

/// history.json: the register ops as Porcupine Operations
/// ({"client_id", "input", "call", "output", "return"}), inside an object
/// that names the model and the initial value.
std::string render_history_porcupine(const Scenario& s, const RunResult& r);

}  // namespace fencesim
