// models/client/bsm_redislock_client.cpp — bsm/redislock as deployed
// (clients[].library "bsm-redislock") on one Redis primary, with or without
// replicas and Sentinel.
//
// Behaviour modelled, with sources (github.com/bsm/redislock at main,
// 76760bd, after v0.10.0: redislock.go, retry.go, obtain.lua, refresh.lua,
// release.lua, README.md "External watchdog"; the fencing token from PR #94,
// merged after it):
//  * Obtain (ObtainMulti, withRetry): one random token per call; obtain.lua
//    sets the key if absent (msetnx) and PEXPIREs it. Held by another: the
//    retry strategy's next backoff — NoRetry (the default: 0, so Obtain
//    returns ErrNotObtained after one attempt), LinearBackoff
//    (clients[].retry_strategy "linear": retry_interval) or
//    ExponentialBackoff(0, retry_interval) ("exponential": 4 ms, 8 ms,
//    16 ms … capped at retry_interval; a min above 0 is not modelled), each
//    optionally inside LimitRetry(strategy, tries − 1) (clients[].tries:
//    after that many attempts NextBackoff is 0). A strategy is made per
//    Obtain here (its counters start at zero). The context has
//    no deadline, so withRetry gives Obtain one of now + ttl: a wait that
//    would pass it ends Obtain with ErrNotObtained joined with "context
//    deadline exceeded". Any error of the script itself (a timeout: the
//    connection's read timeout, command_timeout here; READONLY;
//    NOREPLICAS) is terminal: "any non-nil error from obtain is terminal".
//    A timed-out SET may have succeeded: redislock deletes nothing, the key
//    stays until its TTL.
//  * FenceKey (PR #94: lock.token "incr", the counter at lock.counter_key):
//    the counter is INCRed inside obtain.lua on the msetnx path only — a
//    genuinely new acquisition — and returned as Lock.FenceToken. (Its
//    re-entrant override, for a caller-supplied Options.Token, is not
//    modelled: every Obtain here draws a random token.)
//  * Refresh: redislock has no watchdog; `renew` is the README's external
//    watchdog, a ticker every renew_interval calling Refresh(ctx, ttl, nil)
//    (NoRetry): refresh.lua PEXPIREs the key when its value still matches,
//    else ErrNotObtained; any error, or ErrNotObtained, makes the watchdog
//    cancel the work — the belief ends (whether the work stops too is
//    clients[].on_lease_loss).
//  * Release: release.lua once, its answer awaited up to command_timeout
//    (ErrLockNotHeld when the value no longer matches); never retried
//    (`defer lock.Release(...)` drops the error).
//  * The Redis connection: go-redis's FailoverClient follows Sentinel as
//    the generic client does (redis_primary_client.hpp), but a timeout is
//    returned at once and the primary is looked up before the next command
//    (when it dials again); a command abandoned by +switch-master is an
//    error to redislock.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "models/client/client.hpp"
#include "models/client/redis_primary_client.hpp"

namespace fencesim::client {

using redis::Op;

namespace {

class BsmRedislockClient final : public RedisPrimaryClient {
 public:
  using RedisPrimaryClient::RedisPrimaryClient;

  std::string acquire_error() const override { return acquire_error_; }
  bool acquire_error_permanent() const override { return false; }  // Obtain returned; the next one tries again

  Lease acquire(sim::Process& p) override {
    const bool fence = lock_.redis().token == RedisToken::kIncr;
    acquire_error_.clear();
    const std::string value = fresh_value();                   // randomToken, once per Obtain
    const sim::Time deadline = node_.monotonic() + lock_.ttl;  // withRetry: no ctx deadline → ttl
    Backoff backoff{spec_.retry_strategy.value_or(RetryStrategy::kNone), spec_.retry_interval, spec_.tries};
    for (;;) {
      const sim::Time sent = node_.monotonic();
      CallResult r = call(p, make_command(Op::kAcquire, lock_, value, fence), false);
      if (r.status == CallStatus::kReply && r.reply.error.empty() && !r.reply.nil) {
        Lease lease{value, fence ? r.reply.integer : std::nullopt, ""};
        confirmed(sent);
        begin_belief(lease);
        start_watchdog(lease);
        return lease;
      }
      if (r.status != CallStatus::kReply || !r.reply.error.empty()) {
        acquire_error_ = "redislock: Obtain: " + error_text(r);  // terminal
        return Lease{};
      }
      // Held by another: retryable, if the strategy's next backoff is one.
      const sim::Duration wait = backoff.next();
      if (wait <= sim::Duration{0}) {
        acquire_error_ = backoff.exhausted_reason();
        return Lease{};
      }
      if (node_.monotonic() + wait >= deadline) {
        p.sleep(deadline - node_.monotonic());
        acquire_error_ = "redislock: not obtained; context deadline exceeded (Obtain's deadline of one TTL)";
        return Lease{};
      }
      p.sleep(wait);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    const std::string value = lease_value_;
    end_belief("release");
    (void)call(p, make_command(Op::kRelease, lock_, value, false), false);
  }

 private:
  /// Options.RetryStrategy (retry.go), made afresh for each Obtain, as the
  /// README's examples do: its counters start at zero.
  struct Backoff {
    RetryStrategy strategy;
    sim::Duration interval;    ///< LinearBackoff's wait; ExponentialBackoff's max
    std::optional<int> tries;  ///< LimitRetry(strategy, tries − 1)
    std::int64_t limited = 0;  ///< limitedRetry.cnt
    std::uint64_t count = 0;   ///< exponentialBackoff.cnt

    /// NextBackoff: 0 ends Obtain.
    sim::Duration next() {
      if (tries && ++limited > *tries - 1) return sim::Duration{0};
      switch (strategy) {
        case RetryStrategy::kNone: return sim::Duration{0};
        case RetryStrategy::kLinear: return interval;
        case RetryStrategy::kExponential: {
          // 2 << cnt milliseconds (4, 8, 16 ms …, 2^26 ms from cnt 25),
          // clamped to [min 0, max interval].
          ++count;
          const std::int64_t ms = count < 25 ? std::int64_t{2} << count : std::int64_t{2} << 25;
          return std::min<sim::Duration>(std::chrono::milliseconds(ms), interval);
        }
      }
      return sim::Duration{0};
    }
    std::string exhausted_reason() const {
      if (strategy == RetryStrategy::kNone) return "redislock: not obtained (NoRetry: one attempt)";
      return fmt::format("redislock: not obtained (LimitRetry: {} attempt{})", *tries, *tries == 1 ? "" : "s");
    }
  };

  static std::string error_text(const CallResult& r) {
    if (r.status == CallStatus::kTimeout) return "i/o timeout";
    if (r.status == CallStatus::kSwitched) return "connection closed (+switch-master)";
    return r.reply.error;
  }

  void start_watchdog(const Lease& lease) {
    lease_value_ = lease.value;
    const std::uint64_t gen = ++renew_gen_;
    if (!renews()) return;
    const sim::Time granted = clock_now();
    node_.spawn("watchdog", [this, gen, lease, granted](sim::Process& p) {
      sim::Time last = granted;
      for (int refreshes = 0;; ++refreshes) {
        sleep_until_renewal(p, granted, last, refreshes);
        if (gen != renew_gen_) return;
        const sim::Time first_sent = node_.sim().now();
        const sim::Time sent = node_.monotonic();
        CallResult r = call(p, make_command(Op::kRenew, lock_, lease.value, false), false);
        if (gen != renew_gen_) return;
        const bool ok = r.status == CallStatus::kReply && r.reply.integer && *r.reply.integer == 1;
        history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), ok});
        if (!ok) {
          const bool taken = r.status == CallStatus::kReply && r.reply.error.empty();
          lose_lease("Refresh: " + (taken ? std::string("redislock: not obtained") : error_text(r)) +
                     " (the watchdog cancels the work)");
          return;
        }
        confirmed(sent);
        last = clock_now();
      }
    });
  }

  std::string lease_value_;
  std::string acquire_error_;  ///< why the last Obtain failed, or ""
};

}  // namespace

std::unique_ptr<LockClient> make_bsm_redislock_client(sim::Node& node, History& h, const ClientSpec& spec,
                                                      const LockSpec& lock, std::vector<sim::NodeId> servers,
                                                      std::vector<sim::NodeId> sentinels) {
  return std::make_unique<BsmRedislockClient>(node, h, spec, lock, std::move(servers), std::move(sentinels));
}

}  // namespace fencesim::client
