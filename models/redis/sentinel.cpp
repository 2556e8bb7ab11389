// models/redis/sentinel.cpp — Redis Sentinel (Redis 7.0 sentinel.c): the
// monitoring (PING, INFO samples, subjectively and objectively down), the
// leader election, the stepwise failover and +switch-master, hellos, and the
// conversion of an old primary. What is modelled, with sources: redis.hpp.
#include "models/redis/redis.hpp"

#include "models/redis/commands/wire.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fencesim::redis {

using namespace std::chrono_literals;

namespace {
constexpr Duration kSentinelPingPeriod = 1s;                      // sentinel.c SENTINEL_PING_PERIOD
constexpr Duration kSentinelTick = 100ms;                         // sentinelTimer runs at server.hz
constexpr Duration kSentinelHelloPeriod = 2s;                     // sentinel.c SENTINEL_PUBLISH_PERIOD
constexpr Duration kSentinelInfoPeriod = 10s;                     // sentinel.c SENTINEL_INFO_PERIOD
constexpr Duration kSentinelFastInfoPeriod = 1s;                  // INFO period of a failing-over primary's replicas
constexpr Duration kSentinelRoleWait = 4 * kSentinelHelloPeriod;  // SENTINEL_PUBLISH_PERIOD*4
}  // namespace

Duration failover_timeout_of(const RedisSpec& r) { return std::max<Duration>(2 * r.down_after, 3s); }

Sentinel::Sentinel(RedisService& svc, sim::Node& node, int index, int pool)
    : svc_(svc),
      node_(node),
      pool_(pool),
      config_primary_(svc.monitored(pool).front()),
      rng_(svc.sim().rng("sentinel-" + std::to_string(index))) {
  node_.set_behaviour(this);
}

void Sentinel::start() {
  const Time now = node_.monotonic();
  last_info_.clear();  // new links: INFO at once
  for (NodeId s : svc_.monitored(pool_)) {
    last_ok_[s] = now;
    role_primary_[s] = s == config_primary_;
    role_reported_time_[s] = now;
    node_.spawn("monitor-" + svc_.sim().node(s).name(), [this, s](sim::Process& p) { monitor(p, s); });
  }
  node_.spawn("failover", [this](sim::Process& p) { failover_loop(p); });
  node_.spawn("hello", [this](sim::Process& p) { hello_loop(p); });
}

void Sentinel::hello_loop(sim::Process& p) {
  // sentinel.c sentinelSendHello: every 2 s each sentinel publishes its view
  // of the primary with its config epoch, and one that hears a newer epoch
  // switches to it (sentinelProcessHelloMessage, "+config-update-from").
  // Without it, a sentinel that was cut off or down during a failover would
  // keep the old primary for ever and send the clients that ask it there.
  // Real hellos travel through the monitored instances' __sentinel__:hello
  // channel; here they go to the other sentinels directly, like the
  // failover announcement. Before the first failover there is nothing new to
  // tell, and nothing is sent.
  for (;;) {
    p.sleep(kSentinelHelloPeriod);
    if (config_epoch_ == 0) continue;
    auto hello = sim::make_payload<SwitchPrimary>();
    hello->primary = config_primary_;
    hello->epoch = config_epoch_;
    for (NodeId s : svc_.group_sentinels(pool_)) {
      if (s != node_.id()) node_.send(s, hello);
    }
  }
}

void Sentinel::adopt(NodeId primary, std::uint64_t epoch) {
  if (epoch < config_epoch_) return;
  const bool changed = primary != config_primary_;
  config_primary_ = primary;
  config_epoch_ = epoch;
  current_epoch_ = std::max(current_epoch_, epoch);
  const Time now = node_.monotonic();
  last_ok_[primary] = now;
  if (!changed) return;
  // sentinelResetMasterAndChangeAddress: the new primary and every other
  // server (the old primary among them) become fresh instances, the old
  // ones as replicas, each with a new link that sends INFO at once.
  for (NodeId s : svc_.monitored(pool_)) {
    role_primary_[s] = s == primary;
    role_reported_time_[s] = now;
    last_info_.erase(s);
  }
}

void Sentinel::monitor(sim::Process& p, NodeId target) {
  for (;;) {
    const Time started = node_.monotonic();
    auto reply = p.call(target, sim::make_payload<Ping>(), kSentinelPingPeriod);
    if (reply) {
      if (const auto* pong = reply->as<Pong>()) {
        last_ok_[target] = node_.monotonic();
        last_pong_[target] = *pong;
        refresh_info(target, *pong);
      }
    }
    if (node_.monotonic() - last_ok_[target] > svc_.spec().down_after) last_sdown_[target] = node_.monotonic();
    p.sleep_until(sim::ClockKind::kMonotonic, started + kSentinelPingPeriod);
  }
}

void Sentinel::refresh_info(NodeId target, const Pong& pong) {
  // sentinelSendPeriodicCommands: INFO every 10 s, every 1 s for the
  // replicas of a primary that is objectively down or being failed over
  // (here: subjectively down, or this sentinel's failover in progress).
  const Time now = node_.monotonic();
  const bool fast = target != config_primary_ && (failover_in_progress_ || subjectively_down());
  const Duration period = fast ? kSentinelFastInfoPeriod : kSentinelInfoPeriod;
  if (auto it = last_info_.find(target); it != last_info_.end() && now - it->second < period) return;
  last_info_[target] = now;
  auto [role, inserted] = role_primary_.try_emplace(target, pong.primary);
  if (inserted || role->second != pong.primary) {
    role->second = pong.primary;
    role_reported_time_[target] = now;
  }
  // sentinelRefreshInstanceInfo, "a slave turned into a master": force our
  // view only once the instance has reported role master for longer than
  // SENTINEL_PUBLISH_PERIOD*4, has not been down for as long, and the
  // configured primary looks sane. Until then the old primary of a failover
  // is still a writable primary.
  if (!pong.primary || target == config_primary_ || config_epoch_ == 0 || failover_in_progress_ ||
      target == promoted_) {
    return;
  }
  const auto ok = last_ok_.find(config_primary_);
  const auto pp = last_pong_.find(config_primary_);
  const bool primary_sane = ok != last_ok_.end() && now - ok->second <= svc_.spec().down_after &&
                            pp != last_pong_.end() && pp->second.primary;
  const auto down = last_sdown_.find(target);
  const bool no_down = down == last_sdown_.end() || now - down->second > kSentinelRoleWait;
  if (!primary_sane || !no_down || now - role_reported_time_[target] <= kSentinelRoleWait) return;
  auto r = sim::make_payload<ReplicaOf>();
  r->primary = config_primary_;
  r->epoch = config_epoch_;
  node_.send(target, r);
  svc_.history().note(
      svc_.sim().now(), node_.name(), "convert-to-slave",
      fmt::format("tells {} (reporting role master for {} ms) to replicate {}", svc_.sim().node(target).name(),
                  (now - role_reported_time_[target]).count() / 1'000'000, svc_.sim().node(config_primary_).name()));
}

bool Sentinel::subjectively_down() const {
  auto it = last_ok_.find(config_primary_);
  if (it == last_ok_.end()) return false;
  return node_.monotonic() - it->second > svc_.spec().down_after;
}

void Sentinel::failover_loop(sim::Process& p) {
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  for (;;) {
    p.sleep(kSentinelTick);
    if (!subjectively_down()) continue;
    if (!try_failover(p)) {
      // Not elected, or the promotion failed: wait before the next attempt
      // (sentinel.c failover-timeout, shortened to keep runs short).
      p.sleep(failover_timeout);
    }
  }
}

namespace {
constexpr Duration kSentinelAskTimeout = 1s;
}  // namespace

int Sentinel::count_down_votes(sim::Process& p, NodeId primary) {
  std::vector<std::uint64_t> calls;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s == node_.id()) continue;
    auto q = sim::make_payload<IsDown>();
    q->primary = primary;
    calls.push_back(p.send_request(s, q));
  }
  int agree = 1;
  const Time deadline = node_.monotonic() + kSentinelAskTimeout;
  for (std::uint64_t c : calls) {
    auto r = p.await_reply(c, deadline);
    if (r) {
      if (const auto* d = r->as<IsDownReply>(); d != nullptr && d->down) ++agree;
    }
  }
  return agree;
}

int Sentinel::request_votes(sim::Process& p, NodeId primary, std::uint64_t epoch) {
  int votes = 1;
  std::vector<std::uint64_t> calls;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s == node_.id()) continue;
    auto q = sim::make_payload<IsDown>();
    q->primary = primary;
    q->epoch = epoch;
    q->candidate = node_.id();
    calls.push_back(p.send_request(s, q));
  }
  const Time deadline = node_.monotonic() + kSentinelAskTimeout;
  for (std::uint64_t c : calls) {
    auto r = p.await_reply(c, deadline);
    if (!r) continue;
    if (const auto* d = r->as<IsDownReply>(); d != nullptr && d->vote_epoch == epoch && d->voted_for == node_.id()) {
      ++votes;
    }
  }
  return votes;
}

NodeId Sentinel::best_replica(NodeId primary) {
  NodeId best = sim::kNoNode;
  std::uint64_t best_offset = 0;
  for (NodeId s : svc_.monitored(pool_)) {
    if (s == primary) continue;
    auto ok = last_ok_.find(s);
    if (ok == last_ok_.end() || node_.monotonic() - ok->second > svc_.spec().down_after) continue;
    const std::uint64_t off = last_pong_.count(s) != 0 ? last_pong_[s].offset : 0;
    if (best == sim::kNoNode || off > best_offset) {
      best = s;
      best_offset = off;
    }
  }
  return best;
}

bool Sentinel::try_failover(sim::Process& p) {
  const NodeId primary = config_primary_;
  const int majority = static_cast<int>(svc_.group_sentinels(pool_).size()) / 2 + 1;
  // 1. Objectively down: a majority of all sentinels (self included) agree.
  const int agree = count_down_votes(p, primary);
  if (agree < majority || config_primary_ != primary) return true;  // not odown: keep watching
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  if (failover_start_time_ && node_.monotonic() - *failover_start_time_ < 2 * failover_timeout) return true;
  svc_.history().note(svc_.sim().now(), node_.name(), "odown",
                      "sees " + svc_.sim().node(primary).name() + " objectively down");
  // 2. Random desynchronisation before the election (SENTINEL_MAX_DESYNC).
  p.sleep(Duration{rng_.uniform(0, 1'000'000'000)});
  if (config_primary_ != primary || !subjectively_down()) return true;
  // Voted for another leader meanwhile: its failover goes first.
  if (failover_start_time_ && node_.monotonic() - *failover_start_time_ < 2 * failover_timeout) return true;
  // 3. Leader election for a new epoch: vote for self, ask the others.
  failover_start_time_ = node_.monotonic();
  const std::uint64_t epoch = std::max(current_epoch_, svc_.next_epoch()) + 0;
  svc_.observe_epoch(epoch);
  current_epoch_ = epoch;
  voted_epoch_ = epoch;
  voted_for_ = node_.id();
  const int votes = request_votes(p, primary, epoch);
  if (votes < majority || config_primary_ != primary) return false;
  // 4. Select the best replica: reachable recently, largest offset, lowest index.
  const NodeId best = best_replica(primary);
  if (best == sim::kNoNode) {
    svc_.history().note(svc_.sim().now(), node_.name(), "failover-abort", "no suitable replica");
    return false;
  }
  // SELECT_SLAVE, then SEND_SLAVEOF_NOONE on the next sentinelTimer tick.
  p.sleep(kSentinelTick);
  return run_failover(p, primary, best, epoch);
}

bool Sentinel::force_failover(NodeId replica, std::uint64_t epoch, std::string& why) {
  if (!node_.up()) {
    why = node_.name() + " is down";
    return false;
  }
  if (failover_in_progress_) {
    why = "INPROG: " + node_.name() + " is already failing over";
    return false;
  }
  // sentinelCommand "failover": SRI_FORCE_FAILOVER, sentinelStartFailover
  // (a new epoch, state WAIT_START); no election is needed.
  const NodeId old = config_primary_;
  current_epoch_ = std::max(current_epoch_, epoch);
  failover_in_progress_ = true;
  failover_start_time_ = node_.monotonic();
  promoted_ = replica;
  svc_.history().note(svc_.sim().now(), node_.name(), "failover-start",
                      fmt::format("SENTINEL FAILOVER of {} to {} (epoch {})", svc_.sim().node(old).name(),
                                  svc_.sim().node(replica).name(), epoch));
  node_.spawn("failover-forced", [this, old, replica, epoch](sim::Process& p) {
    // WAIT_START → SELECT_SLAVE → SEND_SLAVEOF_NOONE: one state per tick.
    p.sleep(kSentinelTick);
    p.sleep(kSentinelTick);
    run_failover(p, old, replica, epoch);
  });
  return true;
}

bool Sentinel::run_failover(sim::Process& p, NodeId old_primary, NodeId best, std::uint64_t epoch) {
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  const Time started = node_.monotonic();
  failover_in_progress_ = true;
  promoted_ = best;
  promotion_seen_ = false;
  failover_epoch_ = epoch;
  const auto end = [this] {
    failover_in_progress_ = false;
    promoted_ = sim::kNoNode;
    promotion_seen_ = false;
  };
  const std::string& best_name = svc_.sim().node(best).name();
  // sentinelFailoverSendSlaveOfNoOne: REPLICAOF NO ONE, not awaited.
  auto promote = sim::make_payload<ReplicaOf>();
  promote->epoch = epoch;
  node_.send(best, promote);
  svc_.history().note(svc_.sim().now(), node_.name(), "failover-send-slaveof-noone",
                      fmt::format("REPLICAOF NO ONE to {} (epoch {})", best_name, epoch));
  if (!wait_promotion(p, best, started, failover_timeout)) {
    end();
    return false;
  }
  promotion_seen_ = true;
  reconfigure_replicas(p, old_primary, best, epoch, failover_timeout);
  // UPDATE_CONFIG on the next tick: sentinelFailoverSwitchToPromotedSlave.
  p.sleep(kSentinelTick);
  end();
  adopt(best, epoch);
  svc_.history().note(svc_.sim().now(), node_.name(), "failover",
                      fmt::format("+switch-master: promoted {} (epoch {})", best_name, epoch));
  svc_.on_switch_master(best, epoch, pool_);
  svc_.announce(node_.id(), best, epoch, pool_);
  return true;
}

bool Sentinel::wait_promotion(sim::Process& p, NodeId best, Time started, Duration failover_timeout) {
  // WAIT_PROMOTION: the promotion is seen in an INFO reply (every 1 s to
  // the replicas during a failover); sentinelFailoverWaitPromotion aborts
  // once failover_timeout has passed since the state was entered
  // (failover_state_change_time, set when REPLICAOF NO ONE was sent).
  const std::string& best_name = svc_.sim().node(best).name();
  int answers = 0;  // INFO replies from `best` in this state, all as a replica
  for (;;) {
    p.sleep(kSentinelFastInfoPeriod);
    if (node_.monotonic() - started > failover_timeout) {
      const std::string why =
          answers == 0 ? fmt::format("the promoted replica {} never answered INFO within the failover timeout ({})",
                                     best_name, sim::format_duration(failover_timeout))
                       : fmt::format(
                             "the promoted replica {} answered INFO {} time(s) within the failover timeout "
                             "({}), always as a replica (REPLICAOF NO ONE never took effect)",
                             best_name, answers, sim::format_duration(failover_timeout));
      svc_.history().note(svc_.sim().now(), node_.name(), "failover-abort", "-failover-abort-slave-timeout: " + why);
      return false;
    }
    auto r = p.call(best, sim::make_payload<Ping>(), kSentinelAskTimeout);
    if (!r) continue;
    if (const auto* pong = r->as<Pong>(); pong != nullptr) {
      if (pong->primary) return true;
      ++answers;
    }
  }
}

void Sentinel::reconfigure_replicas(sim::Process& p, NodeId old_primary, NodeId best, std::uint64_t epoch,
                                    Duration failover_timeout) {
  // RECONF_SLAVES starts here: its timeout counts from this state change
  // (sentinelRefreshInstanceInfo sets failover_state_change_time on
  // +promoted-slave; sentinelFailoverDetectEnd compares with it).
  const Time reconf_started = node_.monotonic();
  svc_.history().note(svc_.sim().now(), node_.name(), "promoted-slave",
                      "+promoted-slave: INFO of " + svc_.sim().node(best).name() + " reports role master");
  // sentinelForceHelloUpdateForMaster: the other sentinels hear the new
  // configuration (and switch) through the next hello.
  auto hello = sim::make_payload<SwitchPrimary>();
  hello->primary = best;
  hello->epoch = epoch;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s != node_.id()) node_.send(s, hello);
  }
  // REPLICAOF to every other replica; the old primary is not one of them.
  // Done when each reports following `best` (or is down), or at
  // failover_timeout (sentinelFailoverDetectEnd).
  std::vector<NodeId> pending;
  for (NodeId s : svc_.monitored(pool_)) {
    if (s == best || s == old_primary) continue;
    auto f = sim::make_payload<ReplicaOf>();
    f->primary = best;
    f->epoch = epoch;
    node_.send(s, f);
    pending.push_back(s);
  }
  while (!pending.empty() && node_.monotonic() - reconf_started <= failover_timeout) {
    p.sleep(kSentinelFastInfoPeriod);
    std::vector<NodeId> still;
    for (NodeId s : pending) {
      auto ok = last_ok_.find(s);
      if (ok == last_ok_.end() || node_.monotonic() - ok->second > svc_.spec().down_after) continue;
      auto r = p.call(s, sim::make_payload<Ping>(), kSentinelAskTimeout);
      const auto* pong = r ? r->as<Pong>() : nullptr;
      if (pong == nullptr || pong->primary || pong->following != best) still.push_back(s);
    }
    pending = std::move(still);
  }
}

void Sentinel::on_message(const sim::Message& m) {
  if (m.as<GetPrimary>() != nullptr) {
    auto r = sim::make_payload<PrimaryIs>();
    r->primary = promotion_seen_ ? promoted_ : config_primary_;
    r->epoch = promotion_seen_ ? failover_epoch_ : config_epoch_;
    node_.reply(m, r);
  } else if (const auto* q = m.as<IsDown>()) {
    auto r = sim::make_payload<IsDownReply>();
    r->down = q->primary == config_primary_ && subjectively_down();
    if (q->candidate != sim::kNoNode) {
      // sentinelVoteLeader: one vote per epoch, to the first that asks.
      if (q->epoch > voted_epoch_) {
        voted_epoch_ = q->epoch;
        voted_for_ = q->candidate;
        current_epoch_ = std::max(current_epoch_, q->epoch);
        // Voting for another leader holds this sentinel's own failover back.
        if (q->candidate != node_.id()) {
          failover_start_time_ = node_.monotonic() + Duration{rng_.uniform(0, 1'000'000'000)};
        }
      }
      r->voted_for = voted_for_;
      r->vote_epoch = voted_epoch_;
    }
    node_.reply(m, r);
  } else if (const auto* s = m.as<SwitchPrimary>()) {
    if (s->epoch > config_epoch_) adopt(s->primary, s->epoch);
  } else if (const auto* c = m.as<RawCommand>()) {
    auto r = sim::make_payload<RawReply>();
    r->value = answer_command(c->argv);
    node_.reply(m, r);
  }
}

commands::RespValue Sentinel::answer_command(const std::vector<std::string>& argv) const {
  // A program's command to a sentinel (docs/PROTOCOL.md "Redis commands"),
  // as Redis 7.0's sentinel.c sentinelCommand answers the two a client
  // library needs to find the primary; the sentinel monitors one primary,
  // named kSentinelPrimaryName.
  using commands::RespValue;
  auto lower = [](std::string t) {
    for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return t;
  };
  const std::string name = argv.empty() ? "" : lower(argv[0]);
  if (name == "ping") return RespValue::status("PONG");
  const std::string sub = argv.size() > 1 ? lower(argv[1]) : "";
  if (name != "sentinel") {
    return RespValue::error("ERR unknown command '" + (argv.empty() ? std::string() : argv[0]) +
                            "', with args beginning with: ");
  }
  if (sub == "masters" && argv.size() == 2) return RespValue::of_array({primary_state()});
  if (sub == "master" && argv.size() == 3) {
    return argv[2] == kSentinelPrimaryName ? primary_state() : RespValue::error("ERR No such master with that name");
  }
  if (sub != "get-master-addr-by-name" && sub != "masters" && sub != "master") {
    return RespValue::error("ERR unknown subcommand '" + (argv.size() > 1 ? argv[1] : std::string()) +
                            "'. Try SENTINEL HELP.");
  }
  if (sub != "get-master-addr-by-name" || argv.size() != 3) {
    return RespValue::error("ERR wrong number of arguments for 'sentinel|" + sub + "' command");
  }
  if (argv[2] != kSentinelPrimaryName) return RespValue::nil();  // addReplyNullArray
  // sentinelGetCurrentMasterAddress: the promoted replica once this
  // sentinel's failover reconfigures the replicas, else the primary (as
  // GetPrimary). The address is the node's name and Redis's default port.
  const NodeId p = promotion_seen_ ? promoted_ : config_primary_;
  return RespValue::of_array({RespValue::bulk(svc_.sim().node(p).name()), RespValue::bulk("6379")});
}

commands::RespValue Sentinel::primary_state() const {
  // sentinel.c addReplySentinelRedisInstance for the monitored primary: its
  // configured address (not the promoted replica's: that is
  // get-master-addr-by-name's), and the flags a client library checks
  // (redis-py's Sentinel.check_master_state: master, s_down, o_down).
  // The model keeps no objectively-down state between failover attempts,
  // so o_down is not reported; s_down alone already marks it unusable.
  using commands::RespValue;
  std::string flags = "master";
  if (subjectively_down()) flags += ",s_down";
  if (failover_in_progress_) flags += ",failover_in_progress";
  const std::size_t sentinels = svc_.group_sentinels(pool_).size();
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"name", kSentinelPrimaryName},
      {"ip", svc_.sim().node(config_primary_).name()},
      {"port", "6379"},
      {"runid", ""},
      {"flags", flags},
      {"down-after-milliseconds", std::to_string(svc_.spec().down_after / std::chrono::milliseconds(1))},
      {"config-epoch", std::to_string(config_epoch_)},
      {"num-slaves", std::to_string(svc_.monitored(pool_).size() - 1)},
      {"num-other-sentinels", std::to_string(sentinels - 1)},
      {"quorum", std::to_string(sentinels / 2 + 1)},
      {"failover-timeout", std::to_string(failover_timeout_of(svc_.spec()) / std::chrono::milliseconds(1))},
      {"parallel-syncs", "1"}};
  std::vector<RespValue> out;
  for (const auto& [k, v] : fields) {
    out.push_back(RespValue::bulk(k));
    out.push_back(RespValue::bulk(v));
  }
  return RespValue::of_array(std::move(out));
}

void Sentinel::on_crash() {
  // The failover state is not persisted: a crashed leader's failover stops
  // (the others retry after failover_timeout).
  failover_in_progress_ = false;
  promoted_ = sim::kNoNode;
  promotion_seen_ = false;
}

void Sentinel::on_restart() {
  // Sentinel persists its configuration (sentinel.conf is rewritten on every
  // change), so it comes back with its epoch and primary.
  start();
}

}  // namespace fencesim::redis
