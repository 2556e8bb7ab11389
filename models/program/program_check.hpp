// models/program/program_check.hpp — a resource whose check is the user's
// program (`"resource": {"kind": "program", "program": {...}}`), over the
// protocol of docs/PROTOCOL.md "Resource programs".
//
// Shape: one ProgramCheck per run (the spec is shared by every run of a
// sweep; a process is not), made by build_world and handed to the
// ResourceService, which calls it as it calls any ResourceCheck: once per
// read or write a copy handles, inside that copy's atomic step. It starts
// the program (program::launch, a warm process when one is free) when the
// world is built, at time 0, and delivers `init`; each `decide` delivers
// one `check` — the request, the copy's stored state and the copy's clocks
// — and reads the program's `decision` and `yield`. Simulated time does
// not move meanwhile: a check takes no simulated time, as a built-in one.
//
// State: what the check must remember lives in the copy's marks (the
// `decision` returns them), not in the program's memory: marks are durable
// through a copy's crash, travel with replication (each mark the larger of
// the two), and are what the report shows. So the process may be a warm
// one, and one process serves every copy.
//
// Determinism: the program's only inputs are the deliveries (the `time`
// in each is the copy's clocks; `init.seed` a stream of the run's seed), so
// a program that is deterministic given its inputs makes the run a pure
// function of the scenario and seed.
//
// Errors: ProgramError (models/program/errors.hpp), named "resource.program":
// a broken protocol exits 2; a program that dies, exits or sends no yield
// within program.yield_timeout while the run needs it exits 3. No report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/policy.hpp"
#include "models/program/channel.hpp"
#include "models/program/codec.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::program {

class ProgramCheck final : public ResourceCheck {
 public:
  /// `copies`: the resource copies' names; `groups`: the scenario's node
  /// groups (init's "nodes"). `s.resource.program` must be set.
  ProgramCheck(sim::Simulation& sim, const Scenario& s, std::vector<std::string> copies, std::vector<NodeGroup> groups);
  ~ProgramCheck() override;

  /// Starts the program and delivers `init` (the first copy's clocks).
  void start();
  /// The run is over: delivers `end` (a reusable program goes back to the
  /// pool) and keeps its stderr. Call once, before the world is torn down.
  void finish();
  /// What the program wrote to stderr during the run (its last 16 KiB).
  const std::string& output() const { return output_; }

  std::string name() const override { return "program"; }
  ResourceDecision decide(const PolicyContext& ctx, const ResourceRequest& req, ResourceMarks& state) const override;
  bool compares_versions() const override { return compare_versions_; }
  bool fences_reads() const override { return fence_reads_; }

 private:
  json init_message() const;
  /// Reads the program's lines up to its yield; the decision of check `id`
  /// (none for init: `id` 0).
  ResourceDecision answer(const std::string& delivery, std::int64_t id, ResourceMarks* state) const;
  [[noreturn]] void protocol_error(const std::string& what, const std::string& line) const;

  sim::Simulation& sim_;
  const Scenario& scenario_;
  std::vector<std::string> copies_;
  std::vector<NodeGroup> groups_;
  bool compare_versions_ = false;
  bool fence_reads_ = false;
  // A check is const to its callers; the process and the ids are this run's.
  mutable std::unique_ptr<Channel> channel_;
  mutable std::int64_t next_id_ = 1;
  std::string output_;
};

}  // namespace fencesim::program
