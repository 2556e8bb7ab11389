// Lock clients for the Redis-like service.
//
// Single primary (with Sentinel): the seed article's acquire-and-INCR script
// or plain SET NX PX, renewal by compare-and-PEXPIRE, release by
// compare-and-delete (redis.io "Distributed Locks with Redis", the
// single-instance pattern). Clients ask the sentinels for the primary at
// start and after a command times out (SENTINEL get-master-addr-by-name),
// and follow +switch-master announcements, retrying pending commands on the
// new primary.
//
// Redlock (redsync, github.com/go-redsync/redsync mutex.go): the value is
// sent to every primary at once; each reply is awaited up to a per-primary
// timeout of 5% of the TTL; the lock is held when a majority accepted and
// the validity ttl − elapsed − drift (drift = 1% of the TTL + 2 ms) is
// positive; otherwise the client deletes its value everywhere and retries.
// Extension runs on every primary and needs a majority.
// Redlock pools with replicas and Sentinel (samcook/RedLock.net#11,
// mike-marcacci/node-redlock#16: a pool may be a Sentinel-backed
// connection; go-redsync/redsync#24: a redsync pool built on
// FZambia/sentinel): each pool is reached at its current primary,
// learnt as the single-primary client learns it (+switch-master, and the
// pool's sentinels asked at start and after a timeout or READONLY).
//
// redsync as deployed (clients[].library "redsync", go-redsync/redsync
// v4.17.0 mutex.go, redsync.go, scripts.go, error.go): Lock() draws one
// value for all its tries; 32 tries (redsync.go NewMutex), a random 50–249 ms
// between them (rand.Intn(250-50)+50; WithRetryDelay: a retry_interval other
// than the format's 100 ms default); each try waits for the primaries up to
// expiry × timeoutFactor (0.05), counts the validity expiry − elapsed −
// expiry × driftFactor (0.01, no 2 ms), and after a failed try releases the
// value everywhere, waiting as long; after the last try Lock() returns
// ErrTaken ("lock already taken, locked nodes: [..]") when a majority held
// another value, else ErrFailed: the acquire gives up. redsync never extends
// by itself (PR #153, wontfix): `renew` is the caller's Extend() loop every
// renew_interval. Extend touches every primary and waits for every answer
// (it sets no deadline: the connection's read timeout, command_timeout
// here); fewer than a quorum → false with ErrTaken when a quorum held another
// value, else the nodes' errors; a quorum past the validity → ErrExtendFailed;
// a failed Extend releases nothing (since v4.12.0). Unlock: one round on
// every primary, waiting for every answer, no retry.
//
// Redis Cluster (lock.cluster): ClusterLockClient below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "models/client/client.hpp"
#include "models/client/redis_primary_client.hpp"
#include "models/redis/cluster.hpp"
#include "models/redis/protocol.hpp"

namespace fencesim::client {

using redis::Command;
using redis::Op;
using redis::Reply;
using namespace std::chrono_literals;

std::shared_ptr<Command> make_command(Op op, const LockSpec& lock, const std::string& value, bool with_token) {
  auto c = sim::make_payload<Command>();
  c->op = op;
  c->key = lock.key;
  c->value = value;
  c->ttl = lock.ttl;
  c->with_token = with_token;
  c->counter_key = redis_counter_key(lock);
  return c;
}

// ------------------------------------------------- the current primary --

RedisPrimaryClient::RedisPrimaryClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                       std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels)
    : LockClientBase(node, h, spec, lock),
      servers_(std::move(servers)),
      sentinels_(std::move(sentinels)),
      primary_(servers_.front()) {}

void RedisPrimaryClient::init(sim::Process& p) {
  primary_ = servers_.front();
  ask_sentinels(p);
}

void RedisPrimaryClient::on_message(const sim::Message& m) {
  if (const auto* sw = m.as<redis::SwitchPrimary>()) {
    if (sw->epoch < primary_epoch_) return;
    primary_epoch_ = sw->epoch;
    if (sw->primary == primary_) return;
    primary_ = sw->primary;
    // Retry what was pending on the new primary.
    const std::set<std::uint64_t> pending = inflight_;
    for (std::uint64_t c : pending) node_.abandon_call(c);
  }
}

void RedisPrimaryClient::on_crash() {
  LockClientBase::on_crash();
  redial_ = false;
  inflight_.clear();
  primary_ = servers_.front();
  primary_epoch_ = 0;
}

CallResult RedisPrimaryClient::call(sim::Process& p, std::shared_ptr<Command> cmd, bool ask_on_timeout) {
  if (redial_) {
    redial_ = false;
    ask_sentinels(p);
  }
  const sim::Time deadline = node_.monotonic() + spec_.command_timeout;
  const std::uint64_t id = p.send_request(primary_, cmd);
  inflight_.insert(id);
  auto reply = p.await_reply(id, deadline);
  inflight_.erase(id);
  CallResult out;
  if (reply) {
    if (const auto* r = reply->as<Reply>()) {
      out.status = CallStatus::kReply;
      out.reply = *r;
      if (r->error.rfind("READONLY", 0) == 0) ask_sentinels(p);
      return out;
    }
  }
  if (node_.monotonic() < deadline) {
    out.status = CallStatus::kSwitched;
    return out;
  }
  out.status = CallStatus::kTimeout;
  if (ask_on_timeout) {
    ask_sentinels(p);
  } else {
    redial_ = true;
  }
  return out;
}

void RedisPrimaryClient::ask_sentinels(sim::Process& p) {
  for (sim::NodeId s : sentinels_) {
    auto r = p.call(s, sim::make_payload<redis::GetPrimary>(), spec_.command_timeout);
    if (!r) continue;
    if (const auto* pi = r->as<redis::PrimaryIs>()) {
      if (pi->epoch >= primary_epoch_) {
        primary_epoch_ = pi->epoch;
        primary_ = pi->primary;
      }
      return;
    }
  }
}

namespace {

// --------------------------------------------------------- single primary --

class RedisLockClient final : public RedisPrimaryClient {
 public:
  using RedisPrimaryClient::RedisPrimaryClient;

  Lease acquire(sim::Process& p) override {
    const bool with_token = lock_.redis().token == RedisToken::kIncr;
    for (;;) {
      const std::string value = fresh_value();
      const sim::NodeId target = primary();
      const sim::Time sent = node_.monotonic();
      CallResult r = call(p, make_command(Op::kAcquire, lock_, value, with_token));
      if (r.status == CallStatus::kReply && r.reply.error.empty() && !r.reply.nil) {
        Lease lease{value, with_token ? r.reply.integer : std::nullopt, ""};
        confirmed(sent);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      if (r.status != CallStatus::kReply || !r.reply.error.empty()) {
        // A timed-out attempt may have succeeded: delete it if it did (as
        // redsync does), without waiting for the answer.
        if (r.status != CallStatus::kReply) node_.send(target, make_command(Op::kRelease, lock_, value, false));
        if (r.status == CallStatus::kSwitched) continue;  // retry on the new primary now
      }
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    const std::string value = lease_value_;
    end_belief("release");
    for (;;) {
      CallResult r = call(p, make_command(Op::kRelease, lock_, value, false));
      if (r.status == CallStatus::kReply && r.reply.error.empty()) return;
      if (r.status == CallStatus::kReply) p.sleep(spec_.retry_interval);  // e.g. READONLY: primary moved
    }
  }

 private:
  void start_renewal(const Lease& lease) {
    lease_value_ = lease.value;
    const std::uint64_t gen = ++renew_gen_;
    if (!renews()) return;
    const sim::Time granted = clock_now();
    node_.spawn("renewal", [this, gen, lease, granted](sim::Process& p) { renew_loop(p, gen, lease, granted); });
  }

  void renew_loop(sim::Process& p, std::uint64_t gen, Lease lease, sim::Time granted) {
    sim::Time last = granted;
    for (int renewals = 0;; ++renewals) {
      // "A timer on a clock is a deadline on that clock": a step of the
      // renew clock moves the renewal.
      sleep_until_renewal(p, granted, last, renewals);
      if (gen != renew_gen_) return;
      const sim::Time first_sent = node_.sim().now();
      for (int failures = 1;; ++failures) {
        const sim::Time sent = node_.monotonic();
        CallResult r = call(p, make_command(Op::kRenew, lock_, lease.value, false));
        if (gen != renew_gen_) return;
        if (r.status == CallStatus::kReply && r.reply.integer) {
          if (*r.reply.integer == 1) {
            history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), true});
            confirmed(sent);
            last = clock_now();
            break;
          }
          // Refused: the key is gone or holds another value.
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), false});
          lose_lease("renewal refused");
          return;
        }
        // No answer (a timeout, a switch) or an error (READONLY and the
        // like): a failed attempt, retried unless the policy gives up.
        if (renewal_failed(first_sent, failures)) return;
        if (r.status == CallStatus::kReply) p.sleep(spec_.retry_interval);
      }
    }
  }

  std::string lease_value_;
};

// ---------------------------------------------------------------- Redlock --

class RedlockClient final : public LockClientBase {
 public:
  /// `pools`: each pool's servers, its initial primary first (one server
  /// per pool without replicas); `pool_sentinels`: each pool's sentinels
  /// (empty lists without them).
  RedlockClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                std::vector<std::vector<sim::NodeId>> pools, std::vector<std::vector<sim::NodeId>> pool_sentinels)
      : LockClientBase(node, h, spec, lock),
        pools_(std::move(pools)),
        pool_sentinels_(std::move(pool_sentinels)),
        redsync_(spec.library == ClientLibrary::kRedsync) {
    reset_primaries();
  }

  std::string acquire_error() const override { return acquire_error_; }
  bool acquire_error_permanent() const override { return false; }  // redsync gave up; the next Lock() tries again

  void init(sim::Process& p) override {
    reset_primaries();
    for (std::size_t i = 0; i < pools_.size(); ++i) ask_sentinels(p, i);
  }

  /// +switch-master of one pool's sentinels: that pool's primary moves.
  void on_message(const sim::Message& m) override {
    if (const auto* sw = m.as<redis::SwitchPrimary>()) {
      const std::size_t i = pool_of(sw->primary);
      if (i >= pools_.size() || sw->epoch < epochs_[i]) return;
      epochs_[i] = sw->epoch;
      primaries_[i] = sw->primary;
    }
  }

  void on_crash() override {
    LockClientBase::on_crash();
    reset_primaries();
  }

  Lease acquire(sim::Process& p) override {
    if (redsync_) return acquire_redsync(p);
    const int majority = static_cast<int>(primaries_.size()) / 2 + 1;
    const sim::Duration per_primary = lock_.ttl * 5 / 100;
    const sim::Duration drift = lock_.ttl / 100 + 2ms;
    for (;;) {
      const std::string value = fresh_value();
      const sim::Time start = node_.monotonic();
      const auto replies = broadcast(p, Op::kAcquire, value, start + per_primary);
      int ok = 0;
      for (const auto& r : replies) {
        if (r && r->error.empty() && !r->nil) ++ok;
      }
      const sim::Duration elapsed = node_.monotonic() - start;
      const sim::Duration validity = lock_.ttl - elapsed - drift;
      if (ok >= majority && validity > sim::Duration{0}) {
        Lease lease{value, std::nullopt, ""};
        confirmed(start);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      for (sim::NodeId n : primaries_) node_.send(n, make_command(Op::kRelease, lock_, value, false));
      // A pool with sentinels whose primary did not answer, or answered
      // READONLY, is asked for its current primary (go-redis FailoverClient:
      // SENTINEL get-master-addr-by-name on reconnection).
      for (std::size_t i = 0; i < replies.size(); ++i) {
        if (!replies[i] || replies[i]->error.rfind("READONLY", 0) == 0) ask_sentinels(p, i);
      }
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    const std::string value = lease_value_;
    end_belief("release");
    if (redsync_) {
      // Unlock: one round, every answer awaited (the connection's read timeout).
      (void)broadcast(p, Op::kRelease, value, node_.monotonic() + spec_.command_timeout);
      return;
    }
    // Released on every primary; a primary that does not answer within the
    // command timeout is asked again, up to three rounds (redsync Unlock does
    // one round; the format asks for retries on timeout).
    std::vector<sim::NodeId> pending = primaries_;
    for (int round = 0; round < 3 && !pending.empty(); ++round) {
      std::vector<std::uint64_t> calls;
      for (sim::NodeId n : pending) calls.push_back(p.send_request(n, make_command(Op::kRelease, lock_, value, false)));
      const sim::Time deadline = node_.monotonic() + spec_.command_timeout;
      std::vector<sim::NodeId> again;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (!p.await_reply(calls[i], deadline)) again.push_back(pending[i]);
      }
      pending = std::move(again);
    }
  }

 private:
  /// redsync's Lock(): see the file's header.
  Lease acquire_redsync(sim::Process& p) {
    const int tries = spec_.tries.value_or(32);  // redsync.go NewMutex: tries 32, or WithTries
    const int quorum = static_cast<int>(primaries_.size()) / 2 + 1;
    const sim::Duration per_try = lock_.ttl * 5 / 100;  // expiry × timeoutFactor
    acquire_error_.clear();
    const std::string value = fresh_value();  // genValueFunc, once per Lock()
    std::vector<std::size_t> taken;           // the nodes that held another value at the last try
    for (int i = 0; i < tries; ++i) {
      if (i != 0) p.sleep(redsync_delay());
      const sim::Time start = node_.monotonic();
      const auto replies = broadcast(p, Op::kAcquire, value, start + per_try);
      int n = 0;
      taken.clear();
      for (std::size_t k = 0; k < replies.size(); ++k) {
        if (replies[k] && replies[k]->error.empty() && !replies[k]->nil) ++n;
        if (replies[k] && replies[k]->error.empty() && replies[k]->nil) taken.push_back(k);
      }
      const sim::Duration validity = lock_.ttl - (node_.monotonic() - start) - lock_.ttl / 100;
      if (n >= quorum && validity > sim::Duration{0}) {
        Lease lease{value, std::nullopt, ""};
        confirmed(start);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      (void)broadcast(p, Op::kRelease, value, node_.monotonic() + per_try);
      for (std::size_t k = 0; k < replies.size(); ++k) {
        if (!replies[k] || replies[k]->error.rfind("READONLY", 0) == 0) ask_sentinels(p, k);
      }
    }
    // error.go: ErrTaken's text, or ErrFailed's (redsync joins the nodes'
    // own errors there; the model gives the one sentence).
    acquire_error_ = static_cast<int>(taken.size()) >= quorum
                         ? fmt::format("lock already taken, locked nodes: [{}] (Lock gave up after {} {})",
                                       fmt::join(taken, " "), tries, tries == 1 ? "try" : "tries")
                         : fmt::format("redsync: failed to acquire lock (Lock gave up after {} {})", tries,
                                       tries == 1 ? "try" : "tries");
    return Lease{};
  }

  /// The delay before each try after the first: rand.Intn(250-50)+50 ms,
  /// or WithRetryDelay(retry_interval) when the file sets another.
  sim::Duration redsync_delay() {
    if (spec_.retry_interval != ClientSpec{}.retry_interval) return spec_.retry_interval;
    return std::chrono::milliseconds(rng_.uniform(50, 249));
  }

  /// redsync's Extend(): true, or false with the reason the caller sees.
  bool extend_redsync(sim::Process& p, const std::string& value, std::string& why) {
    const int quorum = static_cast<int>(primaries_.size()) / 2 + 1;
    const sim::Time start = node_.monotonic();
    const auto replies = broadcast(p, Op::kRenew, value, start + spec_.command_timeout);
    int n = 0;
    std::vector<std::size_t> taken;
    for (std::size_t k = 0; k < replies.size(); ++k) {
      if (replies[k] && replies[k]->integer && *replies[k]->integer == 1) ++n;
      if (replies[k] && replies[k]->error.empty() && replies[k]->integer && *replies[k]->integer == 0)
        taken.push_back(k);
    }
    if (n < quorum) {
      why = static_cast<int>(taken.size()) >= quorum
                ? fmt::format("Extend: lock already taken, locked nodes: [{}]", fmt::join(taken, " "))
                : fmt::format("Extend: {} of {} primaries extended, quorum {}", n, replies.size(), quorum);
      return false;
    }
    if (lock_.ttl - (node_.monotonic() - start) - lock_.ttl / 100 <= sim::Duration{0}) {
      why = "Extend: redsync: failed to extend lock (a quorum answered past the validity)";
      return false;
    }
    return true;
  }

  std::vector<std::optional<Reply>> broadcast(sim::Process& p, Op op, const std::string& value, sim::Time deadline) {
    std::vector<std::uint64_t> calls;
    for (sim::NodeId n : primaries_) calls.push_back(p.send_request(n, make_command(op, lock_, value, false)));
    std::vector<std::optional<Reply>> out;
    for (std::uint64_t c : calls) {
      auto r = p.await_reply(c, deadline);
      const auto* reply = r ? r->as<Reply>() : nullptr;
      out.push_back(reply ? std::optional<Reply>(*reply) : std::nullopt);
    }
    return out;
  }

  void start_renewal(const Lease& lease) {
    lease_value_ = lease.value;
    const std::uint64_t gen = ++renew_gen_;
    if (!renews()) return;
    const sim::Time granted = clock_now();
    node_.spawn("renewal", [this, gen, lease, granted](sim::Process& p) {
      const int n = static_cast<int>(primaries_.size());
      const int majority = n / 2 + 1;
      const sim::Duration per_primary = lock_.ttl * 5 / 100;
      sim::Time last = granted;
      for (int renewals = 0;; ++renewals) {
        sleep_until_renewal(p, granted, last, renewals);
        if (gen != renew_gen_) return;
        const sim::Time first_sent = node_.sim().now();
        if (redsync_) {
          const sim::Time sent = node_.monotonic();
          std::string why;
          const bool ok = extend_redsync(p, lease.value, why);
          if (gen != renew_gen_) return;
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), ok});
          if (!ok) {
            lose_lease(why);
            return;
          }
          confirmed(sent);
          last = clock_now();
          continue;
        }
        for (;;) {
          const sim::Time sent = node_.monotonic();
          const auto replies = broadcast(p, Op::kRenew, lease.value, sent + per_primary);
          if (gen != renew_gen_) return;
          int ok = 0, refused = 0;
          for (const auto& r : replies) {
            if (r && r->integer && *r->integer == 1) ++ok;
            if (r && r->integer && *r->integer == 0) ++refused;
          }
          if (ok >= majority) {
            history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), true});
            confirmed(sent);
            last = clock_now();
            break;
          }
          // "A renewal extends on all primaries and fails unless a majority
          // accepts" (redsync Extend returns ErrExtendFailed): a primary that
          // does not answer within its per-primary timeout did not accept.
          (void)refused;
          (void)n;
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), false});
          lose_lease("renewal refused");
          return;
        }
      }
    });
  }

  void reset_primaries() {
    primaries_.clear();
    for (const auto& pool : pools_) primaries_.push_back(pool.front());
    epochs_.assign(pools_.size(), 0);
  }

  std::size_t pool_of(sim::NodeId n) const {
    for (std::size_t i = 0; i < pools_.size(); ++i) {
      if (std::find(pools_[i].begin(), pools_[i].end(), n) != pools_[i].end()) return i;
    }
    return pools_.size();
  }

  /// SENTINEL get-master-addr-by-name of pool `i`'s sentinels, the first
  /// that answers; nothing without sentinels.
  void ask_sentinels(sim::Process& p, std::size_t i) {
    if (i >= pool_sentinels_.size()) return;
    for (sim::NodeId s : pool_sentinels_[i]) {
      auto r = p.call(s, sim::make_payload<redis::GetPrimary>(), spec_.command_timeout);
      if (!r) continue;
      if (const auto* pi = r->as<redis::PrimaryIs>()) {
        if (pi->epoch >= epochs_[i]) {
          epochs_[i] = pi->epoch;
          primaries_[i] = pi->primary;
        }
        return;
      }
    }
  }

  std::vector<std::vector<sim::NodeId>> pools_;
  std::vector<std::vector<sim::NodeId>> pool_sentinels_;
  std::vector<sim::NodeId> primaries_;  ///< by pool: the primary this client sends to
  std::vector<std::uint64_t> epochs_;   ///< by pool: the config epoch of primaries_
  std::string lease_value_;
  bool redsync_;               ///< clients[].library "redsync"
  std::string acquire_error_;  ///< redsync: why the last Lock() gave up, or ""
};

// ---------------------------------------------------------- Redis Cluster --
//
// A cluster-aware client (the Redis Cluster specification, "Redirection and
// resharding" and "Redirection ... clients": a client keeps the slot map,
// sends each command to the primary of its key's slot, updates the map on a
// MOVED and asks again; go-redis osscluster.go also reloads the map from a
// reachable node after a failed request and retries, up to MaxRedirects = 3
// redirects per command). Here: the slot map is the owner of each shard
// (the slots of a shard never move), asked of the servers with CLUSTER
// SLOTS at start, after a timeout and after CLUSTERDOWN; a MOVED updates the
// shard's owner and the command goes there at once (at most 3 times, then
// the caller's retry_interval); CROSSSLOT is a permanent error of the design
// (the script's two keys can never be in one slot): the acquire gives up.

class ClusterLockClient final : public LockClientBase {
 public:
  ClusterLockClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                    std::vector<sim::NodeId> servers, int shards, std::size_t index)
      : LockClientBase(node, h, spec, lock), servers_(std::move(servers)), shards_(shards), first_(index) {
    reset_map();
  }

  void init(sim::Process& p) override { refresh(p); }

  Lease acquire(sim::Process& p) override {
    const bool with_token = lock_.redis().token == RedisToken::kIncr;
    acquire_error_.clear();
    for (;;) {
      const std::string value = fresh_value();
      const sim::Time sent = node_.monotonic();
      sim::NodeId target = sim::kNoNode;
      CallResult r = call(p, make_command(Op::kAcquire, lock_, value, with_token), target);
      if (r.status == CallStatus::kReply && r.reply.error.empty() && !r.reply.nil) {
        Lease lease{value, with_token ? r.reply.integer : std::nullopt, ""};
        confirmed(sent);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      if (r.status == CallStatus::kReply && r.reply.error.rfind("CROSSSLOT", 0) == 0) {
        acquire_error_ = r.reply.error;
        return Lease{"", std::nullopt, ""};
      }
      // A timed-out attempt may have succeeded: delete it if it did.
      if (r.status != CallStatus::kReply && target != sim::kNoNode) {
        node_.send(target, make_command(Op::kRelease, lock_, value, false));
      }
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    const std::string value = lease_value_;
    end_belief("release");
    // Retried until answered; once the TTL has passed since the release
    // began, the key has expired anyway and the client stops asking (a
    // minority side answers CLUSTERDOWN for as long as it is cut off).
    const sim::Time give_up = node_.monotonic() + lock_.ttl;
    while (node_.monotonic() < give_up) {
      sim::NodeId target = sim::kNoNode;
      CallResult r = call(p, make_command(Op::kRelease, lock_, value, false), target);
      if (r.status == CallStatus::kReply && r.reply.error.empty()) return;
      if (r.status == CallStatus::kReply) p.sleep(spec_.retry_interval);
    }
  }

  void on_crash() override {
    LockClientBase::on_crash();
    reset_map();
  }
  std::string acquire_error() const override { return acquire_error_; }

 private:
  void reset_map() {
    owners_.clear();
    const std::size_t per = servers_.size() / static_cast<std::size_t>(shards_);
    for (int s = 0; s < shards_; ++s) owners_.push_back(servers_[static_cast<std::size_t>(s) * per]);
  }

  /// CLUSTER SLOTS from the first server that answers, starting at this
  /// client's own (index mod n); the map stays as it was if none answers.
  void refresh(sim::Process& p) {
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      const sim::NodeId n = servers_[(first_ + i) % servers_.size()];
      auto r = p.call(n, sim::make_payload<redis::ClusterSlotsRequest>(), spec_.command_timeout);
      if (!r) continue;
      if (const auto* slots = r->as<redis::ClusterSlotsReply>()) {
        owners_ = slots->owners;
        return;
      }
    }
  }

  CallResult call(sim::Process& p, std::shared_ptr<Command> cmd, sim::NodeId& target) {
    const int shard = redis::shard_of_slot(redis::key_hash_slot(cmd->key), shards_);
    CallResult out;
    for (int redirects = 0;; ++redirects) {
      target = owners_[static_cast<std::size_t>(shard)];
      auto reply = p.call(target, cmd, spec_.command_timeout);
      const auto* r = reply ? reply->as<Reply>() : nullptr;
      if (r == nullptr) {
        out.status = CallStatus::kTimeout;
        refresh(p);
        return out;
      }
      out.status = CallStatus::kReply;
      out.reply = *r;
      if (r->error.rfind("MOVED", 0) == 0 && r->redirect != sim::kNoNode) {
        owners_[static_cast<std::size_t>(shard)] = r->redirect;
        if (redirects < 3) continue;
        return out;
      }
      if (r->error.rfind("CLUSTERDOWN", 0) == 0) refresh(p);
      return out;
    }
  }

  void start_renewal(const Lease& lease) {
    lease_value_ = lease.value;
    const std::uint64_t gen = ++renew_gen_;
    if (!spec_.renew) return;
    const sim::Time granted = clock_now();
    node_.spawn("renewal", [this, gen, lease, granted](sim::Process& p) {
      sim::Time last = granted;
      for (;;) {
        p.sleep_until(spec_.renew_clock, last + spec_.renew_interval);
        if (gen != renew_gen_) return;
        const sim::Time first_sent = node_.sim().now();
        for (;;) {
          const sim::Time sent = node_.monotonic();
          sim::NodeId target = sim::kNoNode;
          CallResult r = call(p, make_command(Op::kRenew, lock_, lease.value, false), target);
          if (gen != renew_gen_) return;
          if (r.status == CallStatus::kReply && r.reply.integer) {
            const bool ok = *r.reply.integer == 1;
            history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), ok});
            if (!ok) {
              lose_lease("renewal refused");
              return;
            }
            confirmed(sent);
            last = clock_now();
            break;
          }
          // CLUSTERDOWN, MOVED past the redirect limit: try again.
          if (r.status == CallStatus::kReply) p.sleep(spec_.retry_interval);
        }
      }
    });
  }

  std::vector<sim::NodeId> servers_;
  int shards_;
  std::size_t first_;
  std::vector<sim::NodeId> owners_;  ///< by shard: the primary this client sends to
  std::string lease_value_;
  std::string acquire_error_;  ///< the last acquire's permanent error (CROSSSLOT), or ""
};

}  // namespace

std::unique_ptr<LockClient> make_redis_cluster_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                      const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                      int shards, std::size_t index) {
  return std::make_unique<ClusterLockClient>(node, h, spec, lock, std::move(servers), shards, index);
}

std::unique_ptr<LockClient> make_redis_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels) {
  if (lock.redis().redlock > 0) {
    std::vector<std::vector<sim::NodeId>> pools;
    for (sim::NodeId n : servers) pools.push_back({n});
    return std::make_unique<RedlockClient>(node, h, spec, lock, std::move(pools),
                                           std::vector<std::vector<sim::NodeId>>{});
  }
  return std::make_unique<RedisLockClient>(node, h, spec, lock, std::move(servers), std::move(sentinels));
}

std::unique_ptr<LockClient> make_redlock_pool_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                     const LockSpec& lock, std::vector<std::vector<sim::NodeId>> pools,
                                                     std::vector<std::vector<sim::NodeId>> pool_sentinels) {
  return std::make_unique<RedlockClient>(node, h, spec, lock, std::move(pools), std::move(pool_sentinels));
}

}  // namespace fencesim::client
