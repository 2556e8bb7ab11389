// models/hazelcast/client.cpp — a Hazelcast Java client's FencedLock: the
// proxy (lockAndGetFence, unlock) and its CP session manager.
//
// Sources: hazelcast/hazelcast at commit 217b161d (the 5.3 line):
// cp/internal/datastructures/lock/proxy/AbstractFencedLockProxy.java,
// cp/internal/session/AbstractProxySessionManager.java and
// client/cp/internal/session/ClientProxySessionManager.java.
//  * lockAndGetFence: one invocation uid for the whole call. It acquires a
//    session (a new one when it has none — CreateSessionOp — or when the one
//    it has is idle and older than its TTL by the client's wall clock; the
//    acquire count goes up), then sends the LockOp. SessionExpiredException:
//    the session is invalidated and the loop tries again with a new session
//    and the same uid. Fence 0: LockAcquireLimitReachedException.
//  * The session manager heartbeats every heartbeat interval (the one the
//    session's creation answered) each session in use (acquire count > 0:
//    a lock held or wanted); SessionExpiredException invalidates the
//    session. Nothing tells the application: a holder whose session expired
//    believes it holds the lock until its next call on the lock.
//  * unlock: when the session it locked with is gone (invalidated by a
//    heartbeat's SessionExpiredException, or replaced), the proxy throws
//    LockOwnershipLostException without a call; SessionExpiredException
//    from the UnlockOp invalidates the session and becomes
//    LockOwnershipLostException. A successful unlock releases the session
//    (the acquire count goes down).
//  * Invocations: a request goes to the client's member (client k starts on
//    hz-(k mod n)); no answer within clients[].command_timeout: the client
//    takes the connection for dead and sends it again, same uid, to the
//    next member (the Java client retries an invocation whose connection
//    closed on another member; a crashed member's socket closes at once,
//    while a partitioned one is noticed only after the client heartbeat
//    timeout of 60 s — here after command_timeout either way). "No leader":
//    again after 500 ms. A queued LockOp waits for its member to answer
//    when the lock becomes its; if a heartbeat finds that member dead, the
//    waiting call is sent again to the next member and attaches to its
//    wait key.
// Not modelled: tryLock with a timeout, the invocation giving up after
// hazelcast.invocation.max.retry.count, and re-entrant calls (a client takes
// the lock once per iteration; tests/models/hazelcast drives the state
// machine's re-entrant path directly).
#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/hazelcast/hazelcast.hpp"
#include "models/validate.hpp"
#include "sim/promise.hpp"

namespace fencesim::hazelcast {

namespace {

/// What wakes a waiting lock(): its member's answer, or (null) the
/// connection moved to another member.
struct Wake {
  std::shared_ptr<const LockAnswer> answer;
};

class HzLockClient final : public client::LockClientBase {
 public:
  HzLockClient(HazelcastService& svc, sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
               std::vector<NodeId> members, std::size_t index)
      : LockClientBase(node, h, spec, lock),
        svc_(svc),
        members_(std::move(members)),
        cursor_(index % members_.size()),
        thread_(static_cast<std::int64_t>(index) + 1),
        wakes_(node.sim()) {}

  void init(sim::Process& p) override {
    (void)p;
    if (running_) return;
    running_ = true;
    node_.spawn("hz-session-heartbeat", [this](sim::Process& hp) { heartbeat_task(hp); });
  }

  client::Lease acquire(sim::Process& p) override {
    for (;;) {
      if (auto lease = lock_and_get_fence(p)) return *lease;
      p.sleep(spec_.retry_interval);  // the call threw: the application tries again
    }
  }

  /// AbstractFencedLockProxy.lockAndGetFence; nothing when it throws.
  std::optional<client::Lease> lock_and_get_fence(sim::Process& p) {
    const std::string uid = fresh_value();  // one invocation uid for the whole call
    for (;;) {
      const SessionId session = acquire_session(p);
      Request r;
      r.op = Op::kLock;
      r.session = session;
      r.lock = lock_.key;
      r.thread = thread_;
      r.uid = uid;
      const sim::Time sent = node_.monotonic();
      std::shared_ptr<const Response> resp = invoke(p, r);
      Fence fence = resp->fence;
      std::string error = resp->error;
      if (error.empty() && resp->waiting) {
        const auto answer = wait_for_lock(p, r);
        fence = answer.first;
        error = answer.second;
      }
      if (error == errors::kSessionExpired) {
        invalidate(session);
        continue;
      }
      if (!error.empty() || fence == kInvalidFence) {
        // WaitKeyCancelledException / LockAcquireLimitReachedException.
        release_session(session);
        history_.note(node_.sim().now(), spec_.name, "lock failed",
                      error.empty() ? "LockAcquireLimitReachedException" : error);
        return std::nullopt;
      }
      locked_session_ = session;
      client::Lease lease{
          hold_value(lock_.key, fence),
          lock_.hazelcast().token == HzToken::kFence ? std::optional<std::int64_t>(fence) : std::nullopt, ""};
      begin_belief(lease);
      confirmed(sent);
      return lease;
    }
  }

  void release(sim::Process& p) override {
    end_belief("release");
    const SessionId locked = locked_session_;
    locked_session_ = 0;
    if (locked == 0 || session_ != locked) {
      // AbstractFencedLockProxy.unlock: the session it locked with is gone
      // (verifyLockedSessionIdIfPresent), and the proxy throws without a call.
      history_.note(node_.sim().now(), spec_.name, "unlock failed",
                    "LockOwnershipLostException (CP session " + std::to_string(locked) + " is gone)");
      return;
    }
    Request r;
    r.op = Op::kUnlock;
    r.session = locked;
    r.lock = lock_.key;
    r.thread = thread_;
    r.uid = fresh_value();
    const std::shared_ptr<const Response> resp = invoke(p, r);
    if (resp->error == errors::kSessionExpired) {
      invalidate(locked);
      history_.note(node_.sim().now(), spec_.name, "unlock failed",
                    "LockOwnershipLostException (the CP session expired)");
      return;
    }
    if (!resp->error.empty()) {
      history_.note(node_.sim().now(), spec_.name, "unlock failed", resp->error);
    }
    release_session(locked);
  }

  void on_message(const sim::Message& m) override {
    if (const auto* a = m.as<LockAnswer>()) wakes_.push(Wake{std::shared_ptr<const LockAnswer>(m.body, a)});
  }

  void on_crash() override {
    LockClientBase::on_crash();
    // A restarted client is a new process: new sessions (the old one lives
    // on at the CP group until it expires).
    session_ = 0;
    in_use_ = 0;
    locked_session_ = 0;
    running_ = false;
  }

 private:
  /// AbstractProxySessionManager.acquireSession.
  SessionId acquire_session(sim::Process& p) {
    const bool idle_too_long = in_use_ == 0 && node_.wall() >= session_created_ + ttl_;
    if (session_ == 0 || idle_too_long) {
      Request r;
      r.op = Op::kCreateSession;
      r.endpoint = spec_.name;
      const std::shared_ptr<const Response> resp = invoke(p, r);
      session_ = resp->session;
      ttl_ = resp->ttl;
      heartbeat_interval_ = resp->heartbeat;
      session_created_ = node_.wall();
      in_use_ = 0;
    }
    ++in_use_;
    return session_;
  }

  void release_session(SessionId s) {
    if (s == session_ && in_use_ > 0) --in_use_;
  }

  void invalidate(SessionId s) {
    if (s != session_) return;
    history_.note(node_.sim().now(), spec_.name, "session expired",
                  "CP session " + std::to_string(s) + " expired (SessionExpiredException)");
    session_ = 0;
    in_use_ = 0;
  }

  /// The member the client talks to now.
  NodeId member() const { return members_[cursor_]; }

  /// The connection to the current member is taken for dead: the next one.
  void next_member() {
    cursor_ = (cursor_ + 1) % members_.size();
    wakes_.push(Wake{});
  }

  /// Sends `r` until a member answers it (other than "no leader").
  std::shared_ptr<const Response> invoke(sim::Process& p, const Request& r) {
    for (;;) {
      auto reply = p.call(member(), sim::make_payload<Request>(r), spec_.command_timeout);
      const Response* resp = reply ? reply->as<Response>() : nullptr;
      if (resp == nullptr) {
        next_member();
        continue;
      }
      if (resp->error == errors::kNoLeader) {
        p.sleep(kInvocationRetryPause);
        continue;
      }
      return std::shared_ptr<const Response>(std::move(reply->body), resp);
    }
  }

  /// A queued LockOp: waits for its answer; if the connection moves to
  /// another member, the same LockOp goes there (it attaches to the wait
  /// key, or answers the fence if the lock became the client's meanwhile).
  /// The Java client's TCP connection retransmits an answer a short
  /// partition held up; the model's messages are datagrams, so a client
  /// that has waited command_timeout asks its member whether the LockOp has
  /// been answered (kLockAnswered: a read of the member's applied state, no
  /// Raft entry).
  std::pair<Fence, std::string> wait_for_lock(sim::Process& p, const Request& r) {
    for (;;) {
      const auto w = wakes_.receive(p, spec_.command_timeout);
      if (!w) {
        Request q = r;
        q.op = Op::kLockAnswered;
        auto reply = p.call(member(), sim::make_payload<Request>(std::move(q)), spec_.command_timeout);
        const Response* a = reply ? reply->as<Response>() : nullptr;
        if (a != nullptr && (a->fence != kInvalidFence || !a->error.empty())) return {a->fence, a->error};
        continue;
      }
      if (w->answer) {
        if (w->answer->uid != r.uid) continue;  // an answer to an earlier call
        return {w->answer->fence, w->answer->error};
      }
      const std::shared_ptr<const Response> resp = invoke(p, r);
      if (!resp->error.empty() || !resp->waiting) return {resp->fence, resp->error};
    }
  }

  /// AbstractProxySessionManager's HeartbeatTask.
  void heartbeat_task(sim::Process& p) {
    for (;;) {
      p.sleep(heartbeat_interval_);
      const SessionId s = session_;
      if (s == 0 || in_use_ == 0) continue;
      Request r;
      r.op = Op::kHeartbeat;
      r.session = s;
      const sim::Time sent = node_.monotonic();
      auto reply = p.call(member(), sim::make_payload<Request>(r), spec_.command_timeout);
      const Response* resp = reply ? reply->as<Response>() : nullptr;
      if (resp == nullptr) {
        next_member();
        continue;
      }
      if (resp->error == errors::kSessionExpired) {
        invalidate(s);
      } else if (resp->error.empty() && belief_ && s == locked_session_) {
        confirmed(sent);
      }
    }
  }

  HazelcastService& svc_;
  std::vector<NodeId> members_;
  std::size_t cursor_;
  std::int64_t thread_;
  sim::Mailbox<Wake> wakes_;
  bool running_ = false;
  SessionId session_ = 0;
  int in_use_ = 0;
  sim::Time session_created_{0};
  Duration ttl_{0};
  Duration heartbeat_interval_ = svc_.spec().session_heartbeat_interval;
  SessionId locked_session_ = 0;  ///< lockedSessionIds[thread]
};

}  // namespace

std::unique_ptr<client::LockClient> make_client(HazelcastService& svc, sim::Node& node, History& h,
                                                const ClientSpec& spec, const LockSpec& lock,
                                                std::vector<NodeId> members, std::size_t index) {
  return std::make_unique<HzLockClient>(svc, node, h, spec, lock, std::move(members), index);
}

}  // namespace fencesim::hazelcast
