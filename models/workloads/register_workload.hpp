// models/workloads/register_workload.hpp — the read, work, write iteration
// that sequence_allocator, counter and writer share, against the register
// of models/resource/.
//
// One iteration: a ReadRequest (carrying the token only with fence_reads),
// then `work`, then a WriteRequest of `next_value(read)` with the token, the
// value read (an annotation for no_lost_update), the tag the kind gives and,
// for a `cas` resource, the version read (the lock-free CAS loop). Each
// request waits at most `command_timeout`. A write a `cas` resource rejects
// (a version conflict) is retried as optimistic concurrency is meant to be
// ("read the version, compute, write WHERE version = $1, retry on
// conflict"): up to `retries` times the workload waits (retry_wait below),
// reads again, works again and writes again. Otherwise a timeout or a
// rejection ends the iteration unsuccessfully with one of
//   "read timed out", "read rejected: <reason>",
//   "write timed out", "write rejected: <reason>"
// (after a retry, with " (after N retries)" appended); an accepted write
// ends it successfully with the kind's success text (likewise suffixed).
//
// Client policies: before the read, before `work` and before the write the
// iteration asks Iteration::stop_before_step (on_lease_loss "abort"), and
// just before sending the write Iteration::stop_before_write
// (check_lease_before_write); an answer ends the iteration unsuccessfully
// with that outcome.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/resource/resource.hpp"
#include "models/workloads/arithmetic.hpp"
#include "models/workloads/workload.hpp"

namespace fencesim::workloads {

class RegisterWorkload : public Workload {
 public:
  explicit RegisterWorkload(WorkloadSetup setup) : setup_(std::move(setup)) {}
  IterationResult iterate(const Iteration& it) final;

 protected:
  /// What an accepted read returned.
  struct Seen {
    std::int64_t value = 0;
    std::int64_t version = 0;  ///< the CAS version
    std::string tag;           ///< who tagged the value ("" untagged)
  };
  /// The value the iteration writes after reading `seen`.
  virtual std::int64_t next_value(const Seen& seen) const = 0;
  /// The tag the write carries; empty: untagged.
  virtual std::string tag() const { return {}; }
  /// The outcome of an accepted write of `written` computed from `seen`.
  virtual std::string success_text(const Seen& seen, std::int64_t written) const = 0;

  /// The wait between the read and the write: `work`; nullopt: no wait at
  /// all (the leader, whose `work` is the interval between writes).
  virtual std::optional<Duration> work_between() const { return setup_.spec.work; }
  /// The kind's own reason to stop before a step (the leader: its belief
  /// ended); nullopt: go on.
  virtual std::optional<std::string> own_stop(const Iteration& it) const {
    (void)it;
    return std::nullopt;
  }

  const WorkloadSetup& setup() const { return setup_; }

 private:
  /// Sends `req` to the client's copy; the reply, or nullptr on timeout.
  std::shared_ptr<const resource::OpReply> ask(sim::Process& p, sim::PayloadPtr req) const;
  /// The read step: what was seen, or the failed outcome in `failure`.
  std::optional<Seen> read(const Iteration& it, std::string& failure) const;
  /// The write step after `seen`; `conflict` is set when a `cas` resource
  /// rejected it (the version changed since the read).
  IterationResult write(const Iteration& it, const Seen& seen, bool& conflict) const;
  /// One read, work, write attempt.
  IterationResult attempt(const Iteration& it, bool& conflict) const;
  /// The wait before CAS retry `k` (0 for the first), workload.retry_backoff:
  ///   fixed:  retry_interval, every time (lockstep clients stay in lockstep);
  ///   jitter: "Exponential Backoff And Jitter", equal jitter (Marc Brooker,
  ///           AWS Architecture Blog, 2015): t = min(cap, base × 2^k), wait
  ///           t/2 + random_between(0, t/2), with base = retry_interval and
  ///           cap = 16 × retry_interval; drawn from the client's own stream
  ///           "client/<name>/cas-retry" (created at the first retry, so a
  ///           run without conflicts draws nothing).
  Duration retry_wait(sim::Process& p, int k);

  WorkloadSetup setup_;
  std::optional<sim::Rng> retry_rng_;
};

}  // namespace fencesim::workloads
