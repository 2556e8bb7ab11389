// models/etcd/etcd.hpp — the etcd-like lock service on the Raft core.
//
// Shape: `EtcdService` owns one `EtcdMember` per node etcd-0 … etcd-{n-1};
// each member runs a raft::RaftNode (models/etcd/raft) and, above it, an MVCC
// key-value state machine and a lessor. Clients (models/client/
// etcd_client.cpp) speak the requests of this header. Units: durations are
// sim::Duration; a lease's TTL is a whole number of seconds on the wire as in
// etcd, kept here as a Duration.
//
// Behaviour modelled, with sources (etcd v3.4/3.5 server code):
//  * Revisions (mvcc/kvstore.go): the store starts at revision 1 (here: the
//    bootstrap leader's empty entry); every write transaction that changes
//    something adds one; per key create_revision, mod_revision, version and
//    lease. A transaction that changes nothing (a txn whose branch only
//    reads, a delete of a missing key) leaves the revision alone.
//  * Txn with compare on create_revision, range (first- or last-created under
//    a prefix, as clientv3 WithFirstCreate / WithLastCreate + WithMaxCreateRev),
//    delete, watch from a revision (mvcc/watchable_store.go: events at or
//    after the start revision, replayed from history when it is older).
//  * Writes go through Raft: the member that serves the client proposes (a
//    follower forwards the proposal to its known leader, etcdserver
//    v3_server.go / raft's MsgProp forwarding) and answers once it has applied
//    the entry. A member that knows no leader answers "no leader" at once
//    (etcdserver ErrNoLeader), which is a failure, not a refusal.
//  * Linearizable reads use ReadIndex through the leader
//    (etcdserver linearizableReadLoop).
//  * Leases (lease/lessor.go): grant and revoke are Raft writes; keepalive is
//    not — the leader resets the expiry to now + TTL on its monotonic clock
//    and answers the TTL (Renew); a keepalive for an unknown or already
//    expired lease is answered TTL 0 and never extends it. The leader's
//    lessor checks expiry every 500 ms (revokeExpiredLeases,
//    expiredLeaseRetryInterval) and proposes one revocation per expired
//    lease; revocation deletes the attached keys. On a new leader, when it
//    applies its term's empty entry, Promote sets every lease's expiry to
//    now + election timeout (the configured one) + TTL; non-leaders never
//    expire leases (lessor Demote).
//  * `keepalive_checks_leadership`: false as etcd 3.4.3 (etcdserver/
//    v3_server.go @ v3.4.3 LeaseRenew lines 268-293: a leader that lost its
//    quorum keeps answering keepalives until CheckQuorum steps it down); true
//    as etcd from 3.4.31 and 3.5.13 (LeaseRenew first calls
//    ensureLeadership, a linearizable read index, i.e. confirms leadership
//    with a quorum). The check is made only for a keepalive a client sent
//    to the leader itself: one a follower forwards reaches the leader's
//    leasehttp handler, which calls lessor.Renew at once (lease/leasehttp/
//    http.go @ v3.4.34 and server/lease/leasehttp/http.go @ v3.5.16,
//    ServeHTTP, LeasePrefix), so it is renewed as 3.4.3 renews it.
//  * `keepalive_skips_check_if_active` (with keepalive_checks_leadership):
//    ensureLeadership's shortcut, etcd from 3.4.34 and 3.5.16 (commit
//    9dee9b7ab "Skip leadership check if the etcd instance is active
//    processing heartbeats"; etcdserver/server.go @ v3.4.34 lines 1177-1201,
//    server/etcdserver/server.go @ v3.5.16 lines 1214-1232): if
//    `latestTickTs + 3 × TickMs` is after `time.Now()` the leader renews
//    without the read index. latestTickTs is the time of the member's own
//    latest Raft tick (etcdserver/raft.go raftNode.tick), so the check asks
//    whether the member's Raft loop is ticking, not whether anyone hears
//    it: a leader cut off from its peers stays active and renews on its own
//    until CheckQuorum steps it down. Here: the member's monotonic reading
//    is before RaftNode::last_tick() + 3 × heartbeat (heartbeat is TickMs).
//    Both readings are on the member's monotonic clock, as Go's time.Now()
//    and Time.After compare monotonic readings: a clock that runs slow
//    (clock_drift) slows the ticks and the reading alike, so such a member
//    stays active. Deviations: the model's ticks keep running while a WAL
//    fsync is pending (in etcd the leader's Save blocks the Ready loop and
//    with it the ticker, one of the cases the check is for); after a pause
//    the member replays what fell due in due order, so a tick that fell due
//    before a keepalive arrived runs first and the member is active again
//    when it answers (in etcd the raft loop's buffered tick and the gRPC
//    handler race).
//    `lock.version` sets both with the rest of a release
//    (models/etcd/versions.hpp).
//
// The service observer records in the History when a holder's lease ends at
// the service: the true time the leader learns that the entry revoking the
// lease or deleting the holder's key is committed (it applies it), and the
// grant: the true time a member evaluated the request whose answer made the
// client the owner (docs/FORMAT.md "Grants and tokens", "Lease end at the service").
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/etcd/raft/raft.hpp"
#include "models/etcd/txn.hpp"
#include "models/history.hpp"
#include "models/lock_service.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::etcd {

using sim::Duration;
using sim::NodeId;
using sim::Time;
using LeaseId = std::int64_t;

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  LeaseId lease = 0;
};

enum class ReqKind {
  kLeaseGrant,   ///< ttl → lease id, granted TTL
  kLeaseRevoke,  ///< lease
  kKeepAlive,    ///< lease → TTL (0: unknown or expired)
  kLockTxn,      ///< concurrency.Mutex tryAcquire: txn(create_rev(key)==0, put key with lease, get key) + getOwner
  kLastCreated,  ///< range prefix, max create revision, last created (waitDeletes)
  kGet,          ///< get key (the Mutex's final re-check when `lock_check`)
  kDelete,       ///< delete key (Unlock)
  kWatch,        ///< watch key for deletion from `revision`
  kPut,          ///< put key = value (with `lease` if non-zero)
  /// LeaseTimeToLive (a program client's, models/program/requests_etcd.cpp):
  /// the leader's lessor's remaining TTL, without renewing (v3_server.go
  /// LeaseTimeToLive: a follower asks the leader); -1 s for an unknown
  /// lease, as api/v3rpc/lease.go answers ErrLeaseNotFound.
  kTimeToLive,
  /// Range (a program client's): every live key in [key, range_end) in key
  /// order (txn.hpp key_in_range), at most `revision` of them when it is
  /// positive (the request's limit), served as kGet is.
  kRange,
  /// The general Txn (a program client's, models/etcd/txn.hpp): `txn`,
  /// through Raft.
  kTxn,
  /// Watch [key, range_end) from `revision` (0: from the next revision):
  /// every put and delete, pushed as WatchEvents until kWatchCancel
  /// (mvcc/watchable_store.go; a program client's).
  kWatchRange,
  /// Cancels the kWatchRange `watch_id` of the sender; no answer.
  kWatchCancel,
};

struct Request final : sim::Payload {
  ReqKind kind = ReqKind::kGet;
  std::string key;
  std::string prefix;
  std::string value;                   ///< kPut
  std::string range_end;               ///< kRange, kWatchRange: "" for the key alone
  std::shared_ptr<const TxnSpec> txn;  ///< kTxn
  LeaseId lease = 0;
  Duration ttl{0};
  std::int64_t revision = 0;  ///< kLastCreated: max create revision; kWatch: start revision
  std::uint64_t watch_id = 0;
  /// kGet: the Mutex's re-check of its own key. kLastCreated: the waiter's
  /// last read before it owns `key` (created at `revision` + 1) with no
  /// re-check to follow (etcd 3.4's Mutex, `mutex_checks_own_key` false).
  bool lock_check = false;
  std::string describe() const override;
};

/// One operation's answer in a txn's response (etcd's ResponseOp).
struct TxnOpResult {
  TxnOp::Kind kind = TxnOp::Kind::kRange;
  std::vector<KeyValue> kvs;  ///< kRange: the keys found, at most the limit
  std::int64_t count = 0;     ///< kRange: the keys in the range
  bool more = false;          ///< kRange: the limit left some out
  std::int64_t deleted = 0;   ///< kDelete: the keys deleted
};

struct Response final : sim::Payload {
  std::string error;  ///< "" ok; "no leader", "lease not found", ...
  std::int64_t header_revision = 0;
  LeaseId lease = 0;
  Duration ttl{0};
  bool succeeded = false;              ///< kLockTxn: the compare held (the key was created now)
  Duration granted_ttl{0};             ///< kTimeToLive: the TTL the lease was granted with
  std::vector<KeyValue> range;         ///< kRange: the keys found, in key order
  std::int64_t count = 0;              ///< kRange: the keys in the range
  std::int64_t deleted = 0;            ///< kDelete: the keys deleted (0 or 1)
  std::vector<TxnOpResult> responses;  ///< kTxn: one per operation of the branch taken
  std::optional<KeyValue> kv;          ///< kLockTxn: own key; kGet / kLastCreated: the key found
  std::optional<KeyValue> owner;       ///< kLockTxn: first created key under the prefix
  std::string describe() const override;
};

/// A watch event pushed to a client (not a reply).
struct WatchEvent final : sim::Payload {
  std::uint64_t watch_id = 0;
  std::string key;
  std::int64_t revision = 0;  ///< the deletion's revision
  std::string describe() const override { return "WATCH DELETE " + key; }
};

/// What a kWatchRange watch pushes: the events of one revision (or, at
/// registration, every past event from its start revision), in order.
struct WatchEvents final : sim::Payload {
  struct Event {
    bool put = false;  ///< a put; a delete otherwise (kv: key and mod_revision only)
    KeyValue kv;
  };
  std::uint64_t watch_id = 0;
  std::int64_t header_revision = 0;
  std::vector<Event> events;
  std::string describe() const override;
};

class EtcdService;

/// One member: Raft + MVCC store + lessor.
class EtcdMember final : public sim::NodeBehaviour {
 public:
  EtcdMember(EtcdService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h);
  void start();
  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;

  /// The disk_stall fault: the member's Raft Ready loop blocks until true
  /// time `until` (raft::RaftNode::stall; a stall already running is
  /// lengthened to the later end); the server keeps the view of the leader
  /// it had when the stall began until it ends. A crash ends it. Returns
  /// false when a stall already runs past `until`.
  bool stall(Time until);
  /// The running stall's end (true time), if one runs.
  std::optional<Time> stall_end() const { return raft_.stalled() ? std::optional<Time>(stall_until_) : std::nullopt; }
  /// Whether the server takes itself for the leader: Raft's role, or while
  /// stalled the role it had when the stall began (etcd's s.isLeader()
  /// reads the lead the Ready loop last recorded; the lessor stays primary
  /// until that loop demotes it). LeaseRenew, LeaseTimeToLive and the
  /// leasehttp handler ask this; proposals and reads go through Raft.
  bool serves_as_leader() const { return raft_.stalled() ? stall_is_leader_ : raft_.is_leader(); }
  /// The leader the server relays lease requests to, likewise.
  NodeId served_leader() const { return raft_.stalled() ? stall_lead_ : raft_.leader(); }
  raft::RaftNode& raft() { return raft_; }
  const raft::RaftNode& raft() const { return raft_; }
  sim::Node& node() const { return node_; }
  std::int64_t revision() const { return revision_; }
  const std::map<std::string, KeyValue>& keys() const { return keys_; }
  bool has_lease(LeaseId id) const { return leases_.count(id) != 0; }
  /// The lessor's deadline for `id` on this member's monotonic clock; only a
  /// promoted leader keeps deadlines (lessor Demote clears them), so nullopt
  /// elsewhere and for an unknown lease. For tests and reports.
  std::optional<Time> lease_expiry(LeaseId id) const {
    auto it = expiry_.find(id);
    return it == expiry_.end() ? std::nullopt : std::optional<Time>(it->second);
  }

 private:
  struct Pending {
    sim::Message request;  // the client's message, to reply to
    std::shared_ptr<const Request> req;
  };
  struct Watch {
    NodeId client = sim::kNoNode;
    std::uint64_t id = 0;
    std::string key;
    std::int64_t from = 0;
  };
  struct RangeWatch {
    NodeId client = sim::kNoNode;
    std::uint64_t id = 0;
    std::string key, range_end;
  };

  void handle_client(const sim::Message& m, const Request& r);
  void propose(const sim::Message& m, std::shared_ptr<const Request> r, std::uint64_t id, raft::Command command);
  void serve_read(const sim::Message& m, std::shared_ptr<const Request> r);
  void answer_read(const sim::Message& m, const Request& r);
  void keepalive(const sim::Message& m, LeaseId lease, NodeId reply_via);
  Duration renew(LeaseId lease);
  /// LeaseTimeToLive on this member: the leader answers from its lessor, a
  /// follower asks the leader.
  void time_to_live(const sim::Message& m, LeaseId lease);
  /// A follower sends a keepalive or a TTL lookup (`kind`) to the leader
  /// and answers the client with the leader's answer.
  void relay_to_leader(const sim::Message& m, ReqKind kind, LeaseId lease);
  /// The leader's lessor: the lease's remaining TTL (0 once past its
  /// deadline), nullopt for an unknown lease.
  std::optional<Duration> remaining(LeaseId lease) const;
  /// A client's keepalive at a member that believes it leads: etcd's
  /// LeaseRenew → ensureLeadership (see the header comment), then Renew;
  /// `answer` gets the TTL, or an error for the client.
  void renew_as_leader(LeaseId lease, std::function<void(Duration, const std::string&)> answer);
  void apply(raft::Index index, raft::Term term, const raft::Command& command);
  // The pieces of apply, one per kind of entry.
  /// LeaseGrant: the lease id is the entry's index; the TTL at least min_lease_ttl.
  void apply_grant(raft::Index index, Duration asked, Response& resp);
  /// LeaseRevoke: deletes the lease's keys (into `deleted`); false if the lease is unknown.
  bool apply_revoke(LeaseId lease, Response& resp, std::vector<std::pair<std::string, std::int64_t>>& deleted);
  /// The Mutex's tryAcquire txn; fills kv and owner when `answering`.
  void apply_lock(const std::string& key, LeaseId lease, std::string_view prefix, Response& resp, bool answering);
  /// A plain Put with an optional lease.
  void apply_put(const std::string& key, LeaseId lease, const std::string& value, Response& resp, bool answering);
  /// Creates or overwrites `key` at revision `rev` (the caller moves
  /// revision_), moving it to `lease`; records the put's event.
  void put_key(const std::string& key, const std::string& value, LeaseId lease, std::int64_t rev);
  /// The general txn (txn.cpp): compares, then a branch; deletions into
  /// `deleted`; moves revision_ itself when something changed.
  void apply_txn(const TxnSpec& txn, Response& resp, std::vector<std::pair<std::string, std::int64_t>>& deleted);
  bool compare_holds(const TxnCompare& c) const;
  /// Records the grant of each scenario lock key `txn` created.
  void grant_created_locks(const TxnSpec& txn, const Response& resp, const Pending& p);
  void range_into(const std::string& key, const std::string& range_end, std::int64_t limit, TxnOpResult& out) const;
  /// A put or delete for the range watches (kept only when the service
  /// keeps events, EtcdService::keeps_events).
  void record_event(bool put, const KeyValue& kv);
  /// Pushes this apply's recorded events to the range watches they match.
  void dispatch_events();
  void watch_range(const sim::Message& m, const Request& r);
  /// The Mutex's watch of one key's deletion (kWatch).
  void watch_delete(const sim::Message& m, const Request& r);
  void delete_key(const std::string& key, std::vector<std::pair<std::string, std::int64_t>>& deleted);
  void notify_watches(const std::string& key, std::int64_t revision);
  void promote();
  void lessor_tick(std::uint64_t gen);
  /// Sends `command` to the leader Raft knows as a follower's MsgProp (held
  /// while the member's Ready loop is stalled); none known: dropped.
  void forward_proposal(raft::Command command);
  void reply_error(const sim::Message& m, const std::string& error);

  EtcdService& svc_;
  sim::Node& node_;
  int index_;
  raft::RaftNode raft_;
  // The state machine (volatile: rebuilt from the log on restart).
  std::int64_t revision_ = 1;
  std::map<std::string, KeyValue> keys_;
  std::map<LeaseId, Duration> leases_;  ///< lease → TTL
  /// Keys attached to a lease, sorted. A flat sorted vector, not a set: a
  /// session's lease keeps one key that each lock adds and each unlock
  /// removes, and the vector keeps its room between them.
  struct AttachedKeys {
    std::vector<std::string> keys;
    void insert(const std::string& k) {
      auto it = std::lower_bound(keys.begin(), keys.end(), k);
      if (it == keys.end() || *it != k) keys.insert(it, k);
    }
    void erase(const std::string& k) {
      auto it = std::lower_bound(keys.begin(), keys.end(), k);
      if (it != keys.end() && *it == k) keys.erase(it);
    }
  };
  std::map<LeaseId, AttachedKeys> lease_keys_;
  /// Every deletion, in revision order, for watch replay (a watch from a
  /// recent revision looks at the few deletions since).
  struct Deletion {
    std::int64_t revision = 0;
    std::string key;
  };
  std::vector<Deletion> deletions_;
  /// Every put and delete in revision order, for the range watches' replay
  /// (only when the service keeps events), and this apply's.
  std::vector<WatchEvents::Event> events_;
  std::size_t undispatched_ = 0;  ///< events_ from here on are this apply's
  std::vector<RangeWatch> range_watches_;
  // Volatile member state.
  sim::PooledMap<std::uint64_t, Pending> pending_;  ///< request id (in the command) → client request
  sim::PooledMap<std::uint64_t, Pending> relays_;   ///< keepalive relayed to the leader → client request
  std::uint64_t next_request_ = 1;
  std::vector<std::pair<std::string, std::int64_t>> deleted_scratch_;  ///< apply's deletions (reused)
  std::vector<Watch> watches_;
  std::map<LeaseId, Time> expiry_;  ///< leader's lessor: monotonic deadline
  std::set<LeaseId> revoking_;
  std::uint64_t lessor_gen_ = 0;
  Time stall_until_{0};                ///< the running stall's end, true time
  std::uint64_t stall_seq_ = 0;        ///< which stall an end event belongs to
  bool stall_is_leader_ = false;       ///< serves_as_leader() while stalled
  NodeId stall_lead_ = sim::kNoNode;   ///< served_leader() while stalled
  bool revoke_ignored_noted_ = false;  ///< the note of an ignored revocation, once per demotion
  bool revoke_forward_noted_ = false;  ///< the note of a forwarded revocation, once per demotion
  std::int64_t next_lease_ = 1;
};

/// A follower's proposal forwarded to its leader (raft MsgProp).
struct ForwardProposal final : sim::Payload {
  raft::Command command;
  std::string describe() const override { return "MsgProp"; }
};

/// The service as a LockService (models/lock_service.hpp): group "etcd"
/// (etcd-0 …), role alias "etcd-leader", the disk_stall fault, and the
/// raft_safety verdict (raft::check_raft_safety over raft_history()).
class EtcdService final : public LockService {
 public:
  EtcdService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> members);
  ~EtcdService() override;
  void start() override;

  // --- LockService ----------------------------------------------------------
  /// "etcd-leader": leader(), or nullopt with "there is no etcd leader".
  std::optional<NodeId> resolve_role(const std::string& role, std::string& why) const override;
  /// `disk_stall` (target: a member's name, resolved by the fault): the
  /// member's Raft Ready loop blocks for the fault's duration
  /// (raft::RaftNode::stall). Skipped when the member is down.
  bool apply_fault(const FaultSpec& f, std::string& why) override;
  /// The session + concurrency.Mutex client; client `index` starts on
  /// member index mod n (client::make_etcd_client).
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t index) override;
  /// The raft_safety verdict of the run so far.
  std::vector<Verdict> own_verdicts() const override;
  /// A hash of the Raft events (models/fingerprint.hpp raft_fingerprint).
  std::optional<std::uint64_t> fingerprint() const override;

  sim::Simulation& sim() { return sim_; }
  History& history() { return history_; }
  const EtcdSpec& spec() const { return spec_; }
  Duration ttl() const { return ttl_; }
  /// The smallest lease TTL the lessor grants: (3 × electionTicks / 2)
  /// heartbeats rounded up to whole seconds (etcdserver minTTL).
  Duration min_lease_ttl() const { return min_lease_ttl_; }
  const std::vector<NodeId>& members() const { return member_ids_; }
  EtcdMember& member(std::size_t i) { return *members_[i]; }
  std::size_t size() const { return members_.size(); }
  raft::RaftHistory& raft_history() { return raft_history_; }

  /// Whether members keep every put and delete for range watches: only
  /// when some client is a program (the built-in client watches deletions
  /// of one key, which the members keep anyway).
  bool keeps_events() const { return keeps_events_; }
  /// Whether `key` is one of the scenario's locks (lock.key, or one of
  /// lock.keys): a general Txn that creates it grants that lock.
  bool is_lock_key(const std::string& key) const {
    return key == lock_.key || std::find(lock_.keys.begin(), lock_.keys.end(), key) != lock_.keys.end();
  }

  /// Role alias `etcd-leader`: the leader of the highest term now, if any.
  std::optional<NodeId> leader() const;

  // Hooks for the members.
  void on_grant(EtcdMember& m, NodeId client, const KeyValue& kv, std::int64_t header_revision);
  void on_key_deleted(EtcdMember& m, const std::string& key, std::int64_t create_revision, std::string_view why,
                      LeaseEndCause cause);
  /// A member's lessor was promoted: holds whose key it no longer has end
  /// now, if no leader recorded their end yet.
  void on_promoted(EtcdMember& m);

 private:
  sim::Simulation& sim_;
  History& history_;
  LockSpec lock_;
  EtcdSpec spec_;
  Duration ttl_;
  std::vector<NodeId> member_ids_;
  raft::RaftHistory raft_history_;
  std::vector<std::unique_ptr<EtcdMember>> members_;
  std::set<std::pair<std::int64_t, std::string>> granted_;  ///< holds recorded: (create revision, key)
  Duration min_lease_ttl_{0};
  bool keeps_events_ = false;
};

/// The lease value a History uses for an etcd hold: "<key>@<create revision>".
std::string hold_value(const std::string& key, std::int64_t create_revision);

}  // namespace fencesim::etcd
