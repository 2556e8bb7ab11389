// models/checkers/checkers.hpp — properties and metrics over a History.
//
// One file per property (mutual_exclusion.cpp, no_stale_write.cpp, …), all
// registered in registry.cpp (check_all, property_applies); metrics in
// metrics.cpp; shared story pieces in story.hpp.
//
// A checker never changes the world: it reads the History (and the scenario
// for applicability) and returns a Verdict with the first counterexample,
// told as a short numbered story with true times, nodes, tokens and values.
// Definitions are docs/FORMAT.md's ("Properties", "Progress and
// settle"); metrics are docs/REPORTS.md's ("Metrics": the seed article's
// health metrics).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/checkers/registry.hpp"
#include "models/checkers/verdict.hpp"
#include "models/history.hpp"
#include "models/scenario.hpp"

namespace fencesim {

Verdict check_mutual_exclusion(const History& h, const CheckContext& ctx);
Verdict check_no_stale_write(const History& h);
Verdict check_token_monotonic(const History& h);
Verdict check_no_lost_update(const History& h, std::int64_t initial);
Verdict check_progress(const History& h, const CheckContext& ctx, sim::Duration settle);
/// progress for the `leader` workload's clients (`candidates`): whenever a
/// candidate waits to acquire, some candidate holds the lock with a lease the
/// service still backs within `settle`; and no candidate's acquire fails
/// with a permanent error after the last fault. docs/FORMAT.md "Progress
/// and settle".
Verdict check_leader_progress(const History& h, const CheckContext& ctx, sim::Duration settle,
                              const std::set<std::string>& candidates);
/// The queue design's progress: per message (History::messages), not per iteration.
Verdict check_queue_progress(const History& h, const CheckContext& ctx, sim::Duration settle);
/// Each message's effect applied at most once (the queue design's ledger).
Verdict check_no_duplicate_effect(const History& h);

struct LatencySummary {
  std::int64_t count = 0;
  sim::Duration p50{0}, p99{0}, max{0};
};
/// Nearest-rank percentile (p in 1..100) of integer nanoseconds.
sim::Duration nearest_rank(std::vector<sim::Duration> sorted, int p);

/// A write a client sent after its own belief for that lease had ended for
/// a reason other than its release (docs/REPORTS.md "Metrics"): it had
/// learned the lease was lost — a refused renewal, an ended session, its own
/// lease_loss_after — and its workload wrote anyway.
struct WriteAfterBelief {
  std::string client;
  std::string copy;
  std::optional<std::int64_t> token;
  Time belief_end{0};
  std::string end_reason;
  Time sent{0};
  Time at{0};  ///< when the copy answered it
  bool accepted = false;
};

struct Metrics {
  std::int64_t writes_accepted = 0, writes_rejected = 0, reads_accepted = 0, reads_rejected = 0;
  /// Accepted writes whose effect the next accepted write at the same copy
  /// overwrote without having read it (its read_value is not their value):
  /// Jepsen's "acknowledged updates lost" (docs/REPORTS.md "Metrics").
  std::int64_t updates_lost = 0;
  /// false for the work queue: a ledger effect is not a read-modify-write,
  /// so "lost updates" has no meaning there (reports say n/a, and
  /// updates_lost stays 0).
  bool updates_lost_applies = true;
  std::int64_t grants = 0;        ///< at the service
  std::int64_t acquisitions = 0;  ///< grants a client received (beliefs)
  std::int64_t lease_losses = 0;  ///< refused renewals / ended sessions
  /// Permanent errors the lock service answered acquires with (History::
  /// service_errors): error text → count. Empty in most designs.
  std::map<std::string, std::int64_t> service_errors;
  LatencySummary renewal_latency;
  /// From the first acquire request of an iteration to the grant the client
  /// handled (the queue: ReceiveMessage sent to a message handed out), over
  /// the iterations that acquired.
  LatencySummary acquire_latency;
  sim::Duration ttl{0};
  sim::Duration longest_overlap{0};  ///< longest two-holder overlap in true time
  std::int64_t audit_findings = 0;
  std::optional<AuditFinding> first_audit;
  std::int64_t iterations = 0, iterations_ok = 0;
  std::int64_t writes_after_belief_ended = 0;
  std::optional<WriteAfterBelief> first_write_after_belief;
};

Metrics compute_metrics(const Scenario& s, const History& h, const CheckContext& ctx);
/// updates_lost / writes_accepted, 0 when no write was accepted.
double updates_lost_fraction(const Metrics& m);

}  // namespace fencesim
