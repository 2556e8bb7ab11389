// The lock client for the etcd-like service: a session (one lease kept alive)
// and concurrency.Mutex, as etcd's client/v3/concurrency does it
// (session.go, mutex.go):
//
//   Lock:   put prefix/<lease-id> with the lease if its create revision is 0
//           (a txn that also reads the first-created key under the prefix);
//           if our key is not the first, waitDeletes: repeatedly find the
//           last-created key below our create revision and watch it until it
//           is deleted; then, as etcd 3.5 does, re-check our own key
//           (gone: ErrSessionExpired) — or, as etcd 3.4 does
//           (`mutex_checks_own_key` false, clientv3/concurrency/mutex.go
//           @ v3.4.3 lines 69-77), return at once: owner even if the key
//           and the lease expired while waiting (etcd-io/etcd#11456).
//           A Lock waiting while its session ends fails at once only with
//           `lock_fails_on_session_end` (the model's own combination; every
//           release keeps waiting). Versions: models/etcd/versions.hpp.
//   Unlock: delete the key.
//   Token:  the key's create revision (or, by option, the header revision of
//           the answer that made the client owner).
//
// Member choice (docs/FORMAT.md "etcd"): client k talks to etcd-(k mod n) and,
// after a failure ("no leader", a read that failed) or a command timeout,
// moves every request, keepalive and watch to the next member by index; a
// watch is re-created there from the last revision it saw.
//
// Session (session.go, clientv3 lease keepAliveOnce): one lease per client,
// opened at the first acquire and reused; keepalives every renew_interval
// on renew_clock after the last successful reply; the session ends — and the
// belief with it — when a keepalive is answered TTL ≤ 0 or when its own
// deadline (the client's monotonic time at the last successful reply + TTL)
// is found passed. clientv3 looks for passed deadlines once a second, not
// at the deadline (clientv3/lease.go `deadlineLoop`: `time.After(time.Second)`,
// then every keepalive whose `deadline.Before(now)` is closed; the same code
// at v3.4.3, v3.4.23 — Debian's golang-etcd-server-dev — v3.5.0 and v3.5.16).
// The loop starts with the client's first KeepAlive (`firstKeepAliveOnce`,
// here: the first session's grant reply) and runs for the client's life, so
// the session ends at the first tick (first KeepAlive + k·1 s, k ≥ 1) after
// the deadline: up to 1 s late. A Lock waiting on an ended session fails;
// the next attempt opens a new session.
// Not modelled: clientv3 sends a first keepalive at once (its answer, not
// the grant's, starts the deadline; its own deadline before that answer is
// DialTimeout + 1 s, `firstKeepAliveTimeout`), and it sends keepalives from
// a 500 ms loop (`sendKeepAliveLoop`, `retryConnWait`) once TTL/3 has passed
// since the last answer; the model sends them every renew_interval after
// the last reply (docs/CONFORMANCE.md).
//
// `clients[].library: "jetcd"` (docs/FORMAT.md "etcd client libraries"):
// the Java client as Jepsen's etcd lock test used it (jepsen-io/etcd @
// 16149cb, v0.1.0, src/jepsen/etcd/lock.clj acquire!/release!, client.clj;
// jetcd-core 0.4.1, read at tag jetcd-0.4.1 of etcd-io/jetcd, and 0.5.0,
// which has the same behaviour):
//   * Endpoints: Jepsen builds each client with its own member's URL only
//     (client.clj `client`: endpoints [node]), and jetcd's channel uses
//     gRPC pick_first (ClientConnectionManager.java, defaultLoadBalancingPolicy
//     "pick_first"): the client stays on its member, it never moves.
//   * Retries: ClientConnectionManager.execute retries only what
//     Util.isRetryable accepts, an "invalid auth token" error; every other
//     failure reaches the caller. A failed step fails the acquire attempt.
//   * Lease and lock API use: each acquire grants a fresh lease of the TTL
//     (Lease.grant), registers it for keepalives (Lease.keepAlive) and calls
//     Lock.lock(name, leaseId), the server-side lock RPC (etcd's v3lock runs
//     the same concurrency.Mutex in the member with the client's lease). The
//     attempt waits at most command_timeout for the lock (Jepsen's `await`,
//     5000 ms); on failure or timeout the keepalive is closed and the lease
//     revoked, once. Release: close the keepalive, Unlock(key) (delete the
//     key) and revoke the lease, one request each.
//   * Keepalives (LeaseImpl.java): a tick every 500 ms
//     (scheduleAtFixedRate(…, 0, 500, MILLISECONDS), late ticks catch up)
//     sends a keepalive for each lease whose nextKeepAlive < now
//     (System.currentTimeMillis: the wall clock), again on every tick until
//     one is answered. An answer with TTL > 0 sets nextKeepAlive = now +
//     TTL·1000/3 ms and deadLine = now + TTL; TTL ≤ 0 ends the keepalive
//     ("requested lease not found"). A new keepalive starts with
//     nextKeepAlive = now and deadLine = now + 5000 ms
//     (FIRST_KEEPALIVE_TIMEOUT_MS). A second tick every 1000 ms removes
//     every keepalive whose deadLine < now. The model ends the session (and
//     the belief) at either; renew_interval and renew_clock do not apply.
//   * Modelled, not exact: the server-side Mutex's steps (the lock txn,
//     waitDeletes' range and watch) are sent by the client to its member
//     and cross the network, where the real ones run inside the member; and
//     a Lock that the member keeps waiting on after the client gave up is
//     not carried on (its key stays until its lease, no longer kept alive or
//     revoked, ends — as in the real run once the revoke went through).
#include <algorithm>
#include <charconv>

#include "models/client/client.hpp"
#include "models/etcd/etcd.hpp"

namespace fencesim::client {

using etcd::ReqKind;
using etcd::Request;
using etcd::Response;

namespace {

struct WatchSignal {
  std::uint64_t watch_id = 0;  ///< 0: the session ended
  std::int64_t revision = 0;
};

class EtcdLockClient final : public LockClientBase {
 public:
  EtcdLockClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                 std::vector<sim::NodeId> members, std::size_t index)
      : LockClientBase(node, h, spec, lock),
        members_(std::move(members)),
        cursor_(index % members_.size()),
        signals_(node.sim()),
        jetcd_(spec.library == ClientLibrary::kJetcd) {}

  Lease acquire(sim::Process& p) override {
    for (;;) {
      if (jetcd_) {
        if (auto lease = jetcd_attempt(p)) return *lease;
        p.sleep(spec_.retry_interval);
        continue;
      }
      if (!alive_ && !open_session(p)) {
        p.sleep(spec_.retry_interval);
        continue;
      }
      if (auto lease = lock(p)) return *lease;
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    end_belief("release");
    const std::string key = key_;
    if (jetcd_) {
      // Jepsen's release!: close the keepalive listener, Unlock, revoke; one
      // request each (jetcd retries none of them).
      const etcd::LeaseId id = lease_id_;
      close_session();
      auto del = sim::make_payload<Request>();
      del->kind = ReqKind::kDelete;
      del->key = key;
      call(p, del);
      revoke(p, id);
      return;
    }
    for (;;) {
      auto req = sim::make_payload<Request>();
      req->kind = ReqKind::kDelete;
      req->key = key;
      if (auto r = call(p, req); r && r->error.empty()) return;
      if (!node_.up()) return;
    }
  }

  void on_message(const sim::Message& m) override {
    if (const auto* ev = m.as<etcd::WatchEvent>()) {
      if (watch_ && ev->watch_id == watch_->id) signals_.push(WatchSignal{ev->watch_id, ev->revision});
    }
  }

  /// lease_loss_after ran out: the client gives the session up, as when its
  /// own deadline passes (the next acquire opens a new one).
  void lease_loss_deadline(const std::string& reason) override {
    if (alive_) end_session(reason);
  }

  void on_crash() override {
    LockClientBase::on_crash();
    alive_ = false;
    ++session_gen_;
    watch_.reset();
    deadline_ = sim::TimerId{};
    deadline_ticks_from_.reset();  // a restarted client is a new clientv3.Client
    ka_running_ = false;
    lock_deadline_.reset();
  }

 private:
  struct WatchState {
    std::uint64_t id = 0;
    std::string key;
    std::int64_t from = 0;
  };

  sim::NodeId member() const { return members_[cursor_]; }

  void move() {
    if (jetcd_) return;  // one endpoint: jetcd stays on its member
    cursor_ = (cursor_ + 1) % members_.size();
    if (watch_) send_watch();  // re-created on the new member from the last revision seen
  }

  void send_watch() {
    auto req = sim::make_payload<Request>();
    req->kind = ReqKind::kWatch;
    req->key = watch_->key;
    req->revision = watch_->from;
    req->watch_id = watch_->id;
    node_.send(member(), req);
  }

  /// One request to the current member. Nothing on a timeout or a failure
  /// answer ("no leader", a failed read): the client then moves to the next
  /// member. Refusals (an error such as "lease not found") come back.
  /// The answer is the reply's own body, shared, not a copy.
  std::shared_ptr<const Response> call(sim::Process& p, std::shared_ptr<Request> req) {
    const std::size_t used = cursor_;
    auto reply = p.call(member(), std::move(req), request_timeout());
    const Response* r = reply ? reply->as<Response>() : nullptr;
    if (r == nullptr || (!r->error.empty() && r->error != "lease not found")) {
      // The keepalive loop and the Lock share one member (clientv3 uses one
      // connection for both). When both were waiting on the same failed
      // member, only the first failure moves: the second must not skip the
      // member the first one moved to.
      if (cursor_ == used) move();
      return nullptr;
    }
    return std::shared_ptr<const Response>(std::move(reply->body), r);
  }

  bool open_session(sim::Process& p) {
    auto req = sim::make_payload<Request>();
    req->kind = ReqKind::kLeaseGrant;
    req->ttl = lock_.ttl;
    const sim::Time sent = node_.monotonic();
    auto r = call(p, req);
    if (!r || !r->error.empty()) return false;
    confirmed(sent);
    lease_id_ = r->lease;
    session_ttl_ = r->ttl;
    alive_ = true;
    const std::uint64_t gen = ++session_gen_;
    if (jetcd_) {
      jetcd_keepalive(p);
      return true;
    }
    // clientv3's deadlineLoop starts with the client's first KeepAlive.
    if (!deadline_ticks_from_) deadline_ticks_from_ = node_.monotonic();
    reset_deadline(gen);
    const sim::Time granted = clock_now();
    if (renews()) {
      node_.spawn("keepalive", [this, gen, granted](sim::Process& kp) { keepalive_loop(kp, gen, granted); });
    }
    return true;
  }

  /// The session's deadline is now + TTL; it is found passed at the first
  /// of deadlineLoop's 1 s ticks strictly after it (`deadline.Before(now)`).
  void reset_deadline(std::uint64_t gen) {
    node_.cancel(deadline_);
    const sim::Time deadline = node_.monotonic() + session_ttl_;
    const sim::Time from = *deadline_ticks_from_;
    const auto ticks = deadline < from ? 1 : (deadline - from) / kDeadlineTick + 1;
    deadline_ = node_.at_clock(sim::ClockKind::kMonotonic, from + ticks * kDeadlineTick, [this, gen] {
      if (gen == session_gen_) end_session("session deadline passed (found by clientv3's 1 s deadline check)");
    });
  }

  /// The session ends without the client learning of a lost lease: jetcd
  /// closes the keepalive of a released or abandoned lease.
  void close_session() {
    alive_ = false;
    ++session_gen_;
    node_.cancel(deadline_);
    deadline_ = sim::TimerId{};
    ka_first_unanswered_.reset();
  }

  /// Revoke `id`, once (jetcd: no retry).
  void revoke(sim::Process& p, etcd::LeaseId id) {
    auto req = sim::make_payload<Request>();
    req->kind = ReqKind::kLeaseRevoke;
    req->lease = id;
    call(p, req);
  }

  /// How long the next request may wait: command_timeout, and for jetcd's
  /// Lock no longer than what is left of the attempt's deadline.
  sim::Duration request_timeout() const {
    if (!lock_deadline_) return spec_.command_timeout;
    return std::clamp(*lock_deadline_ - node_.monotonic(), sim::Duration{1}, spec_.command_timeout);
  }
  bool lock_expired() const { return lock_deadline_ && node_.monotonic() >= *lock_deadline_; }

  /// One acquire of Jepsen's acquire! over jetcd: grant, keepAlive, lock
  /// within command_timeout; on failure close the keepalive and revoke.
  std::optional<Lease> jetcd_attempt(sim::Process& p) {
    if (!open_session(p)) return std::nullopt;
    lock_deadline_ = node_.monotonic() + spec_.command_timeout;
    auto lease = lock(p);
    lock_deadline_.reset();
    if (lease) return lease;
    const etcd::LeaseId id = lease_id_;
    close_session();
    revoke(p, id);
    return std::nullopt;
  }

  /// LeaseImpl.keepAlive: a new keepalive due at once, its deadline 5000 ms
  /// away; the two ticks start with the client's first keepalive.
  void jetcd_keepalive(sim::Process& p) {
    (void)p;
    if (!spec_.renew) return;
    ka_next_ = node_.wall();
    ka_deadline_ = node_.wall() + 5000ms;
    ka_first_unanswered_.reset();
    if (ka_running_) return;
    ka_running_ = true;
    const sim::Time start = node_.monotonic();
    node_.spawn("jetcd-keepalive", [this, start](sim::Process& kp) {
      for (sim::Time t = start;; t += 500ms) {
        kp.sleep_until(sim::ClockKind::kMonotonic, t);
        if (alive_ && node_.wall() > ka_next_) send_keepalive();
      }
    });
    node_.spawn("jetcd-deadline", [this, start](sim::Process& kp) {
      for (sim::Time t = start;; t += 1000ms) {
        kp.sleep_until(sim::ClockKind::kMonotonic, t);
        if (alive_ && node_.wall() > ka_deadline_) end_session("keepalive deadline passed (jetcd's deadline check)");
      }
    });
  }

  /// One keepalive on the stream; its answer, whenever it comes, updates
  /// the lease's next keepalive and deadline.
  void send_keepalive() {
    const std::uint64_t gen = session_gen_;
    const etcd::LeaseId id = lease_id_;
    if (!ka_first_unanswered_) ka_first_unanswered_ = node_.sim().now();
    const sim::Duration wait = std::max(session_ttl_, sim::Duration{5000ms});
    node_.spawn("keepalive", [this, gen, id, wait](sim::Process& kp) {
      auto req = sim::make_payload<Request>();
      req->kind = ReqKind::kKeepAlive;
      req->lease = id;
      const sim::Time sent = node_.monotonic();
      auto reply = kp.call(member(), std::move(req), wait);
      const Response* r = reply ? reply->as<Response>() : nullptr;
      if (gen != session_gen_ || !alive_ || r == nullptr || !r->error.empty()) return;
      const sim::Time first = ka_first_unanswered_.value_or(node_.sim().now());
      if (r->ttl <= sim::Duration{0}) {
        history_.renewals.push_back(RenewalRecord{spec_.name, first, node_.sim().now(), false});
        end_session("keepalive answered TTL 0 (jetcd: requested lease not found)");
        return;
      }
      history_.renewals.push_back(RenewalRecord{spec_.name, first, node_.sim().now(), true});
      ka_first_unanswered_.reset();
      const auto ttl_ms = std::chrono::floor<std::chrono::milliseconds>(r->ttl);
      ka_next_ = node_.wall() + ttl_ms / 3;
      ka_deadline_ = node_.wall() + ttl_ms;
      session_ttl_ = r->ttl;
      confirmed(sent);
    });
  }

  void end_session(const std::string& why) {
    if (!alive_) return;
    alive_ = false;
    ++session_gen_;
    node_.cancel(deadline_);
    deadline_ = sim::TimerId{};
    lose_lease("session ended: " + why);
    signals_.push(WatchSignal{0, 0});
  }

  void keepalive_loop(sim::Process& p, std::uint64_t gen, sim::Time granted) {
    sim::Time last = granted;
    for (int renewals = 0;; ++renewals) {
      sleep_until_renewal(p, granted, last, renewals);
      if (gen != session_gen_) return;
      const sim::Time first_sent = node_.sim().now();
      for (int failures = 1;; ++failures) {
        auto req = sim::make_payload<Request>();
        req->kind = ReqKind::kKeepAlive;
        req->lease = lease_id_;
        const sim::Time sent = node_.monotonic();
        auto r = call(p, req);
        if (gen != session_gen_) return;
        if (r && r->error.empty()) {
          if (r->ttl <= sim::Duration{0}) {
            history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), false});
            end_session("keepalive answered TTL 0");
            return;
          }
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), true});
          session_ttl_ = r->ttl;
          confirmed(sent);
          reset_deadline(gen);
          last = clock_now();
          break;
        }
        if (renewal_failed(first_sent, failures)) return;
        p.sleep(spec_.retry_interval);
        if (gen != session_gen_) return;
      }
    }
  }

  Lease granted(const etcd::KeyValue& kv, std::int64_t header_revision) {
    std::optional<std::int64_t> token;
    if (lock_.etcd().token == EtcdToken::kCreateRevision) token = kv.create_revision;
    if (lock_.etcd().token == EtcdToken::kHeaderRevision) token = header_revision;
    Lease lease{etcd::hold_value(kv.key, kv.create_revision), token, ""};
    begin_belief(lease);
    return lease;
  }

  std::optional<Lease> lock(sim::Process& p) {
    const std::uint64_t gen = session_gen_;
    const std::string prefix = lock_.key + "/";
    // prefix/<lease id in hex>, as concurrency.NewMutex's pfx + fmt.Sprintf("%x", lease).
    key_ = prefix;
    char hex[16];
    key_.append(hex, std::to_chars(hex, hex + sizeof hex, static_cast<std::uint64_t>(lease_id_), 16).ptr);
    if (lock_expired()) return std::nullopt;
    auto txn = sim::make_payload<Request>();
    txn->kind = ReqKind::kLockTxn;
    txn->key = key_;
    txn->lease = lease_id_;
    txn->prefix = prefix;
    auto r = call(p, txn);
    if (!r) return std::nullopt;
    if (!r->error.empty() || !r->kv) {
      end_session(r->error.empty() ? "lock txn failed" : r->error);
      return std::nullopt;
    }
    const std::int64_t my_rev = r->kv->create_revision;
    if (r->owner && r->owner->create_revision == my_rev) return granted(*r->kv, r->header_revision);
    // Every release keeps waiting when the session ends meanwhile (the
    // Mutex watches with the Lock's context, not the session's); the
    // model's own combination gives up at once (models/etcd/versions.hpp).
    // jetcd's Lock runs in the member, which knows nothing of the client's
    // keepalive: it never gives up on its account.
    const bool gives_up = lock_.etcd().lock_fails_on_session_end && !jetcd_;
    auto session_over = [&] { return gives_up && gen != session_gen_; };
    // waitDeletes(ctx, client, prefix, myRev - 1)
    std::int64_t last_header = 0;
    for (;;) {
      if (session_over() || lock_expired()) return std::nullopt;
      auto q = sim::make_payload<Request>();
      q->kind = ReqKind::kLastCreated;
      q->prefix = prefix;
      q->revision = my_rev - 1;
      if (!lock_.etcd().mutex_checks_own_key) {
        // No re-check follows: the answer that finds no key before ours
        // makes us the owner (3.4 mutex.go Lock: m.hdr = hdr; return nil).
        q->key = key_;
        q->lock_check = true;
      }
      auto last = call(p, q);
      if (session_over()) return std::nullopt;
      if (!last) {
        if (jetcd_) return std::nullopt;  // the Lock RPC failed: no retry
        p.sleep(spec_.retry_interval);
        continue;
      }
      last_header = last->header_revision;
      if (!last->kv) break;
      watch_ = WatchState{++next_watch_, last->kv->key, last->header_revision};
      send_watch();
      // Wait for the deletion (concurrency waitDelete). A watch lives in its
      // member's volatile state: a member that crashes and comes back before
      // any keepalive fails has silently lost it. clientv3's watch stream
      // breaks with the connection and is re-created (watchGrpcStream
      // reconnect, resuming from the last revision); the model has no
      // connections, so a command_timeout without news stands in for the
      // broken stream: re-check the previous key (waitDeletes' Get again) and
      // watch it afresh.
      bool deleted = false;
      while (!deleted) {
        auto sig = signals_.receive(p, request_timeout());
        if (session_over()) {
          watch_.reset();
          return std::nullopt;
        }
        if (!sig) break;
        if (watch_ && sig->watch_id == watch_->id) deleted = true;
      }
      watch_.reset();
    }
    if (!lock_.etcd().mutex_checks_own_key) {
      // etcd 3.4: told it owns the lock, whether or not its key (and lease)
      // still exists (etcd-io/etcd#11456, #9921).
      etcd::KeyValue own;
      own.key = key_;
      own.create_revision = own.mod_revision = my_rev;
      own.version = 1;
      own.lease = lease_id_;
      return granted(own, last_header);
    }
    // Re-check our own key: gone means the session expired meanwhile.
    // (jetcd: the member's Mutex re-checks whatever the client's keepalive.)
    auto ended = [&] { return !jetcd_ && gen != session_gen_; };
    for (;;) {
      if (ended() || lock_expired()) return std::nullopt;
      auto g = sim::make_payload<Request>();
      g->kind = ReqKind::kGet;
      g->key = key_;
      g->lock_check = true;
      auto own = call(p, g);
      if (ended()) return std::nullopt;
      if (!own) {
        if (jetcd_) return std::nullopt;
        p.sleep(spec_.retry_interval);
        continue;
      }
      if (!own->kv || own->kv->create_revision != my_rev) {
        end_session("own lock key is gone (ErrSessionExpired)");
        return std::nullopt;
      }
      return granted(*own->kv, own->header_revision);
    }
  }

  std::vector<sim::NodeId> members_;
  std::size_t cursor_;
  sim::Mailbox<WatchSignal> signals_;
  bool alive_ = false;
  std::uint64_t session_gen_ = 0;
  etcd::LeaseId lease_id_ = 0;
  sim::Duration session_ttl_{0};
  /// clientv3's deadlineLoop period (lease.go: time.After(time.Second)).
  static constexpr sim::Duration kDeadlineTick = std::chrono::seconds(1);
  sim::TimerId deadline_;
  std::optional<sim::Time> deadline_ticks_from_;  ///< monotonic: the first KeepAlive
  std::string key_;
  std::optional<WatchState> watch_;
  std::uint64_t next_watch_ = 0;
  // library "jetcd"
  bool jetcd_;
  std::optional<sim::Time> lock_deadline_;  ///< monotonic: the current Lock attempt's end
  bool ka_running_ = false;                 ///< the two keepalive ticks run
  sim::Time ka_next_{0};                    ///< wall: nextKeepAlive
  sim::Time ka_deadline_{0};                ///< wall: deadLine
  std::optional<sim::Time> ka_first_unanswered_;
};

}  // namespace

std::unique_ptr<LockClient> make_etcd_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                             std::vector<sim::NodeId> members, std::size_t index) {
  return std::make_unique<EtcdLockClient>(node, h, spec, lock, std::move(members), index);
}

}  // namespace fencesim::client
