// models/zookeeper/client.cpp — a ZooKeeper client (its session, pings,
// reconnects and connection states) and the lock recipe on it, as Curator's
// InterProcessMutex and kazoo's Lock run it (`clients[].library`).
//
// Sources: apache/zookeeper release-3.8.4 ClientCnxn.java (the Java client
// under Curator); apache/curator apache-curator-5.9.0 (recipes/locks/
// LockInternals.java, StandardLockInternalsDriver.java, InterProcessMutex
// .java; framework/imps/CreateBuilderImpl.java, ProtectedMode.java;
// framework/state/ConnectionStateManager.java, StandardConnectionState
// ErrorPolicy.java, SessionConnectionStateErrorPolicy.java, both since
// Curator 3.0.0); python-zk/kazoo 2.9.0 (Debian 12's python3-kazoo:
// kazoo/recipe/lock.py, kazoo/client.py, kazoo/protocol/connection.py,
// kazoo/retry.py).
//
// The connection (both libraries):
//  * The session timeout asked is the client's TTL (lock.ttl or
//    clients[].ttl); the server negotiates it (zookeeper.hpp).
//  * readTimeout = 2/3 of the negotiated timeout. The client pings when it
//    has sent nothing for readTimeout / 2 (ClientCnxn; kazoo subtracts a
//    jitter of 0.01–0.40 s, connection.py _connect_attempt), and drops the
//    connection when nothing came back for readTimeout — Disconnected, the
//    libraries' SUSPENDED — or when its server closes it.
//  * It then connects to the next server in its list (client k starts at
//    zk-(k mod n); the real clients shuffle their host list), offering its
//    session and the last zxid it saw. A server that has seen less refuses.
//    An answer of timeout 0 is Expired: LOST, and the client starts a new
//    session. Curator (≥ 3.0.0, ConnectionStateManager.checkSessionExpiration)
//    also declares LOST itself once a whole negotiated timeout has passed
//    while SUSPENDED, and starts a new session; kazoo learns LOST only from
//    a reconnect. The Java client waits a random 0–1 s before each
//    reconnect attempt (ClientCnxn.SendThread.startConnect) and 1 s after a
//    pass over every server failed (StaticHostProvider's spin delay); kazoo
//    backs off 0.1 s,
//    doubling up to 3600 s, plus 0–0.4 s of jitter (KazooRetry), reset on
//    a successful connect.
//  * Connection states end a holder's belief as `clients[].connection_policy`
//    says (the listener the libraries' docs tell users to add; neither
//    InterProcessMutex nor kazoo's Lock reacts itself): "standard"
//    (Curator's default error policy) SUSPENDED and LOST; "session" only
//    LOST; "none" neither.
//
// The recipe:
//  * Curator: create `<lock path>/_c_<uuid>-lock-` EPHEMERAL_SEQUENTIAL with
//    a new uuid per attempt; on NoNode, the missing parents are created as
//    CONTAINER znodes and the create retried. A create whose answer was
//    lost is looked for by its prefix among the children
//    (findProtectedNodeInForeground), and a node found from an earlier
//    session is deleted, not adopted (ProtectedMode.validateFoundNode).
//  * kazoo: create `<lock path>/<uuid hex>__lock__` ephemeral + sequence,
//    one uuid per Lock (per client incarnation here); parents are created
//    PERSISTENT (ensure_path); a lost create is looked for by the prefix and
//    adopted whatever its session (_find_node).
//  * Both: getChildren, sorted by the 10-digit sequence suffix; the lowest
//    holds. Otherwise a watch on the immediate predecessor (Curator getData,
//    kazoo get; NoNode: look again), and wait for its event or a change of
//    the connection (a disconnect fires every watch). Own node missing
//    (the session expired while waiting): a new node. Neither recipe checks
//    that the node belongs to the current session: after a LOST, a node of
//    the old session that the servers still have (its session not yet
//    expired there, e.g. under a new leader that gave it a full timeout) is
//    taken as the client's own, and the client may hold the lock on it
//    until the servers expire the old session (apache/curator#1121,
//    CURATOR-604, open).
//  * Release: delete the node. Curator: in the background until it is gone
//    (its guaranteed delete); a lost session took it. kazoo: the caller
//    blocks until a delete is answered (client.retry: while disconnected it
//    waits, and after a LOST it deletes on the new session).
//  * Token (lock.token): the node's czxid, or its sequence number.
// Not modelled: Curator's RetryPolicy giving up (acquire() throwing after
// connectionTimeoutMs; here every step waits for a connection), re-entrant
// acquires (a client takes the lock once per iteration), kazoo's
// LockTimeout and its non-blocking acquire.
#include <algorithm>

#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/validate.hpp"
#include "models/zookeeper/zookeeper.hpp"
#include "sim/promise.hpp"

namespace fencesim::zookeeper {

namespace {

/// What wakes a waiting recipe: a watch event or a change of connection.
struct Wake {
  std::string path;  ///< the watched node; empty: the connection changed
};

/// The 10-digit sequence suffix of a lock node's name.
std::string_view sequence_suffix(std::string_view name) {
  return name.size() >= 10 ? name.substr(name.size() - 10) : name;
}

class ZkLockClient final : public client::LockClientBase {
 public:
  ZkLockClient(ZooKeeperService& svc, sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
               ClientLibrary library, std::vector<NodeId> servers, std::size_t index)
      : LockClientBase(node, h, spec, lock),
        svc_(svc),
        servers_(std::move(servers)),
        cursor_(index % servers_.size()),
        curator_(library == ClientLibrary::kCurator),
        path_(lock_path(lock.key)),
        asked_(client_ttl(lock, spec)),
        wakes_(node.sim()) {}

  void init(sim::Process& p) override {
    (void)p;
    if (!curator_) kazoo_uuid_ = uuid_hex();  // one per kazoo Lock object
    if (running_) return;
    running_ = true;
    node_.spawn("zk-send-thread", [this](sim::Process& sp) { send_thread(sp); });
  }

  client::Lease acquire(sim::Process& p) override {
    for (;;) {
      if (auto lease = attempt(p)) return *lease;
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    end_belief("release");
    const std::string node = own_;
    const SessionId session = own_session_;
    own_.clear();
    if (node.empty()) return;
    if (!curator_) {
      // kazoo's Lock.release is client.retry(_inner_release): the caller
      // blocks while the connection is down (kazoo queues the request) and
      // the delete is sent again on reconnecting, on a new session too
      // (SessionExpiredError is retried: ignore_expire); NoNode is fine.
      // Found by fencesim-real against kazoo's real Lock.
      for (;;) {
        wait_connected(p);
        if (delete_node(p, node)) return;
      }
    }
    if (session != session_) return;  // the node went with its session
    if (state_ == State::kConnected && delete_node(p, node)) return;
    // Curator's guaranteed delete / kazoo's client.retry: retried in the
    // background until it is gone or its session has ended.
    node_.spawn("zk-guaranteed-delete", [this, node, session](sim::Process& dp) {
      // (It polls: the recipe's process is the one that waits on wakes_.)
      while (session == session_) {
        if (state_ != State::kConnected) {
          dp.sleep(std::chrono::milliseconds(100));
          continue;
        }
        if (delete_node(dp, node)) return;
      }
    });
  }

  void on_message(const sim::Message& m) override {
    if (const auto* w = m.as<WatchEvent>()) {
      wakes_.push(Wake{w->path});
    } else if (const auto* c = m.as<ConnectionClosed>()) {
      if (state_ == State::kConnected && c->session == session_ && m.from == servers_[cursor_]) {
        disconnect("the server closed the connection (" + c->why + ")");
      }
    }
  }

  void on_crash() override {
    LockClientBase::on_crash();
    // A restarted client is a new process: a new session (the old one lives
    // on at the servers until it expires).
    state_ = State::kConnecting;
    session_ = 0;
    timeout_ = Duration{0};
    running_ = false;
    own_.clear();
    ++conn_gen_;
  }

 private:
  enum class State { kConnecting, kConnected, kSuspended };

  Duration read_timeout() const { return timeout_ * 2 / 3; }
  ConnectionPolicy policy() const { return spec_.connection_policy.value_or(ConnectionPolicy::kStandard); }

  // ------------------------------------------------------------ connection

  /// ClientCnxn's SendThread / kazoo's connection loop.
  void send_thread(sim::Process& p) {
    int failed_passes = 0;
    for (;;) {
      if (state_ != State::kConnected) {
        if (connect_pass(p)) {
          failed_passes = 0;
        } else {
          p.sleep(reconnect_delay(failed_passes++));
        }
        continue;
      }
      // Connected: ping when nothing was sent for readTimeout / 2.
      const std::uint64_t gen = conn_gen_;
      // kazoo's jitter is drawn once per ping (connection.py _connect_attempt).
      if (!jitter_) jitter_ = ping_jitter();
      const Duration idle = read_timeout() / 2 - *jitter_;
      const sim::Time due = last_send_ + std::max(idle, Duration{1});
      if (node_.monotonic() < due) {
        p.sleep_until(sim::ClockKind::kMonotonic, due);
        continue;
      }
      if (gen != conn_gen_ || state_ != State::kConnected) continue;
      Request ping;
      ping.op = Op::kPing;
      const sim::Time sent = node_.monotonic();
      const sim::Time deadline = last_recv_ + read_timeout();
      jitter_.reset();
      auto r = send(p, ping, std::max(deadline - sent, Duration{1}));
      if (gen != conn_gen_) continue;
      if (!r) continue;  // send() dropped the connection if readTimeout has passed
      if (belief_) confirmed(sent);
    }
  }

  /// One pass over the servers from the current one; true once connected.
  bool connect_pass(sim::Process& p) {
    for (std::size_t tried = 0; tried < servers_.size(); ++tried) {
      if (curator_ && ever_connected_) p.sleep(rng_.uniform(Duration{0}, Duration{std::chrono::milliseconds(999)}));
      auto req = sim::make_payload<Request>();
      req->op = Op::kConnect;
      req->session = session_;
      req->timeout = asked_;
      req->last_zxid = last_zxid_;
      // connectTimeout: the session timeout over the number of servers.
      const Duration wait = std::max((session_ != 0 ? timeout_ : asked_) / static_cast<int>(servers_.size()),
                                     Duration{std::chrono::milliseconds(1)});
      auto reply = p.call(servers_[cursor_], std::move(req), wait);
      const Response* r = reply ? reply->as<Response>() : nullptr;
      if (r != nullptr && r->error.empty()) {
        if (r->timeout <= Duration{0}) {
          session_lost("the session expired (learned on reconnecting to " + server_name() + ")");
          return false;
        }
        const bool fresh = session_ != r->session;
        session_ = r->session;
        timeout_ = r->timeout;
        last_zxid_ = std::max(last_zxid_, r->zxid);
        const bool ever_connected_before = ever_connected_;
        state_ = State::kConnected;
        ever_connected_ = true;
        ++conn_gen_;
        last_recv_ = last_send_ = node_.monotonic();
        if (!fresh && belief_) confirmed(node_.monotonic());
        if (!fresh) {
          history_.note(node_.sim().now(), spec_.name, "reconnected", "RECONNECTED to " + server_name());
        } else if (ever_connected_before) {
          history_.note(node_.sim().now(), spec_.name, "connected", "a new session on " + server_name());
        }
        wakes_.push(Wake{});
        return true;
      }
      cursor_ = (cursor_ + 1) % servers_.size();
    }
    return false;
  }

  Duration reconnect_delay(int failed_passes) {
    if (curator_) return std::chrono::seconds(1);  // StaticHostProvider's spin delay
    // KazooRetry: delay 0.1 s, backoff 2, max_delay 3600 s, jitter 0–0.4 s.
    Duration d = std::chrono::milliseconds(100);
    for (int i = 0; i < failed_passes && d < std::chrono::seconds(3600); ++i) d *= 2;
    d = std::min<Duration>(d, std::chrono::seconds(3600));
    return d + rng_.uniform(Duration{0}, Duration{std::chrono::milliseconds(400)});
  }

  Duration ping_jitter() {
    if (curator_) return Duration{0};
    return std::chrono::milliseconds(10 * rng_.uniform(1, 40));  // randint(1, 40) / 100 s
  }

  std::string server_name() const { return node_.sim().node(servers_[cursor_]).name(); }

  void disconnect(const std::string& why) {
    if (state_ != State::kConnected) return;
    state_ = State::kSuspended;
    ++conn_gen_;
    history_.note(node_.sim().now(), spec_.name, "suspended", "SUSPENDED: " + why);
    cursor_ = (cursor_ + 1) % servers_.size();
    wakes_.push(Wake{});
    if (belief_ && policy() == ConnectionPolicy::kStandard) {
      lose_lease("connection SUSPENDED: " + why);
    }
    if (!curator_) return;
    // Curator ≥ 3.0.0: LOST once a negotiated timeout has passed while
    // SUSPENDED (the simulated session expiration).
    const std::uint64_t gen = conn_gen_;
    node_.after(timeout_, [this, gen] {
      if (gen == conn_gen_ && state_ == State::kSuspended) {
        session_lost("the session timeout elapsed while SUSPENDED (Curator injects a session expiration)");
      }
    });
  }

  void session_lost(const std::string& why) {
    history_.note(node_.sim().now(), spec_.name, "lost", "LOST: " + why);
    state_ = State::kConnecting;
    session_ = 0;
    ++conn_gen_;
    wakes_.push(Wake{});
    if (belief_ && policy() != ConnectionPolicy::kNone) lose_lease("connection LOST: " + why);
  }

  /// Sends `req` on the connection and waits `wait` at most for its answer:
  /// the reply's own body, shared, not a copy (null: no answer).
  std::shared_ptr<const Response> send(sim::Process& p, Request req, Duration wait) {
    if (state_ != State::kConnected) return nullptr;
    req.session = session_;
    const std::uint64_t gen = conn_gen_;
    last_send_ = node_.monotonic();
    auto reply = p.call(servers_[cursor_], sim::make_payload<Request>(std::move(req)), wait);
    const Response* r = reply ? reply->as<Response>() : nullptr;
    if (gen != conn_gen_) return nullptr;
    if (r == nullptr) {
      // Nothing came back for readTimeout: the connection is dropped.
      if (node_.monotonic() >= last_recv_ + read_timeout()) {
        disconnect("no answer for readTimeout (" + fmt_d(read_timeout()) + ")");
      }
      return nullptr;
    }
    if (r->error == errors::kConnectionLoss) {
      disconnect("the server closed the connection");
      return nullptr;
    }
    last_recv_ = node_.monotonic();
    last_zxid_ = std::max(last_zxid_, r->zxid);
    return std::shared_ptr<const Response>(std::move(reply->body), r);
  }

  /// One request of the recipe: waits for a connection first; nothing on a
  /// connection loss (the caller waits and tries again).
  std::shared_ptr<const Response> call(sim::Process& p, const Request& req) {
    wait_connected(p);
    return send(p, req, std::max(last_recv_ + read_timeout() - node_.monotonic(), Duration{1}));
  }

  void wait_connected(sim::Process& p) {
    while (state_ != State::kConnected) wakes_.receive(p, std::chrono::seconds(1));
  }

  // ---------------------------------------------------------------- recipe

  /// 32 hex digits from two draws, in order (not `fresh_value() +
  /// fresh_value()`: the order of `+`'s operands is unspecified, and gcc and
  /// clang draw them differently).
  std::string uuid_hex() {
    std::string h = fresh_value();
    h += fresh_value();
    return h;
  }

  std::string fresh_prefix() {
    if (curator_) {
      // "_c_" + UUID.randomUUID() + "-" + "lock-", a new uuid per create
      // (8-4-4-4-12 hex digits; appended, not formatted: it is on every
      // acquire).
      const std::string h = uuid_hex();
      std::string p;
      p.reserve(path_.size() + 4 + 36 + 6);
      p.append(path_).append("/_c_");
      p.append(h, 0, 8).append(1, '-').append(h, 8, 4).append(1, '-').append(h, 12, 4).append(1, '-');
      p.append(h, 16, 4).append(1, '-').append(h, 20, 12).append("-lock-");
      return p;
    }
    return path_ + "/" + kazoo_uuid_ + "__lock__";
  }

  /// One acquire attempt: create the node, then wait for it to be first.
  std::optional<client::Lease> attempt(sim::Process& p) {
    const std::string prefix = fresh_prefix();
    const auto created = create_node(p, prefix);
    if (!created) return std::nullopt;
    own_ = created->first;
    own_session_ = session_;
    const Stat stat = created->second;
    const std::string name = own_.substr(own_.rfind('/') + 1);
    for (;;) {
      // No check of the node's session: neither recipe makes one. After a
      // LOST, a node of the old session that the servers have not deleted
      // yet is still taken for the client's own (apache/curator#1121,
      // CURATOR-604; kazoo's _get_predecessor the same).
      Request gc;
      gc.op = Op::kGetChildren;
      gc.path = path_;
      auto r = call(p, gc);
      if (!r) continue;
      std::vector<std::string> children = r->children;
      std::sort(children.begin(), children.end(), [](const std::string& a, const std::string& b) {
        const auto sa = sequence_suffix(a), sb = sequence_suffix(b);
        return sa != sb ? sa < sb : a < b;
      });
      const auto it = std::find(children.begin(), children.end(), name);
      if (it == children.end()) return std::nullopt;  // NoNode: own node gone (its session expired)
      if (it == children.begin()) return granted(stat);
      // Watch the immediate predecessor.
      const std::string predecessor = path_ + "/" + *(it - 1);
      Request ex;
      ex.op = Op::kExists;
      ex.path = predecessor;
      ex.watch = true;
      auto e = call(p, ex);
      if (!e || !e->stat) continue;  // gone already: look again
      // A watch event that a short partition held up reaches a real client
      // when TCP retransmits it; the model's messages are datagrams, so a
      // waiter that heard nothing for readTimeout looks again.
      for (;;) {
        auto w = wakes_.receive(p, read_timeout());
        if (!w || w->path.empty() || w->path == predecessor) break;
      }
    }
  }

  /// Creates the lock node (and its parents when missing); its path and stat.
  std::optional<std::pair<std::string, Stat>> create_node(sim::Process& p, const std::string& prefix) {
    const SessionId session = session_;
    for (bool lost = false;;) {
      if (lost) {
        // The answer of an earlier create was lost: look for the node by its
        // prefix (Curator findProtectedNodeInForeground, kazoo _find_node).
        if (auto found = find_node(p, prefix)) {
          if (!curator_ || session == session_) return found;
          delete_quietly(p, found->first);  // ProtectedMode.validateFoundNode
        }
      }
      Request c;
      c.op = Op::kCreate;
      c.path = prefix;
      c.ephemeral = true;
      c.sequential = true;
      auto r = call(p, c);
      lost = !r;
      if (lost) continue;
      if (r->error.empty()) return std::make_pair(r->path, *r->stat);
      if (r->error == errors::kNoNode) {
        make_parents(p);
        continue;
      }
      return std::nullopt;  // SESSIONEXPIRED: the attempt starts again on a new session
    }
  }

  std::optional<std::pair<std::string, Stat>> find_node(sim::Process& p, const std::string& prefix) {
    Request gc;
    gc.op = Op::kGetChildren;
    gc.path = path_;
    auto r = call(p, gc);
    if (!r || !r->error.empty()) return std::nullopt;
    const std::string name = prefix.substr(prefix.rfind('/') + 1);
    for (const std::string& child : r->children) {
      if (child.compare(0, name.size(), name) != 0) continue;
      Request ex;
      ex.op = Op::kExists;
      ex.path = path_ + "/" + child;
      auto s = call(p, ex);
      if (s && s->stat) return std::make_pair(ex.path, *s->stat);
    }
    return std::nullopt;
  }

  /// One delete of `path`; true once it is gone.
  bool delete_node(sim::Process& p, const std::string& path) {
    Request d;
    d.op = Op::kDelete;
    d.path = path;
    auto r = send(p, d, std::max(last_recv_ + read_timeout() - node_.monotonic(), Duration{1}));
    return r && (r->error.empty() || r->error == errors::kNoNode);
  }

  void delete_quietly(sim::Process& p, const std::string& path) {
    Request d;
    d.op = Op::kDelete;
    d.path = path;
    call(p, d);
  }

  /// ZKPaths.mkdirs (Curator: CONTAINER parents) / ensure_path (kazoo:
  /// PERSISTENT parents); an existing parent is fine.
  void make_parents(sim::Process& p) {
    for (std::size_t slash = path_.find('/', 1);; slash = path_.find('/', slash + 1)) {
      const std::string part = slash == std::string::npos ? path_ : path_.substr(0, slash);
      Request c;
      c.op = Op::kCreate;
      c.path = part;
      c.container = curator_;
      for (;;) {
        auto r = call(p, c);
        if (r) break;
      }
      if (slash == std::string::npos) return;
    }
  }

  client::Lease granted(const Stat& stat) {
    client::Lease lease{own_, token_of(lock_.zookeeper().token, own_, stat), ""};
    svc_.on_owner(node_.id(), own_, stat, servers_[cursor_]);
    begin_belief(lease);
    confirmed(last_recv_);
    return lease;
  }

  static std::string fmt_d(Duration d) { return sim::format_duration(d); }

  ZooKeeperService& svc_;
  std::vector<NodeId> servers_;
  std::size_t cursor_;
  bool curator_;
  std::string path_;
  Duration asked_;
  sim::Mailbox<Wake> wakes_;
  bool running_ = false;
  bool ever_connected_ = false;
  std::optional<Duration> jitter_;  ///< kazoo: the current ping's jitter
  State state_ = State::kConnecting;
  SessionId session_ = 0;
  Duration timeout_{0};
  Zxid last_zxid_ = 0;
  std::uint64_t conn_gen_ = 0;
  sim::Time last_send_{0}, last_recv_{0};
  std::string kazoo_uuid_;
  std::string own_;
  SessionId own_session_ = 0;
};

}  // namespace

std::unique_ptr<client::LockClient> make_client(ZooKeeperService& svc, sim::Node& node, History& h,
                                                const ClientSpec& spec, const LockSpec& lock, ClientLibrary library,
                                                std::vector<NodeId> servers, std::size_t index) {
  return std::make_unique<ZkLockClient>(svc, node, h, spec, lock, library, std::move(servers), index);
}

}  // namespace fencesim::zookeeper
