// models/redis/cluster.cpp — Redis Cluster mode; the behaviour and its
// sources are in cluster.hpp.
#include "models/redis/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/redis/redis.hpp"

namespace fencesim::redis {

using namespace std::chrono_literals;

// ------------------------------------------------------------------ slots --

std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc = static_cast<std::uint16_t>(crc ^ (static_cast<std::uint16_t>(byte) << 8));
    for (int i = 0; i < 8; ++i) {
      crc =
          (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021) : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

int key_hash_slot(std::string_view key) {
  // cluster.c keyHashSlot: hash only what is between the first '{' and the
  // first '}' after it, if that is not empty; otherwise the whole key.
  const std::size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const std::size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close != open + 1) {
      return crc16_xmodem(key.substr(open + 1, close - open - 1)) & (kClusterSlots - 1);
    }
  }
  return crc16_xmodem(key) & (kClusterSlots - 1);
}

std::pair<int, int> shard_slots(int shard, int shards) {
  // redis-cli.c clusterManagerCommandCreate: slots_per_node = 16384 / n (a
  // double), last = lround(cursor + slots_per_node - 1), the last master
  // takes the rest. In integers: round((i+1)·16384/n − 1), half up.
  auto last_of = [shards](int i) {
    if (i >= shards - 1) return kClusterSlots - 1;
    const std::int64_t x = static_cast<std::int64_t>(i + 1) * kClusterSlots - shards;  // n · (value)
    return static_cast<int>((2 * x + shards) / (2 * static_cast<std::int64_t>(shards)));
  };
  const int first = shard == 0 ? 0 : last_of(shard - 1) + 1;
  return {first, last_of(shard)};
}

int shard_of_slot(int slot, int shards) {
  for (int s = 0; s < shards; ++s) {
    if (slot <= shard_slots(s, shards).second) return s;
  }
  return shards - 1;
}

std::string ClusterMsg::describe() const {
  switch (type) {
    case kPing: return "CLUSTER PING";
    case kPong: return "CLUSTER PONG";
    case kFail: return "CLUSTER FAIL";
    case kAuthRequest: return "CLUSTER FAILOVER_AUTH_REQUEST";
    case kAuthAck: return "CLUSTER FAILOVER_AUTH_ACK";
    case kUpdate: return "CLUSTER UPDATE";
  }
  return "CLUSTER ?";
}

// ------------------------------------------------------------ ClusterNode --

namespace {
constexpr Duration kCronPeriod = 100ms;          // clusterCron runs at server.hz = 10
constexpr Duration kPingPeriod = 1s;             // see the deviation in cluster.hpp
constexpr Duration kWritableDelay = 2s;          // CLUSTER_WRITABLE_DELAY
constexpr Duration kMinRejoinDelay = 500ms;      // CLUSTER_MIN_REJOIN_DELAY
constexpr Duration kMaxRejoinDelay = 5s;         // CLUSTER_MAX_REJOIN_DELAY
constexpr Duration kElectionBase = 500ms;        // "500 milliseconds fixed delay"
constexpr std::int64_t kElectionJitterMs = 500;  // random() % 500
constexpr Duration kRankDelay = 1s;              // rank × 1000 ms
// repl-ping-replica-period's default (10 s), the slack the data-age bound
// allows for a primary's pings (the model's heartbeat is 1 s: replication.cpp).
constexpr Duration kReplPingReplicaPeriod = 10s;
}  // namespace

ClusterNode::ClusterNode(RedisService& svc, RedisServer& server, int shard)
    : svc_(svc),
      server_(server),
      me_(server.node().id()),
      shard_(shard),
      node_timeout_(svc.spec().cluster->node_timeout),
      rng_(svc.sim().rng("redis-cluster/" + server.node().name())) {
  const int shards = svc.spec().cluster->shards;
  // The cluster as `redis-cli --cluster create` leaves it: shard s owned by
  // redis-s<s>-0 with config epoch s+1, currentEpoch = the number of shards.
  for (int s = 0; s < shards; ++s) {
    owner_.push_back(svc.shard_servers(s).front());
    owner_epoch_.push_back(static_cast<std::uint64_t>(s + 1));
  }
  current_epoch_ = static_cast<std::uint64_t>(shards);
  for (int s = 0; s < shards; ++s) {
    const auto& ids = svc.shard_servers(s);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const bool primary = i == 0;
      if (ids[i] == me_) {
        if (primary) config_epoch_ = static_cast<std::uint64_t>(s + 1);
        continue;
      }
      Peer p;
      p.shard = s;
      p.primary = primary;
      p.primary_of = primary ? sim::kNoNode : ids.front();
      p.config_epoch = primary ? static_cast<std::uint64_t>(s + 1) : 0;
      peers_.emplace(ids[i], p);
    }
  }
}

Time ClusterNode::now() const { return server_.node().monotonic(); }

const std::string& ClusterNode::name_of(NodeId n) const { return svc_.sim().node(n).name(); }

void ClusterNode::note(const std::string& kind, const std::string& text) {
  svc_.history().note(svc_.sim().now(), server_.node().name(), kind, text);
}

int ClusterNode::quorum() const { return static_cast<int>(owner_.size()) / 2 + 1; }

bool ClusterNode::owns_slots() const { return server_.is_primary() && owner_[static_cast<std::size_t>(shard_)] == me_; }

bool ClusterNode::failing(NodeId n) const {
  if (n == me_) return false;
  const auto it = peers_.find(n);
  return it != peers_.end() && (it->second.pfail || it->second.fail);
}

void ClusterNode::start() {
  tick_ = 1;
  server_.node().every(kCronPeriod, [this] { cron(); });
  ping_all(ClusterMsg::kPing);
}

void ClusterNode::on_restart() {
  // nodes.conf keeps the epochs, the votes and the slot map; the links, the
  // failure reports and the election in progress are gone.
  const Time t = now();
  for (auto& [id, p] : peers_) {
    p.ping_sent = Time{-1};
    p.pong_received = t;
    p.data_received = t;
    p.pfail = false;
    p.reports.clear();
  }
  auth_time_.reset();
  auth_count_ = 0;
  auth_sent_ = false;
  among_minority_.reset();
  restarted_ = t;
  state_ok_ = false;  // clusterInit: the state starts as fail
}

std::shared_ptr<ClusterMsg> ClusterNode::header(ClusterMsg::Type type) const {
  auto m = sim::make_payload<ClusterMsg>();
  m->type = type;
  m->shard = shard_;
  m->primary = server_.is_primary();
  m->primary_of = server_.is_primary() ? sim::kNoNode : server_.following();
  if (m->primary) {
    m->config_epoch = config_epoch_;
  } else if (auto it = peers_.find(server_.following()); it != peers_.end()) {
    m->config_epoch = it->second.config_epoch;
  }
  m->current_epoch = current_epoch_;
  m->offset = server_.offset();
  m->claims_slots = owns_slots();
  if (type == ClusterMsg::kPing || type == ClusterMsg::kPong) {
    for (const auto& [id, p] : peers_) {
      if (p.pfail || p.fail) m->failing.push_back(id);
    }
  }
  return m;
}

void ClusterNode::send(NodeId to, ClusterMsg::Type type) { server_.node().send(to, header(type)); }

void ClusterNode::ping_all(ClusterMsg::Type type) {
  auto m = header(type);
  for (auto& [id, p] : peers_) {
    if (type == ClusterMsg::kPing && p.ping_sent < Time{0}) p.ping_sent = now();
    server_.node().send(id, m);
  }
}

void ClusterNode::cron() {
  const Time t = now();
  // Ping every peer once a second (every tenth cron); replicationCron's
  // once-a-second repl-timeout check runs with it.
  if (tick_++ % (kPingPeriod / kCronPeriod) == 0) {
    ping_all(ClusterMsg::kPing);
    server_.repl_timeout_check();
  }
  // clusterCron: a peer that answered no ping, and sent nothing, for longer
  // than node_timeout is flagged PFAIL.
  for (auto& [id, p] : peers_) {
    if (p.ping_sent < Time{0} || p.pfail || p.fail) continue;
    const Duration delay = std::min(t - p.ping_sent, t - p.data_received);
    if (delay > node_timeout_) {
      p.pfail = true;
      // Noted for the primaries that own slots (those decide the state).
      if (p.primary && owner_[static_cast<std::size_t>(p.shard)] == id) {
        note("pfail", fmt::format("flags {} PFAIL (no answer for {} ms)", name_of(id), delay.count() / 1'000'000));
      }
    }
  }
  update_state();
  if (!server_.is_primary()) handle_failover();
}

void ClusterNode::process_header(NodeId from, const ClusterMsg& c) {
  Peer& p = peers_[from];
  p.data_received = now();
  if (c.current_epoch > current_epoch_) current_epoch_ = c.current_epoch;
  p.shard = c.shard;
  p.primary = c.primary;
  p.primary_of = c.primary_of;
  p.offset = c.offset;
  if (c.primary) p.config_epoch = c.config_epoch;
  if (!c.primary || !c.claims_slots) return;
  const std::size_t s = static_cast<std::size_t>(c.shard);
  if (owner_[s] == from) {
    owner_epoch_[s] = std::max(owner_epoch_[s], c.config_epoch);
  } else if (c.config_epoch > owner_epoch_[s]) {
    update_slots(c.shard, from, c.config_epoch);
  } else if (c.config_epoch < owner_epoch_[s]) {
    // A stale claim (an old primary back from a partition or a restart):
    // tell it who owns the slots now (clusterSendUpdate).
    auto u = header(ClusterMsg::kUpdate);
    u->update_owner = owner_[s];
    u->update_shard = c.shard;
    u->update_epoch = owner_epoch_[s];
    server_.node().send(from, u);
  }
}

void ClusterNode::update_slots(int shard, NodeId owner, std::uint64_t epoch) {
  const std::size_t s = static_cast<std::size_t>(shard);
  const NodeId old = owner_[s];
  owner_[s] = owner;
  owner_epoch_[s] = epoch;
  if (auto it = peers_.find(owner); it != peers_.end()) {
    it->second.primary = true;
    it->second.primary_of = sim::kNoNode;
    it->second.config_epoch = std::max(it->second.config_epoch, epoch);
  }
  if (owner == me_) return;
  if (old == me_ && server_.is_primary()) {
    // clusterUpdateSlotsConfigWith: "our master lost all its slots": the
    // old primary becomes a replica of the new owner and resynchronises.
    note("cluster-demoted", fmt::format("{} owns shard {} now (config epoch {})", name_of(owner), shard, epoch));
    server_.follow(owner);
  } else if (!server_.is_primary() && server_.following() == old && shard == shard_) {
    server_.follow(owner);
  }
}

int ClusterNode::failure_reports(NodeId n) {
  Peer& p = peers_[n];
  const Duration validity = 2 * node_timeout_;  // CLUSTER_FAIL_REPORT_VALIDITY_MULT
  for (auto it = p.reports.begin(); it != p.reports.end();) {
    if (now() - it->second > validity) {
      it = p.reports.erase(it);
    } else {
      ++it;
    }
  }
  return static_cast<int>(p.reports.size());
}

void ClusterNode::mark_failing_if_needed(NodeId n) {
  Peer& p = peers_[n];
  if (!p.pfail || p.fail) return;
  int failures = failure_reports(n);
  if (server_.is_primary()) ++failures;  // "count myself as a voter if I'm a master"
  if (failures < quorum()) return;
  p.pfail = false;
  p.fail = true;
  p.fail_time = now();
  note("fail", fmt::format("flags {} FAIL ({} of {} primaries agree)", name_of(n), failures, owner_.size()));
  auto f = header(ClusterMsg::kFail);
  f->failing = {n};
  for (const auto& [id, peer] : peers_) server_.node().send(id, f);
  update_state();
}

void ClusterNode::clear_failure_if_needed(NodeId n) {
  Peer& p = peers_[n];
  if (!p.fail) return;
  const bool owns = p.primary && owner_[static_cast<std::size_t>(p.shard)] == n;
  // A replica, or a primary without slots: at once. A primary with slots:
  // after node_timeout × CLUSTER_FAIL_UNDO_TIME_MULT (2) without a failover.
  if (!owns || now() - p.fail_time > 2 * node_timeout_) {
    p.fail = false;
    note("fail-cleared", fmt::format("clears the FAIL flag of {}", name_of(n)));
  }
}

void ClusterNode::on_message(const sim::Message& m, const ClusterMsg& c) {
  const NodeId from = m.from;
  if (peers_.count(from) == 0) return;
  process_header(from, c);
  Peer& p = peers_[from];
  switch (c.type) {
    case ClusterMsg::kPing: send(from, ClusterMsg::kPong); break;
    case ClusterMsg::kPong:
      p.pong_received = now();
      p.ping_sent = Time{-1};
      if (p.pfail) {
        p.pfail = false;
      } else if (p.fail) {
        clear_failure_if_needed(from);
      }
      break;
    case ClusterMsg::kFail:
      for (NodeId n : c.failing) {
        if (n == me_ || peers_.count(n) == 0 || peers_[n].fail) continue;
        Peer& f = peers_[n];
        f.fail = true;
        f.pfail = false;
        f.fail_time = now();
      }
      update_state();
      return;
    case ClusterMsg::kAuthRequest: vote_if_needed(from, c); return;
    case ClusterMsg::kAuthAck:
      // Counted from a primary that owns slots, for this election's epoch.
      if (c.primary && c.claims_slots && c.current_epoch >= auth_epoch_ && auth_sent_) ++auth_count_;
      return;
    case ClusterMsg::kUpdate:
      if (c.update_epoch > owner_epoch_[static_cast<std::size_t>(c.update_shard)] ||
          (c.update_shard == shard_ && owner_[static_cast<std::size_t>(shard_)] == me_ && c.update_owner != me_ &&
           c.update_epoch > config_epoch_)) {
        update_slots(c.update_shard, c.update_owner, c.update_epoch);
      }
      return;
  }
  // Gossip (clusterProcessGossipSection): a primary's view of who is failing.
  if (!p.primary) return;
  for (auto& [id, peer] : peers_) {
    if (id == from) continue;
    const bool reported = std::find(c.failing.begin(), c.failing.end(), id) != c.failing.end();
    if (reported) {
      peer.reports[from] = now();
      mark_failing_if_needed(id);
    } else {
      peer.reports.erase(from);
    }
  }
}

void ClusterNode::update_state() {
  bool ok = true;
  for (NodeId o : owner_) {
    if (o != me_ && peers_.count(o) != 0 && peers_.at(o).fail) ok = false;
  }
  int reachable = 0;
  for (NodeId o : owner_) {
    if (!failing(o)) ++reachable;
  }
  if (reachable < quorum()) {
    ok = false;
    among_minority_ = now();
  }
  if (ok == state_ok_) return;
  if (ok && restarted_ && server_.is_primary() && now() - *restarted_ < kWritableDelay) return;
  const Duration rejoin = std::clamp(node_timeout_, kMinRejoinDelay, kMaxRejoinDelay);
  if (ok && server_.is_primary() && among_minority_ && now() - *among_minority_ < rejoin) return;
  state_ok_ = ok;
  note("cluster-state", ok ? "cluster state ok" : "cluster state fail: refuses commands with CLUSTERDOWN");
}

int ClusterNode::rank() const {
  int r = 0;
  for (const auto& [id, p] : peers_) {
    if (!p.primary && p.primary_of == server_.following() && p.offset > server_.offset()) ++r;
  }
  return r;
}

bool ClusterNode::data_too_old() {
  const RedisClusterSpec& spec = *svc_.spec().cluster;
  data_age_story_.clear();
  if (spec.replica_validity_factor == 0) return false;
  // data_age: since the last interaction while connected, else since the
  // link was noticed down (repl_down_since; never connected: "since EVER").
  const RedisServer::ReplicaLink l = server_.replica_link();
  const std::int64_t now_s = server_.unixtime();
  const std::optional<std::int64_t> since = l.connected ? std::optional(l.last_interaction) : l.down_since;
  const Duration age = since ? std::chrono::seconds(now_s - *since) : Duration::max();
  // "Remove the node timeout from the data age": the baseline.
  const Duration counted = age > node_timeout_ && age != Duration::max() ? age - node_timeout_ : age;
  const Duration bound = kReplPingReplicaPeriod + node_timeout_ * spec.replica_validity_factor;
  const auto figures = [&] {
    if (!since) return std::string("data age unbounded");
    if (counted == age) return fmt::format("data age {}", sim::format_duration(age));
    return fmt::format("data age {} minus node_timeout {} = {}", sim::format_duration(age),
                       sim::format_duration(node_timeout_), sim::format_duration(counted));
  };
  if (counted <= bound) {
    cant_failover_noted_ = false;
    // The election note tells a data age counted from a link noticed down
    // (a connected replica's is the time since its primary's last ping).
    data_age_story_ = l.connected
                          ? std::string()
                          : fmt::format("; its link to {} was noticed down at {} s: {} <= {}",
                                        name_of(server_.following()), *since, figures(), sim::format_duration(bound));
    return false;
  }
  if (!cant_failover_noted_) {
    // clusterLogCantFailover(CLUSTER_CANT_FAILOVER_DATA_AGE), logged when the reason changes.
    cant_failover_noted_ = true;
    const std::string how =
        l.connected ? fmt::format("connected to {}, which last sent data at {} s", name_of(server_.following()),
                                  l.last_interaction)
        : since     ? fmt::format("its link to {} was noticed down at {} s", name_of(server_.following()), *since)
                    : fmt::format("never connected to {} since it started", name_of(server_.following()));
    note("cant-failover",
         fmt::format("cannot fail over, its data is too old: {}; {} > {} (repl-ping-replica-period 10s + "
                     "node_timeout × cluster-replica-validity-factor {})",
                     how, figures(), sim::format_duration(bound), spec.replica_validity_factor));
  }
  return true;
}

void ClusterNode::handle_failover() {
  const NodeId primary = server_.following();
  auto pit = peers_.find(primary);
  if (pit == peers_.end() || !pit->second.fail || owner_[static_cast<std::size_t>(shard_)] != primary) {
    cant_failover_noted_ = false;  // CLUSTER_CANT_FAILOVER_NONE
    return;                        // no failed primary, or one that serves no slots
  }
  // The replica's data-age check (cluster-replica-validity-factor); manual
  // failovers skip it (the `failover` fault is TAKEOVER: takeover()).
  if (data_too_old()) return;
  const Duration auth_timeout = std::max<Duration>(2 * node_timeout_, 2s);
  const Duration auth_retry = 2 * auth_timeout;
  const Time t = now();
  if (!auth_time_ || t - *auth_time_ > auth_retry) {
    auth_rank_ = rank();
    auth_time_ =
        t + kElectionBase + std::chrono::milliseconds(rng_.uniform(0, kElectionJitterMs - 1)) + auth_rank_ * kRankDelay;
    auth_count_ = 0;
    auth_sent_ = false;
    note("election", fmt::format("schedules its election in {} ms (rank {}, offset {}){}",
                                 (*auth_time_ - t).count() / 1'000'000, auth_rank_, server_.offset(), data_age_story_));
    // "broadcast our offset to the other replicas" of the same primary.
    for (const auto& [id, p] : peers_) {
      if (!p.primary && p.primary_of == primary) send(id, ClusterMsg::kPong);
    }
    return;
  }
  if (!auth_sent_) {
    const int r = rank();
    if (r > auth_rank_) {
      *auth_time_ += (r - auth_rank_) * kRankDelay;
      auth_rank_ = r;
    }
  }
  if (t < *auth_time_) return;
  if (t - *auth_time_ > auth_timeout) return;  // this election expired: wait for the retry
  if (!auth_sent_) {
    ++current_epoch_;
    auth_epoch_ = current_epoch_;
    auth_sent_ = true;
    note("election", fmt::format("asks for votes (epoch {})", auth_epoch_));
    auto req = header(ClusterMsg::kAuthRequest);
    for (const auto& [id, p] : peers_) server_.node().send(id, req);
    return;
  }
  if (auth_count_ >= quorum()) replace_primary();
}

void ClusterNode::vote_if_needed(NodeId from, const ClusterMsg& c) {
  if (!owns_slots()) return;  // only primaries that serve slots vote
  if (c.current_epoch < current_epoch_) return;
  if (last_vote_epoch_ == current_epoch_) return;  // voted in this epoch already
  const Peer& requester = peers_[from];
  if (requester.primary || requester.primary_of == sim::kNoNode) return;
  auto mit = peers_.find(requester.primary_of);
  if (mit == peers_.end() || !mit->second.fail) return;  // its primary is not FAIL here
  Peer& master = mit->second;
  if (master.voted_time && now() - *master.voted_time < 2 * node_timeout_) return;
  if (owner_epoch_[static_cast<std::size_t>(c.shard)] > c.config_epoch) return;  // a stale claim
  last_vote_epoch_ = current_epoch_;
  master.voted_time = now();
  note("vote", fmt::format("votes for {} (epoch {})", name_of(from), current_epoch_));
  send(from, ClusterMsg::kAuthAck);
}

void ClusterNode::replace_primary() {
  const NodeId old = server_.following();
  if (config_epoch_ < auth_epoch_) config_epoch_ = auth_epoch_;
  note("election", fmt::format("won the election with {} votes (epoch {}): takes shard {} from {}", auth_count_,
                               auth_epoch_, shard_, name_of(old)));
  owner_[static_cast<std::size_t>(shard_)] = me_;
  owner_epoch_[static_cast<std::size_t>(shard_)] = config_epoch_;
  auth_time_.reset();
  auth_sent_ = false;
  server_.promote();
  update_state();
  ping_all(ClusterMsg::kPong);
}

void ClusterNode::takeover() {
  // CLUSTER FAILOVER TAKEOVER: a new config epoch without agreement.
  ++current_epoch_;
  config_epoch_ = current_epoch_;
  const NodeId old = server_.following();
  note("takeover", fmt::format("takes shard {} over from {} (config epoch {})", shard_,
                               old == sim::kNoNode ? std::string("no primary") : name_of(old), config_epoch_));
  owner_[static_cast<std::size_t>(shard_)] = me_;
  owner_epoch_[static_cast<std::size_t>(shard_)] = config_epoch_;
  server_.promote();
  update_state();
  ping_all(ClusterMsg::kPong);
}

bool ClusterNode::redirect(const sim::Message& m, const Command& c) {
  auto error = [&](std::string text, NodeId to) {
    auto r = sim::make_payload<Reply>();
    r->error = std::move(text);
    r->redirect = to;
    server_.node().reply(m, r);
    return true;
  };
  const int slot = key_hash_slot(c.key);
  // getNodeByQuery: every key of the command (the script's KEYS) in one slot.
  if (c.op == Op::kAcquire && c.with_token && key_hash_slot(c.counter_key) != slot) {
    return error("CROSSSLOT Keys in request don't hash to the same slot", sim::kNoNode);
  }
  if (!state_ok_) return error("CLUSTERDOWN The cluster is down", sim::kNoNode);
  const int shard = shard_of_slot(slot, static_cast<int>(owner_.size()));
  const NodeId o = owner_[static_cast<std::size_t>(shard)];
  if (o != me_) return error(fmt::format("MOVED {} {}", slot, name_of(o)), o);
  return false;
}

std::optional<std::string> ClusterNode::refusal(const std::vector<std::string>& keys) const {
  // cluster.c getNodeByQuery for a program's command: no keys, any node;
  // keys in more than one slot, CROSSSLOT; else the slot's owner or MOVED.
  if (keys.empty()) return std::nullopt;
  const int slot = key_hash_slot(keys.front());
  for (const std::string& k : keys) {
    if (key_hash_slot(k) != slot) return std::string("CROSSSLOT Keys in request don't hash to the same slot");
  }
  if (!state_ok_) return std::string("CLUSTERDOWN The cluster is down");
  const int shard = shard_of_slot(slot, static_cast<int>(owner_.size()));
  const NodeId o = owner_[static_cast<std::size_t>(shard)];
  if (o != me_) return fmt::format("MOVED {} {}", slot, name_of(o));
  return std::nullopt;
}

}  // namespace fencesim::redis
