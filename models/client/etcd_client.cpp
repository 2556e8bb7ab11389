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
// passes. A Lock waiting on an ended session fails; the next attempt opens a
// new session.
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
        signals_(node.sim()) {}

  Lease acquire(sim::Process& p) override {
    for (;;) {
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
  }

 private:
  struct WatchState {
    std::uint64_t id = 0;
    std::string key;
    std::int64_t from = 0;
  };

  sim::NodeId member() const { return members_[cursor_]; }

  void move() {
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
    auto reply = p.call(member(), std::move(req), spec_.command_timeout);
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
    reset_deadline(gen);
    const sim::Time granted = clock_now();
    if (renews()) {
      node_.spawn("keepalive", [this, gen, granted](sim::Process& kp) { keepalive_loop(kp, gen, granted); });
    }
    return true;
  }

  void reset_deadline(std::uint64_t gen) {
    node_.cancel(deadline_);
    deadline_ = node_.at_clock(sim::ClockKind::kMonotonic, node_.monotonic() + session_ttl_, [this, gen] {
      if (gen == session_gen_) end_session("session deadline passed");
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
    if (lock_.etcd.token == EtcdToken::kCreateRevision) token = kv.create_revision;
    if (lock_.etcd.token == EtcdToken::kHeaderRevision) token = header_revision;
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
    const bool gives_up = lock_.etcd.lock_fails_on_session_end;
    auto session_over = [&] { return gives_up && gen != session_gen_; };
    // waitDeletes(ctx, client, prefix, myRev - 1)
    std::int64_t last_header = 0;
    for (;;) {
      if (session_over()) return std::nullopt;
      auto q = sim::make_payload<Request>();
      q->kind = ReqKind::kLastCreated;
      q->prefix = prefix;
      q->revision = my_rev - 1;
      if (!lock_.etcd.mutex_checks_own_key) {
        // No re-check follows: the answer that finds no key before ours
        // makes us the owner (3.4 mutex.go Lock: m.hdr = hdr; return nil).
        q->key = key_;
        q->lock_check = true;
      }
      auto last = call(p, q);
      if (session_over()) return std::nullopt;
      if (!last) {
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
        auto sig = signals_.receive(p, spec_.command_timeout);
        if (session_over()) {
          watch_.reset();
          return std::nullopt;
        }
        if (!sig) break;
        if (watch_ && sig->watch_id == watch_->id) deleted = true;
      }
      watch_.reset();
    }
    if (!lock_.etcd.mutex_checks_own_key) {
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
    for (;;) {
      if (gen != session_gen_) return std::nullopt;
      auto g = sim::make_payload<Request>();
      g->kind = ReqKind::kGet;
      g->key = key_;
      g->lock_check = true;
      auto own = call(p, g);
      if (gen != session_gen_) return std::nullopt;
      if (!own) {
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
  sim::TimerId deadline_;
  std::string key_;
  std::optional<WatchState> watch_;
  std::uint64_t next_watch_ = 0;
};

}  // namespace

std::unique_ptr<LockClient> make_etcd_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                             std::vector<sim::NodeId> members, std::size_t index) {
  return std::make_unique<EtcdLockClient>(node, h, spec, lock, std::move(members), index);
}

}  // namespace fencesim::client
