// models/client/client.hpp — lock clients and the workloads that use them.
//
// Shape: one `ClientNode` behaviour per client node. It runs the iterations
// as a process and owns a `LockClient` (nullptr for `service: none`, the
// lock-free CAS loop) and a `workloads::Workload` (models/workloads/), which
// decides what an iteration does against the resource. The workload never
// consults the renewal state before writing (docs/FORMAT.md "Clients"), exactly
// like most client libraries.
//
// Belief (what the properties rely on): a client believes it holds the lock
// from the moment its process handles the grant until it sends the release,
// learns that a renewal was refused (for etcd: that its session ended), or
// crashes. A pause or a timeout does not end a belief.
//
// Timeouts: every command waits at most `command_timeout` on the client's
// monotonic clock; a reply after that is dropped. Acquire attempts, renewals
// and releases are retried; resource reads and writes are not.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "models/history.hpp"
#include "models/scenario.hpp"
#include "models/workloads/workload.hpp"
#include "sim/simulation.hpp"

namespace fencesim::client {

/// What a successful acquire hands the workload.
struct Lease {
  std::string value;                  ///< unique per attempt (Redis value, etcd key)
  std::optional<std::int64_t> token;  ///< fencing token, if the design has one
};

/// The interface a lock service's client implements (Redis single primary
/// with Sentinel, Redlock, and etcd's concurrency.Mutex).
class LockClient {
 public:
  virtual ~LockClient() = default;
  /// Called once per process start (and after a restart), before acquiring.
  virtual void init(sim::Process& p) { (void)p; }
  /// Blocks until the lock is granted, retrying as the design does.
  virtual Lease acquire(sim::Process& p) = 0;
  /// Releases; the belief ends when the release is sent.
  virtual void release(sim::Process& p) = 0;
  /// Messages that are not replies (e.g. Sentinel +switch-master).
  virtual void on_message(const sim::Message& m) { (void)m; }
  /// The node crashed: the belief ends; volatile state goes.
  virtual void on_crash() = 0;
};

/// Shared bookkeeping for implementations: belief records in the History.
class LockClientBase : public LockClient {
 public:
  LockClientBase(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock);
  void on_crash() override;

 protected:
  void begin_belief(const Lease& l);
  void end_belief(const std::string& reason);
  /// A fresh random value for an acquire attempt (hex, 16 digits).
  std::string fresh_value();
  sim::Time clock_now() const { return node_.clock(spec_.renew_clock); }

  sim::Node& node_;
  History& history_;
  ClientSpec spec_;
  LockSpec lock_;
  sim::Rng rng_;
  std::optional<std::size_t> belief_;
  std::uint64_t renew_gen_ = 0;  ///< bumps on release/crash to stop the renewal process
};

/// Builds the lock client for a scenario's service (nullptr for `none`).
/// `service_nodes` are redis-0 … (or etcd-0 …), `sentinels` sentinel-0 ….
std::unique_ptr<LockClient> make_redis_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels);

/// The etcd session + concurrency.Mutex client; `index` is the client's
/// position k in the expanded client list (it starts on member k mod n).
std::unique_ptr<LockClient> make_etcd_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                             std::vector<sim::NodeId> members, std::size_t index);

/// The node of one client: the iterations, its lock client and its workload.
///
/// Each iteration: an IterationRecord ("started"), acquire (if there is a
/// lock client), `acquired`, the workload's iterate with the lease's value
/// and the token writes carry (the lease's token when the client has
/// `fencing` and the resource is fenced, otherwise none), its outcome (and
/// `done` on success), release, then `think` before the next. A crash ends
/// the belief, marks an unfinished iteration "crashed" and tells the
/// workload; a restart continues the remaining iterations.
class ClientNode final : public sim::NodeBehaviour {
 public:
  /// The workload is the one `spec.workload.kind` names (workloads::make_workload).
  ClientNode(sim::Node& node, History& h, const Scenario& sc, const ClientSpec& spec, sim::NodeId resource_copy,
             std::unique_ptr<LockClient> lock);
  /// With a workload of the caller's (tests, custom drivers); not nullptr.
  ClientNode(sim::Node& node, History& h, const Scenario& sc, const ClientSpec& spec, sim::NodeId resource_copy,
             std::unique_ptr<LockClient> lock, std::unique_ptr<workloads::Workload> workload);
  /// Schedules the first start at `spec.start`.
  void start();
  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;
  LockClient* lock() const { return lock_.get(); }
  workloads::Workload& workload() const { return *workload_; }

 private:
  /// The body of the client's process: the remaining iterations.
  void run(sim::Process& p);
  /// One iteration, from its record to the release.
  void iterate(sim::Process& p, int index);

  sim::Node& node_;
  History& history_;
  ClientSpec spec_;
  ResourceSpec resource_;
  ServiceKind service_;
  sim::NodeId resource_copy_;
  std::unique_ptr<LockClient> lock_;
  std::unique_ptr<workloads::Workload> workload_;
  /// Draws a work or think duration: `lo`, or uniform in [lo, *hi] from
  /// workload_rng_ (WorkloadSpec work_max / think_max).
  Duration draw(Duration lo, const std::optional<Duration>& hi);

  sim::Rng workload_rng_;  ///< "client/<name>/workload": only ranges draw from it
  int next_iteration_ = 0;
  bool start_reached_ = false;                    ///< the true time `spec.start` has come
  std::optional<std::size_t> current_iteration_;  ///< index into history.iterations
};

}  // namespace fencesim::client
