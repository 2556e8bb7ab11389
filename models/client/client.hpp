// models/client/client.hpp — lock clients and the workloads that use them.
//
// Shape: one `ClientNode` behaviour per client node. It runs the iterations
// as a process and owns a `LockClient` (nullptr for `service: none`, the
// lock-free CAS loop) and a `workloads::Workload` (models/workloads/), which
// decides what an iteration does against the resource. By default the
// workload never consults the renewal state before writing (docs/FORMAT.md
// "Clients"), exactly like most client libraries; the client policies
// (check_lease_before_write, on_lease_loss, lease_loss_after: docs/FORMAT.md
// "Client policies", models/client/policies.hpp) make it.
//
// Belief (what the properties rely on): a client believes it holds the lock
// from the moment its process handles the grant until it sends the release,
// learns that a renewal was refused (for etcd: that its session ended), gives
// the lease up by its own lease_loss_after, or crashes. A pause or a timeout
// does not end a belief.
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

#include "models/client/policies.hpp"
#include "models/history.hpp"
#include "models/scenario.hpp"
#include "models/workloads/workload.hpp"
#include "sim/simulation.hpp"

namespace fencesim::client {

/// The client's own record of its lease, for the client policies.
struct LeaseState {
  bool believes = false;  ///< a belief is open
  /// The belief ended because the client learned the lease was lost (not
  /// by its release or a crash); `lost_reason` says how.
  bool lost = false;
  std::string lost_reason;
  /// The client's monotonic time when it sent the last request that
  /// succeeded in confirming the lease: the grant (etcd: the session's lease
  /// grant) or a renewal (etcd: a keepalive). Empty before any.
  std::optional<sim::Time> confirmed_sent;
};

/// What a successful acquire hands the workload.
struct Lease {
  std::string value;                  ///< unique per attempt (Redis value, etcd key)
  std::optional<std::int64_t> token;  ///< fencing token, if the design has one
  /// The queue design: the message received (`value` is its receipt
  /// handle, `token` its receive count); empty for a lock.
  std::string message_id;
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
  /// The end of an iteration whose workload step `succeeded` or not. A lock
  /// releases either way; the queue deletes the message only after its
  /// effect was applied (or answered "already applied") and otherwise
  /// leaves it to time out.
  virtual void finish(sim::Process& p, bool succeeded) {
    (void)succeeded;
    release(p);
  }
  /// Not empty after an acquire that gave up on a permanent error of the
  /// design (Redis Cluster's CROSSSLOT): the service's error text; the
  /// Lease it returned is empty, and the iteration fails without a write
  /// and without a release.
  virtual std::string acquire_error() const { return ""; }
  /// Whether acquire_error() is a permanent error of the design (CROSSSLOT:
  /// counted in service_errors, "acquire failed: ") or a library that gave
  /// up on a lock another held (redsync's Lock after its tries,
  /// redislock's Obtain: "acquire gave up: "; the next iteration tries again).
  virtual bool acquire_error_permanent() const { return true; }
  /// Messages that are not replies (e.g. Sentinel +switch-master).
  virtual void on_message(const sim::Message& m) { (void)m; }
  /// The node crashed: the belief ends; volatile state goes.
  virtual void on_crash() = 0;
  /// The client's own record of its lease (a client without one: nothing).
  virtual LeaseState lease_state() const { return {}; }
  /// The client's ClientPolicy (models/client/policy.hpp); nullptr: the
  /// ClientNode makes one of the spec for the workload.
  virtual ClientPolicyRunner* policy_runner() { return nullptr; }
};

/// Shared bookkeeping for implementations: belief records in the History.
class LockClientBase : public LockClient {
 public:
  LockClientBase(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock);
  void on_crash() override;
  LeaseState lease_state() const override;
  ClientPolicyRunner* policy_runner() override { return &policy_; }

 protected:
  void begin_belief(const Lease& l);
  void end_belief(const std::string& reason);
  /// The client learned that the lease is lost (a refused renewal, an ended
  /// session, lease_loss_after): counts a lease loss and ends the belief.
  void lose_lease(const std::string& reason);
  /// A request sent at `sent` (the client's monotonic time) confirmed the
  /// lease: a grant or a successful renewal. Arms lease_loss_after from
  /// `sent` unless `arm_lease_loss` is false (a client that counts it from
  /// elsewhere, with arm_lease_loss_at).
  void confirmed(sim::Time sent, bool arm_lease_loss = true);
  /// Arms lease_loss_after to run out when the client's monotonic clock
  /// reads `reading` (replacing an armed one); `reason` is the lease loss's.
  /// Nothing without lease_loss_after.
  void arm_lease_loss_at(sim::Time reading, std::string reason);
  /// Disarms lease_loss_after (an armed deadline no longer runs out).
  void disarm_lease_loss();
  /// lease_loss_after ran out (no confirmation for that long): the client
  /// gives the lease up. Redis and Redlock: the renewal stops and the belief
  /// ends; etcd overrides it to end the session.
  virtual void lease_loss_deadline(const std::string& reason);
  /// A fresh random value for an acquire attempt (hex, 16 digits).
  std::string fresh_value();
  /// The policy's renew clock (renew_clock for the built-in one).
  sim::Time clock_now() const { return node_.clock(policy_.renew_clock()); }
  /// Does the client renew (the policy's renews(); `renew` for the built-in)?
  bool renews() const { return policy_.renews(); }
  /// Sleeps on `p` until the next renewal the policy gives for a lease
  /// granted at `granted` whose last successful renewal's reply came at
  /// `last` (both on clock_now()'s clock) after `renewals` renewals.
  void sleep_until_renewal(sim::Process& p, sim::Time granted, sim::Time last, int renewals);
  /// A renewal attempt got no answer for the `failures`-th time: true when
  /// the policy gives the lease up — then the failed renewal is recorded
  /// (it began at true time `first_sent`) and lease_loss_deadline ends the
  /// belief ("renewal failed (<policy>)"); the renewal must stop.
  bool renewal_failed(sim::Time first_sent, int failures);

  sim::Node& node_;
  History& history_;
  ClientSpec spec_;
  LockSpec lock_;
  sim::Rng rng_;
  std::optional<std::size_t> belief_;
  std::uint64_t renew_gen_ = 0;  ///< bumps on release/crash to stop the renewal process
  ClientPolicyRunner policy_;    ///< ClientSpec::policy, or the built-in one

 private:
  bool lost_ = false;
  std::string lost_reason_;
  std::optional<sim::Time> confirmed_sent_;
  sim::TimerId loss_timer_;
  std::uint64_t loss_gen_ = 0;
};

/// Builds the lock client for a scenario's service (nullptr for `none`).
/// `service_nodes` are redis-0 … (or etcd-0 …), `sentinels` sentinel-0 ….
std::unique_ptr<LockClient> make_redis_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels);

/// Redisson's RLock (`fenced` false) or RFencedLock on one primary with
/// Sentinel (clients[].library "redisson", "redisson-fenced";
/// models/client/redisson_client.cpp).
std::unique_ptr<LockClient> make_redisson_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                 const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                 std::vector<sim::NodeId> sentinels, bool fenced,
                                                 const std::string& version);

/// bsm/redislock on one primary with Sentinel (clients[].library
/// "bsm-redislock"; models/client/bsm_redislock_client.cpp).
std::unique_ptr<LockClient> make_bsm_redislock_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                      const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                      std::vector<sim::NodeId> sentinels);

/// The Redlock client over pools with replicas and Sentinel
/// (lock.redlock with lock.replicas and lock.sentinels): `pools` are each
/// pool's servers, its initial primary first; `pool_sentinels` each pool's
/// sentinels. The client sends to each pool's current primary, following
/// that pool's +switch-master and asking its sentinels after a timeout.
std::unique_ptr<LockClient> make_redlock_pool_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                     const LockSpec& lock, std::vector<std::vector<sim::NodeId>> pools,
                                                     std::vector<std::vector<sim::NodeId>> pool_sentinels);

/// The cluster-aware client of Redis Cluster mode (lock.cluster): `servers`
/// are redis-s0-0 … in shard-major order, `shards` their number; client k
/// asks server k mod n first for the slot map.
std::unique_ptr<LockClient> make_redis_cluster_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                      const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                      int shards, std::size_t index);

/// The etcd session + concurrency.Mutex client; `index` is the client's
/// position k in the expanded client list (it starts on member k mod n).
std::unique_ptr<LockClient> make_etcd_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                             std::vector<sim::NodeId> members, std::size_t index);

/// The queue worker's client of the work queue (models/queue/queue.hpp):
/// acquire = ReceiveMessage (an empty queue: retry after retry_interval),
/// renewal = ChangeMessageVisibility, finish = DeleteMessage.
std::unique_ptr<LockClient> make_queue_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              sim::NodeId queue);

/// The lock table's client (models/table/table.hpp): ShedLock for expiry
/// "holder_clock" and "db_clock", client-go's LeaderElector for "observed"
/// (models/client/table_client.cpp says what each step does).
std::unique_ptr<LockClient> make_table_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              sim::NodeId db);

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
  /// A leader that still believes it holds the lock keeps it (keeps_lock).
  bool keeping_lock() const;
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
  bool start_reached_ = false;                      ///< the true time `spec.start` has come
  std::optional<std::size_t> current_iteration_;    ///< index into history.iterations
  Lease lease_;                                     ///< the lease of the current belief
  std::unique_ptr<ClientPolicies> policies_;        ///< nullptr without a lock client
  std::unique_ptr<ClientPolicyRunner> own_policy_;  ///< for a lock client without a policy_runner()
};

}  // namespace fencesim::client
