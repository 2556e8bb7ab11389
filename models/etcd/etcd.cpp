#include "models/etcd/etcd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

namespace fencesim::etcd {

using namespace std::chrono_literals;

namespace {

constexpr char kSep = '\x1f';
constexpr Duration kLessorCheck = 500ms;  // lessor.go expiredLeaseRetryInterval / revokeExpiredLeases tick

// A command's text is its fields joined by kSep, the request id last
// (decimal; 0 for the lessor's own revocations):
//   grant  TTL(ns) id            revoke LEASE id
//   lock   KEY LEASE PREFIX id   del    KEY id
//   put    KEY VALUE LEASE id
//   txn    TXN id                 (TXN: TxnSpec::serialize, length-prefixed)
// The text is what Raft replicates and what the history shows. The member
// that proposes a command builds it from the decoded request (raft::Command
// with_decoded), so that no member parses text when it applies it, and the
// text is rendered only if something reads it; the parser below is for
// commands built from text alone.
enum class OpKind : std::uint8_t { kGrant, kRevoke, kLock, kDelete, kPut, kTxn };

struct Op {
  OpKind kind = OpKind::kDelete;
  std::string key;
  std::string value;
  std::string prefix;
  LeaseId lease = 0;
  std::int64_t ttl_ns = 0;
  std::uint64_t id = 0;
  std::shared_ptr<const TxnSpec> txn;  ///< kTxn
};

std::int64_t to_int(std::string_view s) {
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

void append_decimal(std::string& out, std::int64_t v) {
  std::array<char, 24> digits;
  out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), v).ptr);
}

/// The command's text (see above); Raft's history renders it only when
/// something reads it (raft::Command::with_decoded).
std::string render(const Op& op) {
  std::string text;
  text.reserve(64 + op.key.size() + op.value.size() + op.prefix.size());
  auto field = [&text](std::string_view f) {
    text += f;
    text += kSep;
  };
  auto number = [&text](std::int64_t v) {
    append_decimal(text, v);
    text += kSep;
  };
  switch (op.kind) {
    case OpKind::kGrant:
      field("grant");
      number(op.ttl_ns);
      break;
    case OpKind::kRevoke:
      field("revoke");
      number(op.lease);
      break;
    case OpKind::kLock:
      field("lock");
      field(op.key);
      number(op.lease);
      field(op.prefix);
      break;
    case OpKind::kDelete:
      field("del");
      field(op.key);
      break;
    case OpKind::kPut:
      field("put");
      field(op.key);
      field(op.value);
      number(op.lease);
      break;
    case OpKind::kTxn:
      field("txn");
      field(op.txn->serialize());
      break;
  }
  append_decimal(text, static_cast<std::int64_t>(op.id));
  return text;
}

raft::Command encode(Op op) { return raft::Command::with_decoded<Op, &render>(sim::make_payload<Op>(std::move(op))); }

Op decode(std::string_view text) {
  if (text.substr(0, 4) == std::string_view("txn\x1f", 4)) {
    // The txn's own text may hold any byte: the id follows the last separator.
    const std::size_t last = text.rfind(kSep);
    Op op;
    op.kind = OpKind::kTxn;
    op.id = static_cast<std::uint64_t>(to_int(text.substr(last + 1)));
    op.txn = std::make_shared<const TxnSpec>(TxnSpec::parse(text.substr(4, last - 4)));
    return op;
  }
  std::array<std::string_view, 6> f{};
  std::size_t n = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(kSep, start);
    if (n == f.size()) throw sim::ModelBug("etcd: a command with too many fields");
    f[n++] = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  auto need = [&](std::size_t k) {
    if (n != k) throw sim::ModelBug("etcd: a malformed command: " + std::string(text));
  };
  Op op;
  op.id = static_cast<std::uint64_t>(to_int(f[n - 1]));
  if (f[0] == "grant") {
    need(3);
    op.kind = OpKind::kGrant;
    op.ttl_ns = to_int(f[1]);
  } else if (f[0] == "revoke") {
    need(3);
    op.kind = OpKind::kRevoke;
    op.lease = to_int(f[1]);
  } else if (f[0] == "lock") {
    need(5);
    op.kind = OpKind::kLock;
    op.key = f[1];
    op.lease = to_int(f[2]);
    op.prefix = f[3];
  } else if (f[0] == "del") {
    need(3);
    op.kind = OpKind::kDelete;
    op.key = f[1];
  } else if (f[0] == "put") {
    need(5);
    op.kind = OpKind::kPut;
    op.key = f[1];
    op.value = f[2];
    op.lease = to_int(f[3]);
  } else {
    throw sim::ModelBug("etcd: an unknown command: " + std::string(text));
  }
  return op;
}

bool has_prefix(std::string_view key, std::string_view prefix) { return key.substr(0, prefix.size()) == prefix; }

/// A relayed keepalive answer from the leader back to the member that asked.
struct KeepAliveRelay final : sim::Payload {
  std::uint64_t relay = 0;
  Duration ttl{0};
  std::string error;
  std::string describe() const override { return "LeaseKeepAlive (relayed answer)"; }
};
struct ForwardKeepAliveReq final : sim::Payload {
  LeaseId lease = 0;
  std::uint64_t relay = 0;
  std::string describe() const override { return "LeaseKeepAlive (forwarded)"; }
  bool ttl_only = false;  ///< LeaseTimeToLive: the remaining TTL, no renewal
};

}  // namespace

std::string hold_value(const std::string& key, std::int64_t create_revision) {
  // key + "@" + revision (not fmt::format: this runs on every grant and every
  // deletion; no reserve either: the usual value fits the string's own buffer).
  std::string out = key;
  out += '@';
  append_decimal(out, create_revision);
  return out;
}

std::string Request::describe() const {
  static const char* kNames[] = {"LeaseGrant", "LeaseRevoke", "LeaseKeepAlive", "LockTxn",    "Range(last created)",
                                 "Get",        "Delete",      "Watch",          "Put",        "LeaseTimeToLive",
                                 "Range",      "Txn",         "Watch(range)",   "WatchCancel"};
  return fmt::format("{} {}", kNames[static_cast<int>(kind)], key.empty() ? prefix : key);
}

std::string WatchEvents::describe() const {
  std::string out = "WATCH";
  for (const Event& e : events) out += (e.put ? " PUT " : " DELETE ") + e.kv.key;
  return out;
}

std::string Response::describe() const {
  return error.empty() ? fmt::format("OK rev={}", header_revision) : "ERROR " + error;
}

// ============================================================ EtcdMember ==

EtcdMember::EtcdMember(EtcdService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h)
    : svc_(svc), node_(node), index_(index), raft_(node, std::move(cfg), h, /*attach=*/false) {
  node_.set_behaviour(this);
  raft::Callbacks cb;
  cb.apply = [this](raft::Index i, raft::Term t, const raft::Command& c) { apply(i, t, c); };
  cb.stepped_down = [this](raft::Term) {
    // lessor Demote: only a leader expires leases.
    ++lessor_gen_;
    revoke_ignored_noted_ = revoke_forward_noted_ = false;
    expiry_.clear();
    revoking_.clear();
  };
  cb.restarted = [this] {
    // The state machine is volatile here; Raft re-applies the log from 1.
    revision_ = 1;
    keys_.clear();
    leases_.clear();
    lease_keys_.clear();
    deletions_.clear();
    events_.clear();
    undispatched_ = 0;
  };
  raft_.set_callbacks(std::move(cb));
}

void EtcdMember::start() {
  // Bootstrap: etcd-0 leads term 1; raft's start applies that term's empty
  // entry through our apply callback, which promotes its lessor there (once:
  // a second Promote here would only repeat the "leader" note).
  raft_.start();
}

void EtcdMember::on_crash() {
  raft_.on_crash();
  pending_.clear();
  relays_.clear();
  watches_.clear();
  range_watches_.clear();
  expiry_.clear();
  revoking_.clear();
  ++lessor_gen_;
}

void EtcdMember::on_restart() { raft_.on_restart(); }

void EtcdMember::reply_error(const sim::Message& m, const std::string& error) {
  auto r = sim::make_payload<Response>();
  r->error = error;
  r->header_revision = revision_;
  node_.reply(m, r);
}

void EtcdMember::on_message(const sim::Message& m) {
  if (raft_.step(m)) return;
  if (const auto* r = m.as<Request>()) {
    handle_client(m, *r);
  } else if (const auto* f = m.as<ForwardProposal>()) {
    // A follower's MsgProp: only a leader appends it; anyone else drops it
    // (the client times out and retries elsewhere).
    if (raft_.is_leader()) raft_.propose(f->command);
  } else if (const auto* k = m.as<ForwardKeepAliveReq>()) {
    const NodeId from = m.from;
    const std::uint64_t relay = k->relay;
    auto answer = [this, from, relay](Duration ttl, const std::string& error) {
      auto a = sim::make_payload<KeepAliveRelay>();
      a->relay = relay;
      a->ttl = ttl;
      a->error = error;
      node_.send(from, a);
    };
    // leasehttp's handler: lessor.Renew, no ensureLeadership (etcd.hpp);
    // the lessor answers while it is primary (not yet demoted).
    if (!serves_as_leader()) {
      answer(Duration{0}, "not leader");
    } else if (k->ttl_only) {
      answer(remaining(k->lease).value_or(-std::chrono::seconds(1)), "");  // TTL -1: unknown (time_to_live)
    } else {
      answer(renew(k->lease), "");
    }
  } else if (const auto* a = m.as<KeepAliveRelay>()) {
    auto it = relays_.find(a->relay);
    if (it == relays_.end()) return;
    auto r = sim::make_payload<Response>();
    r->error = a->error;
    r->lease = it->second.req->lease;
    r->ttl = a->ttl;
    if (auto l = leases_.find(r->lease); it->second.req->kind == ReqKind::kTimeToLive && l != leases_.end()) {
      r->granted_ttl = l->second;
    }
    r->header_revision = revision_;
    node_.reply(it->second.request, r);
    relays_.erase(it);
  }
}

void EtcdMember::handle_client(const sim::Message& m, const Request& r) {
  auto req = std::static_pointer_cast<const Request>(m.body);
  // Unique in the cluster and never reused: the member, its incarnation
  // (a restarted member re-applies its log, and must not mistake an old
  // entry for a request of its new life) and a counter.
  const std::uint64_t id = (static_cast<std::uint64_t>(index_) << 48) | ((node_.incarnation() & 0xffff) << 32) |
                           (next_request_++ & 0xffffffff);
  // Writes go through Raft as commands; the rest is answered here.
  Op op;
  op.id = id;
  switch (r.kind) {
    case ReqKind::kLeaseGrant:
      op.kind = OpKind::kGrant;
      op.ttl_ns = r.ttl.count();
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kLeaseRevoke:
      op.kind = OpKind::kRevoke;
      op.lease = r.lease;
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kLockTxn:
      op.kind = OpKind::kLock;
      op.key = r.key;
      op.lease = r.lease;
      op.prefix = r.prefix;
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kDelete:
      op.kind = OpKind::kDelete;
      op.key = r.key;
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kPut:
      op.kind = OpKind::kPut;
      op.key = r.key;
      op.value = r.value;
      op.lease = r.lease;
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kTxn:
      if (const std::string why = r.txn->check(); !why.empty()) {
        reply_error(m, why);  // refused before Raft (api/v3rpc/key.go)
        return;
      }
      op.kind = OpKind::kTxn;
      op.txn = r.txn;
      propose(m, req, id, encode(std::move(op)));
      return;
    case ReqKind::kWatchRange: watch_range(m, r); return;
    case ReqKind::kWatchCancel:
      std::erase_if(range_watches_, [&](const RangeWatch& w) { return w.client == m.from && w.id == r.watch_id; });
      return;
    case ReqKind::kKeepAlive: keepalive(m, r.lease, sim::kNoNode); return;
    case ReqKind::kTimeToLive: time_to_live(m, r.lease); return;
    case ReqKind::kLastCreated:
    case ReqKind::kRange:
    case ReqKind::kGet: serve_read(m, req); return;
    case ReqKind::kWatch: watch_delete(m, r); return;
  }
}

void EtcdMember::watch_delete(const sim::Message& m, const Request& r) {
  // Replay from history: a deletion at or after the start revision
  // (watchable_store.go syncWatchers). The Mutex's waitDelete returns on
  // the first deletion and cancels its watch, so a watch that has
  // delivered one is done: it is not kept.
  // Deletions are kept in revision order: the first of this key's at
  // or after the start revision.
  auto d = std::lower_bound(deletions_.begin(), deletions_.end(), r.revision,
                            [](const Deletion& x, std::int64_t rev) { return x.revision < rev; });
  for (; d != deletions_.end(); ++d) {
    if (d->key != r.key) continue;
    auto ev = sim::make_payload<WatchEvent>();
    ev->watch_id = r.watch_id;
    ev->key = r.key;
    ev->revision = d->revision;
    node_.send(m.from, ev);
    return;
  }
  watches_.push_back(Watch{m.from, r.watch_id, r.key, r.revision});
}

void EtcdMember::propose(const sim::Message& m, std::shared_ptr<const Request> r, std::uint64_t id,
                         raft::Command command) {
  // Registered first: on a one-member cluster Raft commits and applies the
  // entry inside propose(), and the apply must find the request to answer.
  pending_[id] = Pending{m, std::move(r)};
  if (raft_.is_leader()) {
    if (!raft_.propose(std::move(command))) {
      pending_.erase(id);
      reply_error(m, "no leader");
    }
  } else if (raft_.leader() != sim::kNoNode) {
    forward_proposal(std::move(command));
  } else {
    pending_.erase(id);
    reply_error(m, "no leader");  // etcdserver ErrNoLeader, answered at once
  }
}

void EtcdMember::keepalive(const sim::Message& m, LeaseId lease, NodeId) {
  auto answer = [this, m, lease](Duration ttl, const std::string& error) {
    auto r = sim::make_payload<Response>();
    r->error = error;
    r->lease = lease;
    r->ttl = ttl;
    r->header_revision = revision_;
    node_.reply(m, r);
  };
  // LeaseRenew asks the server's view of the leader (s.isLeader()), which
  // the Ready loop updates: a stalled member still sees the one it saw.
  if (serves_as_leader()) {
    renew_as_leader(lease, std::move(answer));
    return;
  }
  if (served_leader() == sim::kNoNode) {
    answer(Duration{0}, "no leader");
    return;
  }
  relay_to_leader(m, ReqKind::kKeepAlive, lease);
}

void EtcdMember::relay_to_leader(const sim::Message& m, ReqKind kind, LeaseId lease) {
  // Relay to the leader and back (leasehttp): a keepalive, or a TTL lookup.
  const std::uint64_t relay = next_request_++;
  auto req = sim::make_payload<Request>();
  req->kind = kind;
  req->lease = lease;
  relays_[relay] = Pending{m, req};
  auto f = sim::make_payload<ForwardKeepAliveReq>();
  f->lease = lease;
  f->relay = relay;
  f->ttl_only = kind == ReqKind::kTimeToLive;
  node_.send(served_leader(), f);
}

void EtcdMember::time_to_live(const sim::Message& m, LeaseId lease) {
  if (serves_as_leader()) {
    auto r = sim::make_payload<Response>();
    // An unknown lease is answered TTL -1, not an error (etcd v3.4
    // etcdserver/api/v3rpc/lease.go LeaseTimeToLive on ErrLeaseNotFound).
    r->lease = lease;
    r->ttl = remaining(lease).value_or(-std::chrono::seconds(1));
    if (auto l = leases_.find(lease); l != leases_.end()) r->granted_ttl = l->second;
    r->header_revision = revision_;
    node_.reply(m, r);
    return;
  }
  if (served_leader() == sim::kNoNode) {
    reply_error(m, "no leader");
    return;
  }
  relay_to_leader(m, ReqKind::kTimeToLive, lease);
}

std::optional<Duration> EtcdMember::remaining(LeaseId lease) const {
  auto l = leases_.find(lease);
  if (l == leases_.end()) return std::nullopt;
  auto e = expiry_.find(lease);
  if (e == expiry_.end()) return l->second;  // not yet on a promoted lessor's clock: its whole TTL
  return std::max(Duration{0}, e->second - node_.monotonic());
}

void EtcdMember::renew_as_leader(LeaseId lease, std::function<void(Duration, const std::string&)> answer) {
  const EtcdSpec& spec = svc_.spec();
  // isActive: latestTickTs.Add(3 * TickMs).After(time.Now()).
  const bool active = node_.monotonic() < raft_.last_tick() + 3 * raft_.config().heartbeat;
  if (!spec.keepalive_checks_leadership || (spec.keepalive_skips_check_if_active && active)) {
    answer(renew(lease), "");
    return;
  }
  raft_.read_index([this, answer = std::move(answer), lease](const raft::ReadResult& rr) {
    if (rr.ok && raft_.is_leader()) {
      answer(renew(lease), "");
    } else {
      answer(Duration{0}, rr.ok ? "not leader" : rr.error);
    }
  });
}

Duration EtcdMember::renew(LeaseId lease) {
  // lessor.Renew: an unknown lease, or one already past its expiry, is not
  // extended; the answer is TTL 0.
  auto l = leases_.find(lease);
  if (l == leases_.end()) return Duration{0};
  const Time now = node_.monotonic();
  auto e = expiry_.find(lease);
  if (e != expiry_.end() && e->second <= now) return Duration{0};
  expiry_[lease] = now + l->second;
  return l->second;
}

void EtcdMember::serve_read(const sim::Message& m, std::shared_ptr<const Request> r) {
  raft_.read_index([this, m, r](const raft::ReadResult& rr) {
    if (!rr.ok) {
      reply_error(m, rr.error.empty() ? "no leader" : rr.error);
      return;
    }
    answer_read(m, *r);
  });
}

void EtcdMember::answer_read(const sim::Message& m, const Request& r) {
  auto resp = sim::make_payload<Response>();
  resp->header_revision = revision_;
  if (r.kind == ReqKind::kRange) {
    // kvstore range over [key, range_end): the keys in order, `limit` of them.
    TxnOpResult found;
    range_into(r.key, r.range_end, r.revision, found);
    resp->range = std::move(found.kvs);
    resp->count = found.count;
  } else if (r.kind == ReqKind::kGet) {
    auto it = keys_.find(r.key);
    if (it != keys_.end()) {
      resp->kv = it->second;
      if (r.lock_check) svc_.on_grant(*this, m.from, it->second, revision_);
    }
  } else {
    // Range(prefix, WithLastCreate, WithMaxCreateRev(rev)): the latest-created
    // key under the prefix at or below the revision (concurrency waitDeletes).
    const KeyValue* best = nullptr;
    for (const auto& [k, kv] : keys_) {
      if (!has_prefix(k, r.prefix) || kv.create_revision > r.revision) continue;
      if (best == nullptr || kv.create_revision > best->create_revision) best = &kv;
    }
    if (best != nullptr) {
      resp->kv = *best;
    } else if (r.lock_check) {
      // The waiter's last waitDeletes read, with no re-check to follow
      // (etcd 3.4's Mutex): this answer makes it the owner of its key,
      // created at revision + 1, whether or not the key still exists.
      KeyValue own;
      own.key = r.key;
      own.create_revision = own.mod_revision = r.revision + 1;
      own.version = 1;
      svc_.on_grant(*this, m.from, own, revision_);
    }
  }
  node_.reply(m, resp);
}

void EtcdMember::delete_key(const std::string& key, std::vector<std::pair<std::string, std::int64_t>>& deleted) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  deleted.emplace_back(key, it->second.create_revision);
  if (it->second.lease != 0) lease_keys_[it->second.lease].erase(key);
  keys_.erase(it);
}

void EtcdMember::notify_watches(const std::string& key, std::int64_t revision) {
  deletions_.push_back(Deletion{revision, key});  // revisions only grow: the vector stays sorted
  // Each watch delivers one deletion and is then done (see kWatch).
  std::erase_if(watches_, [&](const Watch& w) {
    if (w.key != key || revision < w.from) return false;
    auto ev = sim::make_payload<WatchEvent>();
    ev->watch_id = w.id;
    ev->key = key;
    ev->revision = revision;
    node_.send(w.client, ev);
    return true;
  });
}

void EtcdMember::apply_grant(raft::Index index, Duration asked, Response& resp) {
  // The lease id is the index of the grant entry: unique in the cluster.
  const auto lease = static_cast<LeaseId>(index);
  // lessor.Grant raises a TTL below the minimum: minLeaseTTL is
  // (3 × electionTicks / 2) heartbeats, in whole seconds rounded up
  // (etcdserver/server.go minTTL; lease/lessor.go).
  const Duration ttl = std::max(asked, svc_.min_lease_ttl());
  leases_[lease] = ttl;
  if (raft_.is_leader()) expiry_[lease] = node_.monotonic() + ttl;
  resp.lease = lease;
  resp.ttl = ttl;
}

bool EtcdMember::apply_revoke(LeaseId lease, Response& resp,
                              std::vector<std::pair<std::string, std::int64_t>>& deleted) {
  bool revoked = false;
  if (leases_.count(lease) != 0) {
    const std::vector<std::string> attached = lease_keys_[lease].keys;
    for (const std::string& k : attached) delete_key(k, deleted);
    leases_.erase(lease);
    lease_keys_.erase(lease);
    expiry_.erase(lease);
    revoked = true;
  } else {
    resp.error = "lease not found";
  }
  revoking_.erase(lease);
  return revoked;
}

void EtcdMember::apply_lock(const std::string& key, LeaseId lease, std::string_view prefix, Response& resp,
                            bool answering) {
  // Txn(If(CreateRevision(key) == 0), Then(Put(key, "", WithLease(lease)), getOwner),
  //     Else(Get(key), getOwner))  — client/v3/concurrency/mutex.go tryAcquire.
  if (keys_.count(key) == 0) {
    if (leases_.count(lease) == 0) {
      resp.error = "lease not found";  // a put with an unknown lease fails the txn
    } else {
      ++revision_;
      put_key(key, "", lease, revision_);
      resp.succeeded = true;
    }
  }
  if (resp.error.empty() && answering) {
    resp.kv = keys_.at(key);
    const KeyValue* owner = nullptr;
    for (const auto& [k, kv] : keys_) {
      if (has_prefix(k, prefix) && (owner == nullptr || kv.create_revision < owner->create_revision)) owner = &kv;
    }
    if (owner != nullptr) resp.owner = *owner;
  }
}

void EtcdMember::apply_put(const std::string& key, LeaseId lease, const std::string& value, Response& resp,
                           bool answering) {
  // A plain Put (mvcc txn Put): creates or overwrites, attaching the lease.
  if (lease != 0 && leases_.count(lease) == 0) {
    resp.error = "lease not found";
    return;
  }
  ++revision_;
  put_key(key, value, lease, revision_);
  if (answering) resp.kv = keys_.at(key);
}

void EtcdMember::put_key(const std::string& key, const std::string& value, LeaseId lease, std::int64_t rev) {
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    it = keys_.emplace(key, KeyValue{key, value, rev, rev, 1, lease}).first;
  } else {
    if (it->second.lease != 0) lease_keys_[it->second.lease].erase(key);
    it->second.value = value;
    it->second.mod_revision = rev;
    ++it->second.version;
    it->second.lease = lease;
  }
  if (lease != 0) lease_keys_[lease].insert(key);
  record_event(true, it->second);
}

void EtcdMember::record_event(bool put, const KeyValue& kv) {
  if (svc_.keeps_events()) events_.push_back(WatchEvents::Event{put, kv});
}

void EtcdMember::dispatch_events() {
  if (undispatched_ == events_.size()) return;
  for (const RangeWatch& w : range_watches_) {
    std::shared_ptr<WatchEvents> out;
    for (std::size_t i = undispatched_; i < events_.size(); ++i) {
      if (!key_in_range(events_[i].kv.key, w.key, w.range_end)) continue;
      if (!out) {
        out = sim::make_payload<WatchEvents>();
        out->watch_id = w.id;
        out->header_revision = revision_;
      }
      out->events.push_back(events_[i]);
    }
    if (out) node_.send(w.client, out);
  }
  undispatched_ = events_.size();
}

void EtcdMember::watch_range(const sim::Message& m, const Request& r) {
  // Replay from history (watchable_store.go syncWatchers: events at or
  // after the start revision), then every later event as it applies.
  const std::int64_t from = r.revision > 0 ? r.revision : revision_ + 1;
  auto out = sim::make_payload<WatchEvents>();
  out->watch_id = r.watch_id;
  out->header_revision = revision_;
  for (const WatchEvents::Event& e : events_) {
    if (e.kv.mod_revision >= from && key_in_range(e.kv.key, r.key, r.range_end)) out->events.push_back(e);
  }
  if (!out->events.empty()) node_.send(m.from, out);
  range_watches_.push_back(RangeWatch{m.from, r.watch_id, r.key, r.range_end});
}

void EtcdMember::apply(raft::Index index, raft::Term term, const raft::Command& command) {
  if (command.empty()) {
    // A leader's empty entry. When the leader applies its own term's entry,
    // the lessor is promoted (etcdserver applyEntryNormal → lessor.Promote).
    if (raft_.is_leader() && term == raft_.term()) promote();
    return;
  }
  Op parsed;
  const Op* op = command.decoded<Op>();
  if (op == nullptr) {
    parsed = decode(command.str());
    op = &parsed;
  }
  auto pending = pending_.find(op->id);
  // Only the member that serves the request answers it; the others apply
  // the entry without building an answer.
  const bool answering = pending != pending_.end();
  Response answer;
  Response* const resp = &answer;
  // The keys this entry deletes, with their create revisions (a member
  // buffer, reused: apply never runs inside apply).
  std::vector<std::pair<std::string, std::int64_t>>& deleted = deleted_scratch_;
  deleted.clear();
  // Why the deleted keys' holds end (for the history; read on the leader only).
  std::string revoked_why;
  std::string_view why;
  LeaseEndCause cause = LeaseEndCause::kEnded;
  if (op->kind == OpKind::kGrant) {
    apply_grant(index, Duration{op->ttl_ns}, *resp);
  } else if (op->kind == OpKind::kRevoke) {
    if (apply_revoke(op->lease, *resp, deleted)) {
      revoked_why = fmt::format("lease {} revoked", op->lease);
      why = revoked_why;
      cause = LeaseEndCause::kRevoked;
    }
  } else if (op->kind == OpKind::kLock) {
    apply_lock(op->key, op->lease, op->prefix, *resp, answering);
  } else if (op->kind == OpKind::kPut) {
    apply_put(op->key, op->lease, op->value, *resp, answering);
  } else if (op->kind == OpKind::kDelete) {
    delete_key(op->key, deleted);
    resp->deleted = static_cast<std::int64_t>(deleted.size());
    why = "key deleted (unlock)";  // a literal: no string built per member per unlock
    cause = LeaseEndCause::kReleased;
  } else if (op->kind == OpKind::kTxn) {
    apply_txn(*op->txn, *resp, deleted);  // moves revision_ itself
    why = "key deleted (txn)";
    cause = LeaseEndCause::kDeleted;
  }
  if (!deleted.empty()) {
    if (op->kind != OpKind::kTxn) ++revision_;  // one write transaction, one revision
    for (const auto& [k, create_rev] : deleted) {
      notify_watches(k, revision_);
      if (op->kind != OpKind::kTxn) record_event(false, KeyValue{k, "", 0, revision_, 0, 0});
      svc_.on_key_deleted(*this, k, create_rev, why, cause);
    }
  }
  dispatch_events();
  resp->header_revision = revision_;
  if (answering) {
    if (op->kind == OpKind::kLock && resp->error.empty() && resp->owner && resp->kv &&
        resp->owner->create_revision == resp->kv->create_revision) {
      svc_.on_grant(*this, pending->second.request.from, *resp->kv, revision_);
    }
    if (op->kind == OpKind::kTxn && resp->error.empty()) grant_created_locks(*op->txn, *resp, pending->second);
    node_.reply(pending->second.request, sim::make_payload<Response>(std::move(answer)));
    pending_.erase(pending);
  }
}

void EtcdMember::grant_created_locks(const TxnSpec& txn, const Response& resp, const Pending& p) {
  // A lock key the txn created (now at its create revision) is granted to
  // the sender (docs/PROTOCOL.md "etcd requests", Grants and tokens).
  for (const TxnOp& t : resp.succeeded ? txn.success : txn.failure) {
    if (t.kind != TxnOp::Kind::kPut || !svc_.is_lock_key(t.key)) continue;
    auto it = keys_.find(t.key);
    if (it != keys_.end() && it->second.create_revision == revision_) {
      svc_.on_grant(*this, p.request.from, it->second, revision_);
    }
  }
}

void EtcdMember::promote() {
  // lessor.Promote: every lease gets now + election timeout + TTL, so that no
  // lease expires before its client could reach the new leader.
  const Time now = node_.monotonic();
  expiry_.clear();
  revoking_.clear();
  for (const auto& [id, ttl] : leases_) expiry_[id] = now + svc_.spec().election_timeout + ttl;
  svc_.history().note(svc_.sim().now(), node_.name(), "leader",
                      fmt::format("became etcd leader of term {} (lessor promoted)", raft_.term()));
  svc_.on_promoted(*this);
  const std::uint64_t gen = ++lessor_gen_;
  node_.after(kLessorCheck, [this, gen] { lessor_tick(gen); });
}

void EtcdMember::lessor_tick(std::uint64_t gen) {
  // The lessor stays primary until Demote (the stepped_down callback, which
  // a stalled Ready loop holds back: raft.hpp "A stalled Ready loop").
  if (gen != lessor_gen_) return;
  const Time now = node_.monotonic();
  // Collected first: proposing may apply at once (one member) and change expiry_.
  std::vector<LeaseId> expired;
  for (const auto& [id, deadline] : expiry_) {
    if (deadline <= now && revoking_.count(id) == 0 && leases_.count(id) != 0) expired.push_back(id);
  }
  // revokeExpiredLeases: from etcd 3.4.31 / 3.5.13 only after
  // ensureLeadership, whose read index cannot complete while the Ready loop
  // is stalled and whose raftStatus().Lead names the leader Raft knows
  // (models/etcd/versions.hpp).
  if (!expired.empty() && svc_.spec().revoke_checks_leadership && (raft_.stalled() || !raft_.is_leader())) {
    if (!raft_.is_leader() && !revoke_ignored_noted_) {
      revoke_ignored_noted_ = true;
      svc_.history().note(svc_.sim().now(), node_.name(), "lessor",
                          fmt::format("ignored the revocation of {} expired lease(s): this member is no longer the "
                                      "Raft leader (ensureLeadership, etcd PR #16822)",
                                      expired.size()));
    }
    expired.clear();
  }
  for (LeaseId id : expired) {
    if (gen != lessor_gen_) return;
    revoking_.insert(id);
    Op revoke;
    revoke.kind = OpKind::kRevoke;
    revoke.lease = id;  // id 0: no client waits for this one
    if (raft_.is_leader()) {
      raft_.propose(encode(std::move(revoke)));
    } else {
      // A lessor not yet demoted (before PR #16822): LeaseRevoke's proposal
      // goes to the leader Raft knows, through the member's next Ready.
      forward_proposal(encode(std::move(revoke)));
      if (raft_.leader() != sim::kNoNode && !revoke_forward_noted_) {
        revoke_forward_noted_ = true;
        svc_.history().note(svc_.sim().now(), node_.name(), "lessor",
                            fmt::format("still primary after stepping down (no Ready handled since): proposes the "
                                        "revocation of lease {} through {} (etcd-io/etcd#15247)",
                                        id, svc_.sim().node(raft_.leader()).name()));
      }
    }
  }
  node_.after(kLessorCheck, [this, gen] { lessor_tick(gen); });
}

bool EtcdMember::stall(Time until) {
  if (raft_.stalled() && until <= stall_until_) return false;
  if (!raft_.stalled()) {
    stall_is_leader_ = raft_.is_leader();
    stall_lead_ = raft_.leader();
    raft_.stall();
  }
  stall_until_ = until;
  const std::uint64_t seq = ++stall_seq_;
  const std::uint64_t incarnation = node_.incarnation();
  // True time, as every fault's end: not the member's clock, not frozen by a pause.
  svc_.sim().at(
      until,
      [this, seq, incarnation] {
        if (seq == stall_seq_ && incarnation == node_.incarnation() && node_.up()) raft_.end_stall();
      },
      sim::EventClass::kFault);
  return true;
}

void EtcdMember::forward_proposal(raft::Command command) {
  const NodeId to = raft_.leader();
  if (to == sim::kNoNode) return;  // raft drops a proposal with no leader to forward to
  auto f = sim::make_payload<ForwardProposal>();
  f->command = std::move(command);
  raft_.after_stall([this, to, f] { node_.send(to, f); });
}

// =========================================================== EtcdService ==

EtcdService::EtcdService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> members)
    : sim_(s), history_(h), lock_(sc.lock), spec_(sc.lock.etcd()), ttl_(sc.lock.ttl), member_ids_(std::move(members)) {
  const std::int64_t ticks = spec_.heartbeat.count() > 0 ? spec_.election_timeout / spec_.heartbeat : 1;
  const Duration min_ttl = (3 * ticks / 2) * spec_.heartbeat;
  const std::int64_t second = 1'000'000'000;
  min_lease_ttl_ = Duration{(min_ttl.count() + second - 1) / second * second};
  keeps_events_ =
      std::any_of(sc.clients.begin(), sc.clients.end(), [](const ClientSpec& c) { return c.program.has_value(); });
  raft::Config cfg;
  cfg.members = member_ids_;
  cfg.election_timeout = spec_.election_timeout;
  cfg.heartbeat = spec_.heartbeat;
  cfg.pre_vote = spec_.pre_vote;
  cfg.wal_fsync = spec_.wal_fsync;
  // Every member records a commit and an apply per entry, and a busy client
  // makes about two entries a second: room for that up front, so the event
  // vector does not regrow (and move thousands of events) as the run goes.
  // Only a guess for the capacity; capped at 64 k events (≈ 9 MB).
  const auto seconds = static_cast<std::size_t>(std::max<std::int64_t>(1, sc.duration / std::chrono::seconds(1)));
  raft_history_.events.reserve(
      std::min<std::size_t>(std::size_t{1} << 16, member_ids_.size() * 4 * sc.clients.size() * seconds));
  for (std::size_t i = 0; i < member_ids_.size(); ++i) {
    members_.push_back(
        std::make_unique<EtcdMember>(*this, sim_.node(member_ids_[i]), static_cast<int>(i), cfg, &raft_history_));
  }
}

EtcdService::~EtcdService() = default;

void EtcdService::start() {
  for (auto& m : members_) m->start();
}

std::optional<NodeId> EtcdService::leader() const {
  return raft::highest_term_leader(members_, [](const auto& m) -> const raft::RaftNode& { return m->raft(); });
}

void EtcdService::on_grant(EtcdMember& m, NodeId client, const KeyValue& kv, std::int64_t header_revision) {
  // Ordered by create revision first: comparing two holds rarely reaches
  // their keys.
  if (!granted_.emplace(kv.create_revision, kv.key).second) return;  // the same hold answered again (a retried request)
  const std::string value = hold_value(kv.key, kv.create_revision);
  std::optional<std::int64_t> token;
  if (spec_.token == EtcdToken::kCreateRevision) token = kv.create_revision;
  if (spec_.token == EtcdToken::kHeaderRevision) token = header_revision;
  history_.grant(sim_.now(), sim_.node(client).name(), value, token, m.node().name());
}

void EtcdService::on_key_deleted(EtcdMember& m, const std::string& key, std::int64_t create_revision,
                                 std::string_view why, LeaseEndCause cause) {
  // "An etcd lease ends at the lock service at the true time the leader
  // learns that the entry revoking the lease, or deleting the holder's key,
  // is committed." A member applies an entry only once it is committed; the
  // leader's apply is when the leader learns it.
  if (!m.raft().is_leader()) return;
  history_.lease_end(sim_.now(), hold_value(key, create_revision), std::string(why), cause);
}

void EtcdService::on_promoted(EtcdMember& m) {
  // A deletion committed and applied by the followers while the old leader
  // went away before applying it: the new leader learns it at the latest when
  // it takes over.
  // (In revision order; the lease ends are kept by value, so the order
  // shows nowhere.)
  for (const auto& [create_revision, key] : granted_) {
    const std::string value = hold_value(key, create_revision);
    if (history_.lease_ends.count(value) != 0) continue;
    auto it = m.keys().find(key);
    if (it == m.keys().end() || it->second.create_revision != create_revision) {
      history_.lease_end(sim_.now(), value, "deleted before " + m.node().name() + " took over as leader",
                         LeaseEndCause::kDeleted);
    }
  }
}

}  // namespace fencesim::etcd
