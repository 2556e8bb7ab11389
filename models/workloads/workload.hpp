// models/workloads/workload.hpp — what a client does with the resource in
// one iteration, one class per workload kind, and the factory that builds
// the one a client's `workload.kind` names.
//
// Shape (after FoundationDB's one-class-per-workload files and their
// factory): client::ClientNode owns one Workload. It runs the iterations:
// it records the IterationRecord, acquires the lock (if the design has
// one), hands the workload an `Iteration`, records what it returns,
// releases, thinks, and handles crashes and restarts. The workload decides
// what an iteration does against the resource — which requests it sends to
// the client's resource copy, what it computes, how long it works — and
// says whether the iteration succeeded. The resource copies record the
// operations themselves (History::resource_ops), so a workload writes
// nothing to the History.
//
// Kinds (docs/FORMAT.md "Workloads"), one file each:
//   sequence_allocator.cpp  read the counter, work, write counter + block
//   counter.cpp             read, work, write value + 1
//   writer.cpp              read version v (and its tag), work, write v + 1
//                           tagged with the client's name
//   leader.cpp              one write of a leader that keeps the lock across
//                           iterations and writes every `work` (keeps_lock)
//   queue_worker.cpp        (the lock is a received message) work, apply
//                           the message's effect at the ledger
// The first three share register_workload.hpp: one read, `work`, one write,
// each awaited at most `command_timeout`. Against a `cas` resource the write
// carries the version read, and a version conflict is re-read and
// re-applied up to `retries` times, so with `service: none` each of them is
// the lock-free CAS loop of the format.
//
// Client policies (docs/FORMAT.md "Client policies") reach a workload
// through Iteration::lease (a LeaseView): it asks before each step and
// before each write whether to go on.
//
// Adding a workload: a WorkloadKind value (models/scenario.hpp, its name in
// scenario.cpp), the loader's workload section, one file here with its class
// and its maker (declared below), a case in make_workload (workload.cpp) and
// the file in models/CMakeLists.txt.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::workloads {

/// What a workload is given once, when its client's node is built.
struct WorkloadSetup {
  std::string client;               ///< the client's name (its node's name)
  WorkloadSpec spec;                ///< kind, block, work, iterations, think
  ResourceSpec resource;            ///< the protected resource (kind, fence_reads, …)
  sim::NodeId copy;                 ///< the resource copy this client talks to
  Duration command_timeout;         ///< how long each request waits for its answer
  Duration retry_interval = 100ms;  ///< the client's retry_interval: the wait before a CAS retry
};

/// The client's view of its own lease, as its policies see it
/// (docs/FORMAT.md "Client policies"); models/client/policies.hpp.
class LeaseView {
 public:
  virtual ~LeaseView() = default;
  /// Does the client still believe it holds the lock?
  virtual bool believes() const = 0;
  /// How the belief ended when the client learned that the lease was lost
  /// ("renewal refused", "session ended: …"); empty while it has not.
  virtual std::string lost_reason() const = 0;
  /// `on_lease_loss: "abort"` and the lease learned lost: the outcome the
  /// iteration stops with before its next step; nullopt: go on.
  virtual std::optional<std::string> stop_before_step() const = 0;
  /// stop_before_step, then `check_lease_before_write` (or a custom
  /// ClientPolicy's before_write, which may wait on `p` and re-check): the
  /// outcome the iteration is abandoned with instead of writing; nullopt: write.
  virtual std::optional<std::string> stop_before_write(sim::Process& p) const = 0;
};

/// One iteration, as the client hands it over with the lock held (or, with
/// `service: none`, without a lock).
struct Iteration {
  sim::Process& process;              ///< the client's workload process: sleep and call with it
  int index = 0;                      ///< 0-based, counted over the client's whole run (restarts continue it)
  std::string lease_value;            ///< the lease's unique value; empty without a lock
  std::optional<std::int64_t> token;  ///< the token requests carry; empty with fencing off or no token
  std::string message_id;             ///< queue_worker: the message received (lease_value is its receipt)
  const LeaseView* lease = nullptr;   ///< the client's policies; nullptr without a lock

  std::optional<std::string> stop_before_step() const { return lease ? lease->stop_before_step() : std::nullopt; }
  std::optional<std::string> stop_before_write() const {
    return lease ? lease->stop_before_write(process) : std::nullopt;
  }
  /// This iteration's work, drawn by the client from WorkloadSpec's range;
  /// nullopt: WorkloadSpec::work.
  std::optional<Duration> work;
};

/// What an iteration came to. ClientNode records it in the IterationRecord:
/// `outcome` verbatim, `success` with `done` = the moment iterate returned.
struct IterationResult {
  bool success = false;
  std::string outcome;  ///< e.g. "ok: wrote 4", "write rejected: token 1 < last_seen 4", "read timed out"
};

class Workload {
 public:
  virtual ~Workload() = default;
  /// Runs one iteration on `it.process`; may block (sleep, call). A crash
  /// of the node unwinds it at any blocking point.
  virtual IterationResult iterate(const Iteration& it) = 0;
  /// The client's node crashed: volatile workload state goes (nothing for
  /// the register workloads; a queue worker forgets its receipts).
  virtual void on_crash() {}
  /// Does the client keep the lock from one iteration to the next while it
  /// believes it holds it, waiting `work` between iterations (the leader)?
  /// Otherwise it acquires and releases around every iteration and waits `think`.
  virtual bool keeps_lock() const { return false; }
};

/// The workload `setup.spec.kind` names. Never nullptr.
std::unique_ptr<Workload> make_workload(const WorkloadSetup& setup);

// One maker per kind, each defined in the kind's own file.
std::unique_ptr<Workload> make_sequence_allocator(const WorkloadSetup& setup);
std::unique_ptr<Workload> make_counter(const WorkloadSetup& setup);
std::unique_ptr<Workload> make_writer(const WorkloadSetup& setup);
std::unique_ptr<Workload> make_queue_worker(const WorkloadSetup& setup);
std::unique_ptr<Workload> make_leader(const WorkloadSetup& setup);

}  // namespace fencesim::workloads
