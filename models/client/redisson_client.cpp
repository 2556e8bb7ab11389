// models/client/redisson_client.cpp — Redisson's RLock and RFencedLock on
// one Redis primary with Sentinel (clients[].library "redisson" and
// "redisson-fenced"; docs/FORMAT.md "Redisson").
//
// Read from redisson/redisson at tag redisson-3.52.0 (3d8945a7), checked
// against redisson-3.40.2 (c5637b13) where a behaviour differs:
//  * Acquire — RedissonLock.tryLockInnerAsync (3.40.2 L218-228): if the key
//    does not exist or the caller's field "<uuid>:<threadId>" exists, HINCRBY
//    it and PEXPIRE the lease, return nil; else return the key's PTTL.
//    RedissonFencedLock.tryLockInnerAsync (L107-119) also INCRs the token
//    key in the same branch — on a re-entry too — and returns it; the
//    token key is never deleted (redisson#4684, #5044, #6510). The server's
//    side is redis::Op::kRedissonAcquire (models/redis/protocol.hpp).
//  * Waiting — RedissonLock.lock (L106-153): after a refusal the thread
//    subscribes to redisson_lock__channel:{name} and waits on the latch for
//    the unlock message or the holder's PTTL, whichever comes first, then
//    tries again.
//  * Synced acquire — CommandAsyncService.syncedEval (3.40.2 L1004-1074;
//    Config.checkLockSyncedSlaves true, slavesSyncTimeout 1000 ms): the
//    script and WAIT <connected replicas> <slavesSyncTimeout> go as one
//    batch; when no replica acknowledged (and some are connected) the call
//    fails with "None of slaves were synced" (redisson#2669, #4305).
//    Since 3.47.0 (f2b6ad84, NoSyncedSlavesException) handleNoSync unlocks
//    what the script took and ServiceManager.execute retries; the model
//    does that, then the application's lock() tries again after
//    retry_interval. From 3.25.0 (279cb9b3 lengthened the message that
//    handleNoSync and the retry compared with equals) to 3.46.x neither
//    runs: lock() throws and the lock stays on the primary, without a
//    watchdog, until its lease runs out; the application's next lock()
//    re-enters it (a count of 2) and its unlock then only counts down.
//    The watchdog's renewal is a syncedEval too: no replica acknowledging
//    is an error of the renewal.
//  * Watchdog — RedissonBaseLock / LockRenewalScheduler (3.52.0
//    renewal/LockTask.java): a lock() without a lease time is held for
//    lockWatchdogTimeout (lock.ttl; Config's default 30 s) and renewed every
//    lockWatchdogTimeout / 3 by renewExpirationAsync (PEXPIRE if the
//    caller's field exists). A renewal answered 0 cancels the watchdog; an
//    error is logged and the next renewal is scheduled anyway (3.44.0,
//    597d604a; before it, RedissonBaseLock.renewExpiration removed the
//    entry and the watchdog stopped for good). The application is never
//    told: its belief lasts until its unlock.
//  * clients[].library_version chooses the release line: "3.52" (the
//    default; 3.47.0 and later), "3.45" (3.44.0-3.46.x: the watchdog goes
//    on after an error, a failed synced acquire is not undone), "3.40"
//    (3.25.0-3.43.x: neither).
//  * Unlock — RedissonLock.unlockInnerAsync (L344-368): DEL when the
//    caller's field was the last, PUBLISH 0 to the channel; nil when the
//    caller holds nothing (IllegalMonitorStateException). ServiceManager
//    retries a command retryAttempts (3) times.
//
// WAITAOF: syncedEval first probes `WAIT 0 0` and `WAITAOF 0 0 0` and drops
// a command answered "ERR unknown command" (3.52.0 lines 1076-1120); the
// modelled Redis 7.0 has no WAITAOF (Redis 7.2), so only WAIT is sent.
// Deviations: the WAIT goes after the script's answer (Redisson pipelines
// both: one round trip more here); the unlock script is not followed by
// WAIT as syncedEval's is; WAIT asks for lock.replicas replicas, where
// Redisson asks for the replicas INFO last showed connected (equal while
// they are; a WAIT that gets fewer but not zero succeeds either way); the
// unlock latch key (which makes a retried unlock idempotent) is not
// modelled.
#include <algorithm>

#include "models/client/redis_primary_client.hpp"
#include "models/redis/commands/wire.hpp"

namespace fencesim::client {

using redis::Command;
using redis::Op;
using namespace std::chrono_literals;

namespace {

/// Config.retryAttempts: a command is sent at most 1 + 3 times.
constexpr int kRetryAttempts = 3;

/// What changed between Redisson's release lines (clients[].library_version).
struct RedissonProfile {
  bool watchdog_stops_on_error;  ///< before 3.44.0
  bool undoes_unsynced_acquire;  ///< 3.47.0 and later
};
RedissonProfile profile_of(const std::string& version) {
  if (version == "3.40") return {true, false};
  if (version == "3.45") return {false, false};
  return {false, true};  // "3.52"
}

class RedissonClient final : public RedisPrimaryClient {
 public:
  RedissonClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                 std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels, bool fenced,
                 const std::string& version)
      : RedisPrimaryClient(node, h, spec, lock, std::move(servers), std::move(sentinels)),
        fenced_(fenced),
        profile_(profile_of(version)) {}

  void init(sim::Process& p) override {
    RedisPrimaryClient::init(p);
    // A Redisson instance's id is a random UUID; a restarted client is a new
    // instance. One workload runs on one thread.
    owner_ = fresh_value() + ":1";
  }

  Lease acquire(sim::Process& p) override {
    for (;;) {
      const sim::Time sent = node_.monotonic();
      released_ = false;
      CallResult r = call(p, script(Op::kRedissonAcquire, owner_ + "|" + fresh_value()));
      if (r.status == CallStatus::kReply && r.reply.error.empty() && !r.reply.nil) {
        if (!synced(p)) {
          // "None of slaves were synced": lock() throws to the application,
          // which tries again. 3.47.0 and later first unlock what the
          // script took (handleNoSync); before, it stays held.
          if (profile_.undoes_unsynced_acquire) node_.send(primary(), script(Op::kRedissonRelease, ""));
          p.sleep(spec_.retry_interval);
          continue;
        }
        Lease lease{r.reply.text, fenced_ ? r.reply.integer : std::nullopt, ""};
        confirmed(sent);
        begin_belief(lease);
        start_watchdog();
        return lease;
      }
      if (r.status == CallStatus::kReply && r.reply.nil) {
        wait_for_release(p, r.reply.integer.value_or(0));
        continue;
      }
      if (r.status == CallStatus::kSwitched) continue;
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;  // cancelExpirationRenewal
    end_belief("release");
    for (int attempt = 0; attempt <= kRetryAttempts; ++attempt) {
      CallResult r = call(p, script(Op::kRedissonRelease, ""));
      // 1: released; nil: IllegalMonitorStateException, the caller held nothing.
      if (r.status == CallStatus::kReply && r.reply.error.empty()) return;
      if (r.status == CallStatus::kReply) p.sleep(spec_.retry_interval);
    }
    // The unlock threw after its retries; the application goes on.
  }

  void on_message(const sim::Message& m) override {
    if (m.as<redis::LockReleased>() != nullptr) {
      released_ = true;
      if (waiting_) node_.sim().notify(waiter_);
      return;
    }
    RedisPrimaryClient::on_message(m);
  }

  void on_crash() override {
    RedisPrimaryClient::on_crash();
    waiting_ = false;
  }

 private:
  std::shared_ptr<Command> script(Op op, const std::string& value) const {
    auto c = make_command(op, lock_, value, fenced_ && op == Op::kRedissonAcquire);
    c->owner = owner_;
    return c;
  }

  /// The latch: the unlock message, or the holder's PTTL (ms) has passed.
  void wait_for_release(sim::Process& p, std::int64_t pttl_ms) {
    if (released_) return;  // published while the refusal travelled
    waiter_ = p.prepare_wait();
    waiting_ = true;
    p.block(sim::ClockKind::kMonotonic,
            node_.monotonic() + std::chrono::milliseconds(std::max<std::int64_t>(0, pttl_ms)));
    waiting_ = false;
  }

  /// checkLockSyncedSlaves: WAIT <replicas> <slavesSyncTimeout> after the
  /// script; false when replicas exist and none acknowledged.
  bool synced(sim::Process& p) {
    const int replicas = lock_.redis().replicas;
    if (replicas == 0) return true;  // INFO shows no replica: syncedEval sends the script alone
    auto wait = sim::make_payload<redis::RawCommand>();
    wait->argv = {"WAIT", std::to_string(replicas), std::to_string(kSlavesSyncTimeout.count() / 1'000'000)};
    auto r = p.call(primary(), wait, spec_.command_timeout + kSlavesSyncTimeout);
    if (!r) return false;
    const auto* rr = r->as<redis::RawReply>();
    return rr != nullptr && rr->value.kind == redis::commands::RespValue::Kind::kInteger && rr->value.integer > 0;
  }

  void start_watchdog() {
    const std::uint64_t gen = ++renew_gen_;
    if (!renews()) return;  // lock(leaseTime): no watchdog
    node_.spawn("watchdog", [this, gen](sim::Process& p) { watchdog(p, gen); });
  }

  void watchdog(sim::Process& p, std::uint64_t gen) {
    for (;;) {
      // internalLockLeaseTime / 3 on the JVM's timer: renew_interval, which
      // validation holds at its default, a third of the TTL.
      p.sleep(spec_.renew_interval);
      if (gen != renew_gen_) return;
      const sim::Time first_sent = node_.sim().now();
      const sim::Time sent = node_.monotonic();
      CallResult r = call(p, script(Op::kRedissonRenew, ""));
      if (gen != renew_gen_) return;
      if (r.status == CallStatus::kReply && r.reply.error.empty() && r.reply.integer) {
        const bool renewed = *r.reply.integer == 1;
        if (!renewed) {
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), false});
          return;  // cancelExpirationRenewal; the application is not told
        }
        if (synced(p)) {
          if (gen != renew_gen_) return;
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), true});
          confirmed(sent);
          continue;
        }
      }
      if (gen != renew_gen_) return;
      // An error, no answer or no replica synced: logged ("Can't update
      // lock … expiration"); the next renewal is scheduled all the same
      // since 3.44.0, and before it the watchdog stops.
      const std::string why = r.status != CallStatus::kReply ? "no answer"
                              : !r.reply.error.empty()       ? "-" + r.reply.error
                                                             : "None of slaves were synced";
      history_.note(node_.sim().now(), spec_.name, "renewal-error",
                    "watchdog: Can't update lock expiration (" + why + ")" +
                        (profile_.watchdog_stops_on_error ? "; the watchdog stops (before 3.44.0)" : ""));
      if (profile_.watchdog_stops_on_error) return;
    }
  }

  static constexpr sim::Duration kSlavesSyncTimeout = 1s;  ///< Config.slavesSyncTimeout

  bool fenced_;
  RedissonProfile profile_;
  std::string owner_;
  bool released_ = false;
  bool waiting_ = false;
  sim::WaitHandle waiter_{};
};

}  // namespace

std::unique_ptr<LockClient> make_redisson_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                 const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                 std::vector<sim::NodeId> sentinels, bool fenced,
                                                 const std::string& version) {
  return std::make_unique<RedissonClient>(node, h, spec, lock, std::move(servers), std::move(sentinels), fenced,
                                          version);
}

}  // namespace fencesim::client
