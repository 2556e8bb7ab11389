// models/zookeeper/server.cpp — one ZooKeeper server: Raft below, the data
// tree, sessions and watches above (zookeeper.hpp says what is modelled and
// from which source).
#include <algorithm>

#include <fmt/format.h>

#include "models/zookeeper/zookeeper.hpp"

namespace fencesim::zookeeper {

namespace {

std::string render(const ZkServer::Txn& t) {
  using K = ZkServer::Txn::Kind;
  switch (t.kind) {
    case K::kCreateSession: return fmt::format("createSession {}ms", t.timeout / std::chrono::milliseconds(1));
    case K::kCloseSession: return fmt::format("closeSession 0x{:x} ({})", t.session, t.why);
    case K::kCreate:
      return fmt::format("create {}{}{} 0x{:x}", t.path, t.sequential ? "<seq>" : "",
                         t.container ? " container" : (t.ephemeral ? " ephemeral" : ""), t.session);
    case K::kDelete: return fmt::format("delete {} ({})", t.path, t.why);
  }
  return "?";
}

/// The parent of `path` ("/" for a child of the root).
/// The parent of `path` ("/" for a child of the root); views into `path`.
std::string_view parent_of(std::string_view path) {
  const auto slash = last_slash(path);
  return slash == 0 || slash == std::string_view::npos ? std::string_view("/") : path.substr(0, slash);
}
std::string_view name_of(std::string_view path) { return path.substr(last_slash(path) + 1); }

/// ExpiryQueue.roundToNextInterval.
Time round_to_next(Time t, Duration interval) { return Time{(t.count() / interval.count() + 1) * interval.count()}; }

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kConnect: return "connect";
    case Op::kPing: return "ping";
    case Op::kCreate: return "create";
    case Op::kDelete: return "delete";
    case Op::kGetChildren: return "getChildren";
    case Op::kExists: return "exists";
    case Op::kClose: return "closeSession";
  }
  return "?";
}

std::string Request::describe() const {
  if (op == Op::kConnect) {
    return session == 0 ? fmt::format("connect (new session, {}ms)", timeout / std::chrono::milliseconds(1))
                        : fmt::format("connect (session 0x{:x})", session);
  }
  if (path.empty()) return op_name(op);
  return fmt::format("{} {}{}", op_name(op), path, op == Op::kCreate && sequential ? "<seq>" : "");
}

std::string Response::describe() const {
  if (!error.empty()) return error;
  if (!path.empty()) return "OK " + path;
  if (timeout > Duration{0} || session != 0) {
    return timeout > Duration{0} ? fmt::format("OK session 0x{:x}", session) : "SESSION EXPIRED";
  }
  return fmt::format("OK zxid 0x{:x}", zxid);
}

// ============================================================== ZkServer ==

ZkServer::ZkServer(ZooKeeperService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h)
    : svc_(svc), node_(node), index_(index), raft_(node, std::move(cfg), h, /*attach=*/false) {
  node_.set_behaviour(this);
  tree_["/"] = Znode{};
  raft::Callbacks cb;
  cb.apply = [this](raft::Index i, raft::Term t, const raft::Command& c) { apply(i, t, c); };
  cb.stepped_down = [this](raft::Term) {
    // Only a leader tracks session expiry and reaps containers.
    ++leader_gen_;
    expiry_.clear();
    closing_.clear();
  };
  cb.restarted = [this] {
    // The data tree is rebuilt from the log, as ZooKeeper loads its
    // snapshot and replays its transaction log.
    tree_.clear();
    tree_["/"] = Znode{};
    sessions_.clear();
    ephemerals_.clear();
    last_zxid_ = 0;
    epoch_ = 0;
    epoch_start_ = 0;
  };
  raft_.set_callbacks(std::move(cb));
}

void ZkServer::start() {
  raft_.start();
  half_tick();
}

void ZkServer::on_crash() {
  raft_.on_crash();
  pending_.clear();
  connections_.clear();
  watches_.clear();
  touched_.clear();
  expiry_.clear();
  closing_.clear();
  ++leader_gen_;
}

void ZkServer::on_restart() {
  raft_.on_restart();
  half_tick();
}

bool ZkServer::serving() const { return node_.up() && raft_.leader() != sim::kNoNode; }

void ZkServer::half_tick() {
  // Every tickTime / 2: a follower hands its clients' touches to the leader
  // (Learner's answer to the leader's ping), and a server that knows no
  // leader closes its clients' connections.
  node_.every(svc_.spec().tick_time / 2, [this] {
    if (!serving()) {
      drop_connections(node_.name() + " has no leader");
      touched_.clear();
      return;
    }
    if (!raft_.is_leader() && !touched_.empty()) {
      auto t = sim::make_payload<TouchSessions>();
      t->sessions.assign(touched_.begin(), touched_.end());
      touched_.clear();
      node_.send(raft_.leader(), t);
    }
  });
}

void ZkServer::drop_connections(const std::string& why) {
  for (const auto& [client, session] : connections_) {
    auto c = sim::make_payload<ConnectionClosed>();
    c->session = session;
    c->why = why;
    node_.send(client, c);
  }
  connections_.clear();
  watches_.clear();
}

void ZkServer::touch(SessionId s) {
  if (!raft_.is_leader()) {
    touched_.insert(s);
    return;
  }
  auto it = sessions_.find(s);
  if (it == sessions_.end() || closing_.count(s) != 0 || expiry_.count(s) == 0) return;
  expiry_[s] = round_to_next(node_.monotonic() + it->second, svc_.spec().tick_time);
}

void ZkServer::reply_error(const sim::Message& m, const char* error) {
  auto r = sim::make_payload<Response>();
  r->error = error;
  r->zxid = last_zxid_;
  node_.reply(m, r);
}

void ZkServer::on_message(const sim::Message& m) {
  if (raft_.step(m)) return;
  if (const auto* r = m.as<Request>()) {
    handle_client(m, std::shared_ptr<const Request>(m.body, r));
  } else if (const auto* f = m.as<ForwardTxn>()) {
    if (raft_.is_leader()) raft_.propose(f->command);  // anyone else drops it: the client times out
  } else if (const auto* t = m.as<TouchSessions>()) {
    if (raft_.is_leader()) {
      for (SessionId s : t->sessions) touch(s);
    }
  } else if (const auto* v = m.as<ValidateSession>()) {
    if (!raft_.is_leader()) return;
    auto a = sim::make_payload<SessionValid>();
    a->id = v->id;
    a->valid = expiry_.count(v->session) != 0 && closing_.count(v->session) == 0;
    if (a->valid) touch(v->session);
    node_.send(m.from, a);
  } else if (const auto* a = m.as<SessionValid>()) {
    auto it = pending_.find(a->id);
    if (it == pending_.end()) return;
    const Pending p = std::move(it->second);
    pending_.erase(it);
    auto resp = sim::make_payload<Response>();
    resp->session = p.req->session;
    resp->zxid = last_zxid_;
    auto known = sessions_.find(p.req->session);
    if (a->valid && known != sessions_.end()) {
      resp->timeout = known->second;
      connections_[p.request.from] = p.req->session;
    }
    node_.reply(p.request, resp);
  }
}

void ZkServer::handle_client(const sim::Message& m, std::shared_ptr<const Request> r) {
  if (!serving()) {
    reply_error(m, errors::kConnectionLoss);  // "ZooKeeperServer not running": the socket closes
    return;
  }
  if (r->op == Op::kConnect) {
    connect(m, *r);
    return;
  }
  auto conn = connections_.find(m.from);
  if (conn == connections_.end() || conn->second != r->session) {
    reply_error(m, errors::kConnectionLoss);  // no connection of that session here
    return;
  }
  touch(r->session);
  switch (r->op) {
    case Op::kPing: {
      auto resp = sim::make_payload<Response>();
      resp->zxid = last_zxid_;
      node_.reply(m, resp);
      return;
    }
    case Op::kGetChildren:
    case Op::kExists: answer_read(m, *r); return;
    case Op::kCreate: {
      Txn t;
      t.kind = Txn::Kind::kCreate;
      t.session = r->session;
      t.path = r->path;
      t.ephemeral = r->ephemeral;
      t.sequential = r->sequential;
      t.container = r->container;
      propose(m, r, std::move(t));
      return;
    }
    case Op::kDelete: {
      Txn t;
      t.kind = Txn::Kind::kDelete;
      t.session = r->session;
      t.path = r->path;
      t.why = "released";
      propose(m, r, std::move(t));
      return;
    }
    case Op::kClose: {
      Txn t;
      t.kind = Txn::Kind::kCloseSession;
      t.session = r->session;
      t.why = "closed by its client";
      propose(m, r, std::move(t));
      return;
    }
    case Op::kConnect: return;
  }
}

void ZkServer::connect(const sim::Message& m, const Request& r) {
  if (r.last_zxid > last_zxid_) {
    // "Refusing session request for client as it has seen zxid … our last
    // zxid is …" (ZooKeeperServer.processConnectRequest): the socket closes.
    reply_error(m, errors::kConnectionLoss);
    return;
  }
  if (r.session == 0) {
    Txn t;
    t.kind = Txn::Kind::kCreateSession;
    t.timeout = negotiated_timeout(svc_.spec(), r.timeout);
    propose(m, std::shared_ptr<const Request>(m.body, &r), std::move(t));
    return;
  }
  if (raft_.is_leader()) {
    auto resp = sim::make_payload<Response>();
    resp->session = r.session;
    resp->zxid = last_zxid_;
    auto known = sessions_.find(r.session);
    if (expiry_.count(r.session) != 0 && closing_.count(r.session) == 0 && known != sessions_.end()) {
      touch(r.session);
      resp->timeout = known->second;
      connections_[m.from] = r.session;
    }
    node_.reply(m, resp);
    return;
  }
  const std::uint64_t id = next_request_++;
  pending_[id] = Pending{m, std::shared_ptr<const Request>(m.body, &r)};
  auto v = sim::make_payload<ValidateSession>();
  v->session = r.session;
  v->id = id;
  node_.send(raft_.leader(), v);
}

void ZkServer::propose(const sim::Message& m, std::shared_ptr<const Request> r, Txn txn) {
  const std::uint64_t id = next_request_++;
  txn.id = id;
  txn.from = static_cast<std::uint32_t>(index_);
  // Registered first: a one-server ensemble applies inside propose().
  pending_[id] = Pending{m, std::move(r)};
  auto command = raft::Command::with_decoded<Txn, render>(std::make_shared<const Txn>(std::move(txn)));
  if (raft_.is_leader()) {
    if (!raft_.propose(std::move(command))) {
      pending_.erase(id);
      reply_error(m, errors::kConnectionLoss);
    }
    return;
  }
  auto f = sim::make_payload<ForwardTxn>();
  f->command = std::move(command);
  node_.send(raft_.leader(), f);
}

void ZkServer::submit(Txn txn) {
  if (!raft_.is_leader()) return;
  raft_.propose(raft::Command::with_decoded<Txn, render>(std::make_shared<const Txn>(std::move(txn))));
}

void ZkServer::answer_read(const sim::Message& m, const Request& r) {
  auto resp = sim::make_payload<Response>();
  resp->zxid = last_zxid_;
  auto it = tree_.find(r.path);
  if (r.op == Op::kExists) {
    if (it != tree_.end()) resp->stat = it->second.stat;
    if (r.watch) watches_[r.path].insert(m.from);
    node_.reply(m, resp);
    return;
  }
  if (it == tree_.end()) {
    resp->error = errors::kNoNode;
    node_.reply(m, resp);
    return;
  }
  resp->children.assign(it->second.children.begin(), it->second.children.end());
  node_.reply(m, resp);
}

// ------------------------------------------------------------------ apply --

void ZkServer::apply(raft::Index index, raft::Term term, const raft::Command& command) {
  if (term != epoch_) {
    // The first entry of a term is its leader's empty entry: ZooKeeper's
    // NEWLEADER zxid, counter 0.
    epoch_ = term;
    epoch_start_ = index;
  }
  const Zxid zxid = static_cast<Zxid>((term << 32) | (index - epoch_start_));
  last_zxid_ = zxid;
  if (command.empty()) {
    if (raft_.is_leader() && term == raft_.term()) became_leader();
    return;
  }
  const Txn* t = command.decoded<Txn>();
  if (t == nullptr) return;  // every command is made with its decoded form
  auto pending = t->from == static_cast<std::uint32_t>(index_) ? pending_.find(t->id) : pending_.end();
  Response resp;
  resp.zxid = zxid;
  switch (t->kind) {
    case Txn::Kind::kCreateSession:
      sessions_[zxid] = t->timeout;
      resp.session = zxid;
      resp.timeout = t->timeout;
      if (raft_.is_leader()) expiry_[zxid] = round_to_next(node_.monotonic() + t->timeout, svc_.spec().tick_time);
      if (pending != pending_.end()) connections_[pending->second.request.from] = zxid;
      break;
    case Txn::Kind::kCloseSession: apply_close(*t, zxid); break;
    case Txn::Kind::kCreate: apply_create(*t, zxid, resp); break;
    case Txn::Kind::kDelete:
      apply_delete(t->path, zxid, resp, t->why,
                   t->why == "released" ? LeaseEndCause::kReleased : LeaseEndCause::kDeleted);
      break;
  }
  if (pending == pending_.end()) return;
  auto body = sim::make_payload<Response>(std::move(resp));
  node_.reply(pending->second.request, body);
  pending_.erase(pending);
}

void ZkServer::apply_create(const Txn& t, Zxid zxid, Response& resp) {
  if (t.ephemeral && sessions_.count(t.session) == 0) {
    resp.error = errors::kSessionExpired;  // PrepRequestProcessor's checkSession
    return;
  }
  auto p = tree_.find(parent_of(t.path));
  if (p == tree_.end()) {
    resp.error = errors::kNoNode;
    return;
  }
  std::string path = t.path;
  if (t.sequential) {
    // %010d of the parent's count of child creates (never negative here).
    char seq[10];
    std::uint32_t v = static_cast<std::uint32_t>(p->second.child_creates);
    for (int i = 9; i >= 0; --i, v /= 10) seq[i] = static_cast<char>('0' + v % 10);
    path.append(seq, sizeof seq);
  }
  const auto [node, created] = tree_.try_emplace(path);
  if (!created) {
    resp.error = errors::kNodeExists;
    return;
  }
  Znode& n = node->second;
  n.stat.czxid = n.stat.mzxid = zxid;
  n.stat.ephemeral_owner = t.ephemeral ? t.session : 0;
  n.container = t.container;
  p->second.children.emplace(name_of(path));
  p->second.stat.cversion += 1;
  p->second.child_creates += 1;
  resp.path = path;
  resp.stat = n.stat;
  if (t.ephemeral) ephemerals_[t.session].push_back(path);
  fire_watches(path, /*deleted=*/false);
}

void ZkServer::apply_delete(const std::string& path, Zxid zxid, Response& resp, std::string_view why,
                            LeaseEndCause cause) {
  (void)zxid;
  auto it = tree_.find(path);
  if (it == tree_.end() || path == "/") {
    resp.error = errors::kNoNode;
    return;
  }
  if (!it->second.children.empty()) {
    resp.error = errors::kNotEmpty;
    return;
  }
  if (const SessionId owner = it->second.stat.ephemeral_owner; owner != 0) {
    auto e = ephemerals_.find(owner);
    if (e != ephemerals_.end()) std::erase(e->second, path);
  }
  tree_.erase(it);
  auto p = tree_.find(parent_of(path));
  if (p != tree_.end()) {
    if (auto c = p->second.children.find(name_of(path)); c != p->second.children.end()) p->second.children.erase(c);
    p->second.stat.cversion += 1;
  }
  fire_watches(path, /*deleted=*/true);
  if (svc_.is_lock_node(path)) svc_.on_lock_node_deleted(*this, path, why, cause);
}

void ZkServer::apply_close(const Txn& t, Zxid zxid) {
  // DataTree.killSession: every ephemeral of the session goes, in the order
  // they were created.
  auto e = ephemerals_.find(t.session);
  if (e != ephemerals_.end()) {
    const std::vector<std::string> paths = e->second;
    const bool expired = t.why == "expired";
    for (const std::string& path : paths) {
      Response ignored;
      apply_delete(path, zxid, ignored, expired ? "session expired: its ephemeral node was deleted" : "session closed",
                   expired ? LeaseEndCause::kExpired : LeaseEndCause::kReleased);
    }
    ephemerals_.erase(t.session);
  }
  sessions_.erase(t.session);
  expiry_.erase(t.session);
  closing_.erase(t.session);
  // The server that holds the session's connection closes it.
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->second != t.session) {
      ++it;
      continue;
    }
    auto c = sim::make_payload<ConnectionClosed>();
    c->session = t.session;
    c->why = "session " + std::string(t.why);
    node_.send(it->first, c);
    it = connections_.erase(it);
  }
}

void ZkServer::fire_watches(const std::string& path, bool deleted) {
  auto it = watches_.find(path);
  if (it == watches_.end()) return;
  for (NodeId client : it->second) {
    auto ev = sim::make_payload<WatchEvent>();
    ev->path = path;
    ev->deleted = deleted;
    node_.send(client, ev);
  }
  watches_.erase(it);
}

// ------------------------------------------ the leader: tracker, containers --

void ZkServer::became_leader() {
  const std::uint64_t gen = ++leader_gen_;
  // SessionTrackerImpl's constructor: every known session gets a full
  // timeout from now.
  expiry_.clear();
  closing_.clear();
  const Duration tick = svc_.spec().tick_time;
  for (const auto& [s, timeout] : sessions_) expiry_[s] = round_to_next(node_.monotonic() + timeout, tick);
  svc_.on_leader(*this);
  tracker_tick(gen);
  node_.after(svc_.spec().container_check_interval, [this, gen] { containers_tick(gen); });
}

void ZkServer::tracker_tick(std::uint64_t gen) {
  if (gen != leader_gen_ || !raft_.is_leader()) return;
  const Time now = node_.monotonic();
  // Sessions whose bucket has come, in id order.
  for (const auto& [s, deadline] : expiry_) {
    if (deadline > now || closing_.count(s) != 0) continue;
    closing_.insert(s);
    Txn t;
    t.kind = Txn::Kind::kCloseSession;
    t.session = s;
    t.why = "expired";
    submit(std::move(t));
  }
  // The next bucket: the next multiple of tickTime on the leader's clock.
  const Duration tick = svc_.spec().tick_time;
  node_.at_clock(sim::ClockKind::kMonotonic, round_to_next(node_.monotonic(), tick),
                 [this, gen] { tracker_tick(gen); });
}

void ZkServer::containers_tick(std::uint64_t gen) {
  if (gen != leader_gen_ || !raft_.is_leader()) return;
  for (const auto& [path, n] : tree_) {
    if (!n.container || n.child_creates <= 0 || !n.children.empty()) continue;
    Txn t;
    t.kind = Txn::Kind::kDelete;
    t.path = path;
    t.why = "container reaped";
    submit(std::move(t));
  }
  node_.after(svc_.spec().container_check_interval, [this, gen] { containers_tick(gen); });
}

}  // namespace fencesim::zookeeper
