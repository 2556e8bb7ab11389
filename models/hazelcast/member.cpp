// models/hazelcast/member.cpp — one CP member: Raft below, the CP group's
// state machine above (CP sessions and FencedLocks; hazelcast.hpp says what
// is modelled and from which source).
#include <algorithm>

#include <fmt/format.h>

#include "models/hazelcast/hazelcast.hpp"

namespace fencesim::hazelcast {

namespace {

std::string render(const CpMember::Txn& t) {
  using K = CpMember::Txn::Kind;
  switch (t.kind) {
    case K::kCreateSession: return "CreateSessionOp " + t.endpoint;
    case K::kHeartbeat: return fmt::format("HeartbeatSessionOp {}", t.session);
    case K::kExpireSessions: {
      std::string s = "ExpireSessionsOp";
      for (const auto& [id, version] : t.expire) s += fmt::format(" {}v{}", id, version);
      return s;
    }
    case K::kLock: return fmt::format("LockOp {} session {} thread {}", t.lock, t.session, t.thread);
    case K::kUnlock: return fmt::format("UnlockOp {} session {} thread {}", t.lock, t.session, t.thread);
  }
  return "?";
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kCreateSession: return "CreateSession";
    case Op::kHeartbeat: return "HeartbeatSession";
    case Op::kLock: return "Lock";
    case Op::kUnlock: return "Unlock";
    case Op::kLockAnswered: return "LockAnswered?";
  }
  return "?";
}

std::string Request::describe() const {
  if (op == Op::kCreateSession) return "CreateSession " + endpoint;
  if (op == Op::kHeartbeat) return fmt::format("HeartbeatSession {}", session);
  return fmt::format("{} {} (session {}, thread {})", op_name(op), lock, session, thread);
}

std::string Response::describe() const {
  if (!error.empty()) return error;
  if (ttl > Duration{0}) return fmt::format("session {}", session);
  if (waiting) return "waiting";
  if (fence != kInvalidFence) return fmt::format("fence {}", fence);
  return still_locked ? "OK (still locked)" : "OK";
}

std::string LockAnswer::describe() const {
  return error.empty() ? fmt::format("{} locked, fence {}", lock, fence) : lock + ": " + error;
}

std::string hold_value(const std::string& name, Fence fence) { return fmt::format("{}#{}", name, fence); }

// ============================================================== CpMember ==

CpMember::CpMember(HazelcastService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h)
    : svc_(svc), node_(node), index_(index), raft_(node, std::move(cfg), h, /*attach=*/false) {
  node_.set_behaviour(this);
  raft::Callbacks cb;
  cb.apply = [this](raft::Index i, raft::Term t, const raft::Command& c) { apply(i, t, c); };
  cb.restarted = [this] {
    // The state machine is rebuilt from the log (Hazelcast restores its
    // snapshot and replays the log after it; CP persistence).
    locks_.clear();
    sessions_.clear();
    next_session_ = 0;
  };
  raft_.set_callbacks(std::move(cb));
}

void CpMember::start() {
  raft_.start();
  node_.every(kCheckExpiredSessionsPeriod, [this] { check_expired_sessions(); });
}

void CpMember::on_crash() {
  raft_.on_crash();
  pending_.clear();
  waiting_.clear();
}

void CpMember::on_restart() {
  raft_.on_restart();
  node_.every(kCheckExpiredSessionsPeriod, [this] { check_expired_sessions(); });
}

void CpMember::on_message(const sim::Message& m) {
  if (raft_.step(m)) return;
  if (const auto* r = m.as<Request>()) {
    handle_client(m, *r);
  } else if (const auto* f = m.as<ForwardOp>()) {
    if (raft_.is_leader()) raft_.propose(f->command);  // anyone else drops it: the client times out
  }
}

void CpMember::handle_client(const sim::Message& m, const Request& r) {
  if (raft_.leader() == sim::kNoNode) {
    auto resp = sim::make_payload<Response>();
    resp->error = errors::kNoLeader;
    node_.reply(m, resp);
    return;
  }
  if (r.op == Op::kLockAnswered) {
    auto resp = sim::make_payload<Response>();
    if (sessions_.count(r.session) == 0) {
      resp->error = errors::kSessionExpired;
    } else if (auto l = locks_.find(r.lock); l != locks_.end()) {
      auto a = l->second.answered.find({Endpoint{r.session, r.thread}, r.uid});
      if (a != l->second.answered.end()) resp->fence = a->second;
    }
    node_.reply(m, resp);
    return;
  }
  Txn t;
  t.session = r.session;
  t.lock = r.lock;
  t.thread = r.thread;
  t.uid = r.uid;
  switch (r.op) {
    case Op::kCreateSession:
      t.kind = Txn::Kind::kCreateSession;
      t.endpoint = r.endpoint;
      break;
    case Op::kHeartbeat: t.kind = Txn::Kind::kHeartbeat; break;
    case Op::kLock:
      t.kind = Txn::Kind::kLock;
      t.endpoint = node_.sim().node(m.from).name();
      break;
    case Op::kUnlock: t.kind = Txn::Kind::kUnlock; break;
    case Op::kLockAnswered: return;  // answered above
  }
  propose(m, std::move(t));
}

void CpMember::propose(const sim::Message& m, Txn txn) {
  const std::uint64_t id = next_request_++;
  txn.id = id;
  txn.from = static_cast<std::uint32_t>(index_);
  // Registered first: a one-member group applies inside propose().
  pending_[id] = Pending{m};
  auto command = raft::Command::with_decoded<Txn, render>(std::make_shared<const Txn>(std::move(txn)));
  if (raft_.is_leader()) {
    if (!raft_.propose(std::move(command))) {
      pending_.erase(id);
      auto resp = sim::make_payload<Response>();
      resp->error = errors::kNoLeader;
      node_.reply(m, resp);
    }
    return;
  }
  auto f = sim::make_payload<ForwardOp>();
  f->command = std::move(command);
  node_.send(raft_.leader(), f);
}

// ------------------------------------------------------------------ apply --

void CpMember::apply(raft::Index index, raft::Term term, const raft::Command& command) {
  (void)term;
  if (command.empty()) {
    // NotifyTermChangeOp → RaftSessionService.onNewTermCommit: every
    // session's expiration moves on by the heartbeat interval.
    for (auto& [id, s] : sessions_) {
      s.expiration += svc_.spec().session_heartbeat_interval;
      ++s.version;
    }
    return;
  }
  const Txn* t = command.decoded<Txn>();
  if (t == nullptr) return;  // every command is made with its decoded form
  auto pending = t->from == static_cast<std::uint32_t>(index_) ? pending_.find(t->id) : pending_.end();
  const bool answering = pending != pending_.end();
  Response resp;
  switch (t->kind) {
    case Txn::Kind::kCreateSession: {
      const SessionId id = ++next_session_;
      sessions_[id] = Session{node_.wall() + svc_.session_ttl(), 0, t->endpoint};
      resp.session = id;
      resp.ttl = svc_.session_ttl();
      resp.heartbeat = svc_.spec().session_heartbeat_interval;
      break;
    }
    case Txn::Kind::kHeartbeat:
      if (!heartbeat(t->session)) resp.error = errors::kSessionExpired;
      break;
    case Txn::Kind::kExpireSessions:
      for (const auto& [id, version] : t->expire) {
        auto s = sessions_.find(id);
        if (s != sessions_.end() && s->second.version == version) close_session(id, "CP session expired");
      }
      break;
    case Txn::Kind::kLock: apply_lock(index, *t, resp); break;
    case Txn::Kind::kUnlock: apply_unlock(*t, resp); break;
  }
  if (!answering) return;
  if (resp.waiting) waiting_[{t->lock, Endpoint{t->session, t->thread}, t->uid}] = pending->second.request.from;
  node_.reply(pending->second.request, sim::make_payload<Response>(std::move(resp)));
  pending_.erase(pending);
}

bool CpMember::heartbeat(SessionId s) {
  auto it = sessions_.find(s);
  if (it == sessions_.end()) return false;
  it->second.expiration = std::max(it->second.expiration, node_.wall() + svc_.session_ttl());
  ++it->second.version;
  return true;
}

void CpMember::apply_lock(raft::Index index, const Txn& t, Response& resp) {
  // LockService.acquire heartbeats the session first (SessionExpiredException
  // if it is gone).
  if (!heartbeat(t.session)) {
    resp.error = errors::kSessionExpired;
    return;
  }
  LockState& l = locks_[t.lock];
  const Endpoint e{t.session, t.thread};
  if (auto a = l.answered.find({e, t.uid}); a != l.answered.end()) {
    resp.fence = a->second;  // a retry of an answered LockOp
    return;
  }
  if (!l.owner) {
    l.owner = Invocation{e, t.uid, index, t.endpoint};
    l.count = 1;
    l.answered[{e, t.uid}] = static_cast<Fence>(index);
    resp.fence = static_cast<Fence>(index);
    svc_.on_owner(*this, t.lock, *l.owner, resp.fence);
    return;
  }
  if (l.owner->endpoint == e) {
    // Re-entrant: the same fence, or fence 0 at the lock-acquire-limit.
    const int limit = svc_.spec().lock_acquire_limit;
    const bool at_limit = limit > 0 && l.count >= limit;
    if (!at_limit) ++l.count;
    const Fence fence = at_limit ? kInvalidFence : static_cast<Fence>(l.owner->commit_index);
    l.answered[{e, t.uid}] = fence;
    resp.fence = fence;
    return;
  }
  // Lock.cancelWaitKeys: a wait key of the same thread with another uid is
  // cancelled; one with this uid takes the retry (no new key).
  bool queued = false;
  for (auto it = l.waiters.begin(); it != l.waiters.end();) {
    if (it->endpoint != e) {
      ++it;
    } else if (it->uid == t.uid) {
      queued = true;
      ++it;
    } else {
      const Invocation cancelled = *it;
      it = l.waiters.erase(it);
      answer_waiter(t.lock, cancelled, kInvalidFence, errors::kWaitKeyCancelled);
    }
  }
  if (!queued) l.waiters.push_back(Invocation{e, t.uid, index, t.endpoint});
  resp.waiting = true;
}

void CpMember::apply_unlock(const Txn& t, Response& resp) {
  if (!heartbeat(t.session)) {
    resp.error = errors::kSessionExpired;
    return;
  }
  auto it = locks_.find(t.lock);
  const Endpoint e{t.session, t.thread};
  if (it == locks_.end()) {
    resp.error = errors::kIllegalMonitorState;
    return;
  }
  LockState& l = it->second;
  // A retried UnlockOp answers what the first did; its uid is kept beside
  // the LockOps' (1: still locked, 0: not).
  if (auto a = l.answered.find({e, t.uid}); a != l.answered.end()) {
    resp.still_locked = a->second != 0;
    return;
  }
  if (!l.owner || l.owner->endpoint != e) {
    resp.error = errors::kIllegalMonitorState;  // "Current thread is not owner of the lock!"
    return;
  }
  --l.count;
  resp.still_locked = l.count > 0;
  l.answered[{e, t.uid}] = resp.still_locked ? 1 : 0;
  if (l.count > 0) return;
  const Fence fence = static_cast<Fence>(l.owner->commit_index);
  l.owner.reset();
  svc_.on_owner_left(*this, t.lock, fence, "unlocked by its holder", LeaseEndCause::kReleased);
  promote(t.lock, l);
}

void CpMember::promote(const std::string& name, LockState& l) {
  if (l.waiters.empty()) return;
  const Invocation w = l.waiters.front();
  l.waiters.pop_front();
  l.owner = w;
  l.count = 1;
  const Fence fence = static_cast<Fence>(w.commit_index);
  l.answered[{w.endpoint, w.uid}] = fence;
  svc_.on_owner(*this, name, w, fence);
  answer_waiter(name, w, fence, nullptr);
}

void CpMember::close_session(SessionId s, const std::string& why) {
  sessions_.erase(s);
  for (auto& [name, l] : locks_) {
    // BlockingResource.closeSession: the session's wait keys go first …
    for (auto it = l.waiters.begin(); it != l.waiters.end();) {
      if (it->endpoint.session != s) {
        ++it;
        continue;
      }
      const Invocation w = *it;
      it = l.waiters.erase(it);
      answer_waiter(name, w, kInvalidFence, errors::kSessionExpired);
    }
    // … and the memorized answers of its invocations …
    std::erase_if(l.answered, [s](const auto& a) { return a.first.first.session == s; });
    // … then a hold of the session is released in full (Lock.onSessionClose).
    if (!l.owner || l.owner->endpoint.session != s) continue;
    const Fence fence = static_cast<Fence>(l.owner->commit_index);
    l.owner.reset();
    l.count = 0;
    svc_.on_owner_left(*this, name, fence, why + " (session " + std::to_string(s) + ")", LeaseEndCause::kExpired);
    promote(name, l);
  }
}

void CpMember::answer_waiter(const std::string& name, const Invocation& w, Fence fence, const char* error) {
  auto it = waiting_.find({name, w.endpoint, w.uid});
  if (it == waiting_.end()) return;  // its client waits on another member (or that one crashed)
  auto a = sim::make_payload<LockAnswer>();
  a->lock = name;
  a->uid = w.uid;
  a->fence = fence;
  if (error != nullptr) a->error = error;
  node_.send(it->second, a);
  waiting_.erase(it);
}

void CpMember::check_expired_sessions() {
  // RaftSessionService.checkSessionsToExpire: every member looks, only the
  // leader's ExpireSessionsOp is replicated.
  if (!raft_.is_leader()) return;
  const Time now = node_.wall();
  Txn t;
  t.kind = Txn::Kind::kExpireSessions;
  for (const auto& [id, s] : sessions_) {
    if (s.expiration <= now) t.expire.emplace_back(id, s.version);
  }
  if (t.expire.empty()) return;
  raft_.propose(raft::Command::with_decoded<Txn, render>(std::make_shared<const Txn>(std::move(t))));
}

}  // namespace fencesim::hazelcast
