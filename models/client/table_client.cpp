// Lock clients of the lock table (models/table/table.hpp; the sources are
// cited there).
//
// ShedLock (expiry "holder_clock" and "db_clock"), one lock attempt:
//   1. read the wall clock: now, lock_until = now + ttl (lockAtMostFor).
//      With db_clock the database reads its own clock instead, but the
//      client still goes through the same steps.
//   2. the process's first attempt (StorageBasedLockProvider's
//      LockRecordRegistry is empty after a start or restart): INSERT the
//      record; granted if there was none, otherwise the name is remembered
//      and the client goes on to
//   3. UPDATE ... WHERE lock_until <= :now, with the `now` and lock_until of
//      step 1. Steps 1 and 3 are separate steps in time: the INSERT's round
//      trip lies between them on a first attempt, so a pause there (a GC
//      pause, ShedLock#132) makes the UPDATE carry a clock reading from
//      before the pause.
//   A refused or timed-out attempt is retried after retry_interval with a
//   fresh clock reading (each scheduled run of a ShedLock task is a new
//   LockConfiguration). A timed-out UPDATE may have taken the record.
//   Renewal (`renew`, KeepAliveLockProvider's extend): every renew_interval
//   on renew_clock, UPDATE lock_until = now + ttl WHERE locked_by = me AND
//   lock_until > now; a refusal is a lease loss, a timeout is asked again.
//   Release: UPDATE lock_until = now (asked again until answered).
//
// client-go leader election (expiry "observed"), k8s.io/client-go
// tools/leaderelection/leaderelection.go @ v0.36.3 with the loops of
// k8s.io/apimachinery pkg/util/wait @ v0.36.3 (backoff.go, loop.go, poll.go,
// timer.go, wait.go):
//  * acquire (lines 252-276): wait.JitterUntilWithContext(tryAcquireOrRenew,
//    RetryPeriod, JitterFactor = 1.2, sliding = true) until it succeeds:
//    the first try at once, and after each failed one a wait of
//    Jitter(RetryPeriod, 1.2) = RetryPeriod + rand.Float64() × 1.2 ×
//    RetryPeriod, timed from when the try returned. Here the fraction is
//    drawn from the client's PRNG stream "client/<name>/leaderelection" as
//    a whole number of nanoseconds in [0, ⌊1.2 × RetryPeriod⌋).
//  * renew (lines 279-312): wait.UntilWithContext(round, RetryPeriod), no
//    jitter, sliding: a round at once, the next RetryPeriod after the last
//    one ended. A round is wait.PollUntilContextTimeout(RetryPeriod,
//    RenewDeadline, immediate = true, tryAcquireOrRenew): its deadline is
//    RenewDeadline from the round's start, its ticker starts with the round
//    (sliding = false, a fixed ticker), the first try runs at once and each
//    retry on the ticker's next tick (a tick that fell due during a long
//    try is taken at once, as Go's one-slot ticker channel does). A round
//    that has not succeeded by its deadline fails, and the leader stops
//    (OnStoppedLeading): the belief ends through lease_loss_after
//    (RenewDeadline), counted on the client's monotonic clock from the
//    start of the round, and nothing counts between rounds. With
//    `renew: false` (no renew loop, which client-go does not have) it is
//    counted from the acquiring update's send. tryAcquireOrRenew, as in
//    leaderelection.go:
//   now = monotonic reading;
//   fast path: if the last record seen names this client and
//     observedTime + leaseDuration > now, compare-and-set on that version;
//     success: done;
//   otherwise GET; no record: create it (compare-and-set on version 0);
//   a version other than the one seen last: remember it, observedTime =
//     the monotonic clock now;
//   a holder other than this client with observedTime + leaseDuration > now:
//     fail;
//   compare-and-set on the version read (holder this client, leaseDuration
//     the ttl): success or a conflict.
// Release (after an iteration of a workload that does not keep the lock, or
// the leader's last): one compare-and-set clearing the holder, as release()
// does with ReleaseOnCancel; its failure leaves the record to run out.
//
// client-go before kubernetes#65094, clients[].library_version "8.0"
// (k8s.io/client-go v8.0.0 = kubernetes-1.11.0, 7d04d0e2,
// tools/leaderelection/leaderelection.go lines 182-279, with
// k8s.io/apimachinery kubernetes-1.11.0 pkg/util/wait/wait.go: Until,
// JitterUntil, Poll, WaitFor lines 327-349, poller lines 353-393). The
// default, "0.36", is the version above. What differs (kubernetes#44887,
// #65090; fixed by PR #65094 in v9.0.0 = kubernetes-1.12.0, 1638f897):
//  * renew: wait.Until(round, 0, stop): the next round starts as soon as
//    one succeeded. A round is wait.Poll(RetryPeriod, RenewDeadline,
//    tryAcquireOrRenew): not immediate, the first try on the ticker's first
//    tick, RetryPeriod after the round began; a tick that falls while a
//    try runs is dropped (poller's non-blocking send), so the next try is
//    on the first tick after it returned.
//  * RenewDeadline is only a timer that closes the poller's channel; WaitFor
//    reads the closed channel and calls tryAcquireOrRenew once more before
//    giving up. Nothing cancels a try in flight: a renewal whose request
//    hangs keeps the leader leading until the request returns (here: until
//    command_timeout; the components set no client timeout before #65094),
//    and a late success, or the last try's, counts. The round fails only
//    when the try after the deadline fails; then the leader stops
//    (OnStoppedLeading) with that reason. lease_loss_after is RenewDeadline
//    and ends no belief by itself (with `renew: false`, as above, it does).
//  * tryAcquireOrRenew has no fast path (the optimistic update on the
//    version seen last came in v0.30.0): every try GETs the record first.
//  * No ReleaseOnCancel (added in v11.0.0): a leader that stops leaves the
//    record to run out.
// A tick that falls due exactly at the deadline is taken first (the ticker
// is made before the timer), and the try after the deadline follows it.
#include <fmt/format.h>

#include <algorithm>

#include "models/client/client.hpp"
#include "models/table/table.hpp"
#include "sim/time.hpp"

namespace fencesim::client {

using table::Op;
using table::Result;
using table::Statement;

namespace {

class TableClientBase : public LockClientBase {
 public:
  TableClientBase(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock, sim::NodeId db)
      : LockClientBase(node, h, spec, lock), db_(db) {}

 protected:
  std::optional<Result> exec(sim::Process& p, std::shared_ptr<Statement> st) {
    st->holder = spec_.name;
    auto r = p.call(db_, st, spec_.command_timeout);
    const auto* res = r ? r->as<Result>() : nullptr;
    if (res == nullptr) return std::nullopt;
    return *res;
  }
  std::optional<std::int64_t> token_of(const Result& r) const {
    return lock_.table().token == TableToken::kVersion ? std::optional<std::int64_t>(r.version) : std::nullopt;
  }

  sim::NodeId db_;
  Lease lease_;
};

// ---------------------------------------------------------------- ShedLock --

class ShedLockClient final : public TableClientBase {
 public:
  using TableClientBase::TableClientBase;

  Lease acquire(sim::Process& p) override {
    for (;;) {
      const std::string value = fresh_value();
      // Step 1: the clock reading the statements carry (holder_clock).
      const Time now = node_.wall();
      const Time sent = node_.monotonic();
      bool granted = false;
      std::optional<std::int64_t> token;
      if (!record_known_) {
        if (const auto r = exec(p, statement(Op::kInsert, value, now))) {
          // Created, or a duplicate key: either way the record exists now.
          record_known_ = true;
          granted = r->ok;
          token = token_of(*r);
        }
      }
      // Step 3, with the reading of step 1.
      if (!granted && record_known_) {
        if (const auto r = exec(p, statement(Op::kAcquire, value, now)); r && r->ok) {
          granted = true;
          token = token_of(*r);
        }
      }
      if (granted) {
        Lease lease{value, token, ""};
        confirmed(sent);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    const Lease lease = lease_;
    end_belief("release");
    for (;;) {
      if (exec(p, statement(Op::kUnlock, lease.value, node_.wall()))) return;
    }
  }

  void on_crash() override {
    LockClientBase::on_crash();
    record_known_ = false;  // LockRecordRegistry is in memory
  }

 private:
  std::shared_ptr<Statement> statement(Op op, const std::string& value, Time now) const {
    auto st = sim::make_payload<Statement>();
    st->op = op;
    st->value = value;
    st->now = now;
    st->lock_until = now + lock_.ttl;
    return st;
  }

  void start_renewal(const Lease& lease) {
    lease_ = lease;
    const std::uint64_t gen = ++renew_gen_;
    if (!spec_.renew) return;
    const Time granted = clock_now();
    node_.spawn("extend", [this, gen, lease, granted](sim::Process& p) {
      Time last = granted;
      for (;;) {
        p.sleep_until(spec_.renew_clock, last + spec_.renew_interval);
        if (gen != renew_gen_) return;
        const Time first_sent = node_.sim().now();
        for (;;) {
          const Time sent = node_.monotonic();
          auto r = exec(p, statement(Op::kExtend, lease.value, node_.wall()));
          if (gen != renew_gen_) return;
          if (!r) continue;  // timed out: ask again
          history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), r->ok});
          if (!r->ok) {
            lose_lease("extend refused");
            return;
          }
          confirmed(sent);
          last = clock_now();
          break;
        }
      }
    });
  }

  bool record_known_ = false;
};

// ------------------------------------------------- client-go leader election --

class LeaderElectionClient final : public TableClientBase {
 public:
  LeaderElectionClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock, sim::NodeId db)
      : TableClientBase(node, h, spec, lock, db),
        jitter_rng_(node.sim().rng("client/" + spec.name + "/leaderelection")),
        before_65094_(spec.library_version == "8.0") {
    if (const auto rd = policy_.lease_loss_after()) {
      round_failed_ =
          fmt::format("no renewal succeeded within {} of the round's start (lease_loss_after: RenewDeadline)",
                      sim::format_duration(*rd));
    }
  }

  Lease acquire(sim::Process& p) override {
    const std::string value = fresh_value();
    for (;;) {
      Time sent{0};
      if (try_acquire_or_renew(p, value, sent)) {
        Lease lease{value, token_of(last_), ""};
        // The renew loop's rounds count RenewDeadline; without one, from here.
        confirmed(sent, /*arm_lease_loss=*/!spec_.renew);
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      // wait.Jitter(RetryPeriod, JitterFactor 1.2), after the try returned.
      const Duration::rep period = spec_.renew_interval.count();
      const auto max_extra = static_cast<std::uint64_t>(period / 5 * 6 + period % 5 * 6 / 5);  // ⌊1.2 × period⌋ ns
      p.sleep(Duration{period + static_cast<Duration::rep>(jitter_rng_.below(max_extra))});
    }
  }

  void release(sim::Process& p) override {
    ++renew_gen_;
    disarm_lease_loss();  // the renew loop's round ends with it
    const Lease lease = lease_;
    end_belief("release");
    // release(): only while the last record seen names this client; 8.0 has none.
    if (before_65094_ || !observed_ || observed_->holder != spec_.name) return;
    auto st = cas(observed_->version, "", lease.value);
    st->lease_duration = std::chrono::seconds(1);  // LeaseDurationSeconds: 1
    if (auto r = exec_raw(p, st); r && r->ok) observe(*r);
  }

  void on_crash() override {
    LockClientBase::on_crash();
    observed_.reset();
  }

 private:
  struct Observed {
    std::string holder;
    std::int64_t version = 0;
    Duration lease_duration{0};
    Time at{0};  ///< observedTime: the monotonic clock when this record was first seen
  };

  std::shared_ptr<Statement> cas(std::int64_t expected, const std::string& holder, const std::string& value) const {
    auto st = sim::make_payload<Statement>();
    st->op = Op::kCas;
    st->expected_version = expected;
    st->value = value;
    st->lease_duration = lock_.ttl;
    st->holder = holder;
    return st;
  }
  /// exec() with the statement's holder as given (a release clears it).
  std::optional<Result> exec_raw(sim::Process& p, std::shared_ptr<Statement> st) {
    auto r = p.call(db_, st, spec_.command_timeout);
    const auto* res = r ? r->as<Result>() : nullptr;
    if (res == nullptr) return std::nullopt;
    return *res;
  }

  void observe(const Result& r) {
    last_ = r;
    observed_ = Observed{r.holder, r.version, r.lease_duration, node_.monotonic()};
  }
  bool is_leader() const { return observed_ && observed_->holder == spec_.name; }
  bool lease_valid(Time now) const { return observed_ && observed_->at + observed_->lease_duration > now; }

  /// One tryAcquireOrRenew; `sent` is the send of the update that succeeded.
  /// `gen`: the renew round's generation — when it moves on (RenewDeadline
  /// cancelled the round's context, 0.36), the try stops after the request
  /// in flight and sends nothing more, as client-go's cancelled context
  /// fails its next request; nullopt (acquire, or 8.0): never cancelled.
  bool try_acquire_or_renew(sim::Process& p, const std::string& value, Time& sent,
                            std::optional<std::uint64_t> gen = std::nullopt) {
    const auto cancelled = [&] { return gen && *gen != renew_gen_; };
    const Time now = node_.monotonic();
    // 1. Fast path: update optimistically on the version seen last.
    if (!before_65094_ && is_leader() && lease_valid(now)) {
      sent = node_.monotonic();
      if (auto r = exec(p, cas(observed_->version, spec_.name, value)); r && r->ok) {
        observe(*r);
        return true;
      }
      if (cancelled()) return false;
    }
    // 2. Read the record (or create it).
    auto got = exec(p, [] {
      auto st = sim::make_payload<Statement>();
      st->op = Op::kGet;
      return st;
    }());
    if (!got || cancelled()) return false;
    if (!got->found) {
      sent = node_.monotonic();
      auto r = exec(p, cas(0, spec_.name, value));
      if (!r || !r->ok) return false;
      observe(*r);
      return true;
    }
    // 3. A record other than the one seen last: observedTime = now.
    if (!observed_ || observed_->version != got->version) observe(*got);
    if (!observed_->holder.empty() && lease_valid(now) && !is_leader()) return false;
    // 4. Update on the version read.
    sent = node_.monotonic();
    auto r = exec(p, cas(got->version, spec_.name, value));
    if (!r || !r->ok) return false;
    observe(*r);
    return true;
  }

  void start_renewal(const Lease& lease) {
    lease_ = lease;
    const std::uint64_t gen = ++renew_gen_;
    if (!spec_.renew) return;
    if (before_65094_) {
      node_.spawn("renew", [this, gen, lease](sim::Process& p) { renew_before_65094(p, gen, lease); });
      return;
    }
    node_.spawn("renew", [this, gen, lease](sim::Process& p) {
      for (;;) {
        // One round: PollUntilContextTimeout(RetryPeriod, RenewDeadline,
        // immediate, tryAcquireOrRenew). Its deadline (lease_loss_after)
        // ends it from outside: the belief ends and renew_gen_ moves on.
        const Time first_sent = node_.sim().now();
        const Time round_start = node_.monotonic();
        if (const auto rd = policy_.lease_loss_after()) arm_lease_loss_at(round_start + *rd, round_failed_);
        for (;;) {
          Time sent{0};
          const Time try_start = node_.monotonic();
          const bool ok = try_acquire_or_renew(p, lease.value, sent, gen);
          if (gen != renew_gen_) return;
          if (ok) {
            history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), true});
            disarm_lease_loss();
            confirmed(sent, /*arm_lease_loss=*/false);
            break;
          }
          // The round's ticker: the first tick after this try began; one
          // that fell due while it ran is taken at once.
          const Duration period = spec_.renew_interval;
          const Time next_tick = round_start + period * ((try_start - round_start) / period + 1);
          if (next_tick > node_.monotonic()) p.sleep_until(sim::ClockKind::kMonotonic, next_tick);
          if (gen != renew_gen_) return;
        }
        p.sleep_until(spec_.renew_clock, clock_now() + spec_.renew_interval);
        if (gen != renew_gen_) return;
      }
    });
  }

  /// client-go 8.0's renew loop: wait.Until(wait.Poll(RetryPeriod,
  /// RenewDeadline, tryAcquireOrRenew), 0) (see the file comment).
  void renew_before_65094(sim::Process& p, std::uint64_t gen, const Lease& lease) {
    const Duration period = spec_.renew_interval;
    const Duration deadline_after = policy_.lease_loss_after().value_or(Duration{0});
    for (;;) {
      std::optional<Time> first_sent;  ///< the round's first try (the renewal latency counts from it)
      const Time round_start = node_.monotonic();
      const Time deadline = round_start + deadline_after;
      for (;;) {
        // WaitFor's receive: the poller's next tick (open), or its channel
        // closed at the deadline (then this is the last try).
        const Time now = node_.monotonic();
        bool open = false;
        if (now < deadline) {
          // Ticks come at round_start + k × RetryPeriod, k ≥ 1; those that
          // fell while a try ran were dropped. One at the deadline goes first.
          const std::int64_t k = std::max<std::int64_t>(1, (now - round_start + period - Duration{1}) / period);
          const Time tick = round_start + period * k;
          open = tick <= deadline;
          p.sleep_until(sim::ClockKind::kMonotonic, open ? tick : deadline);
          if (gen != renew_gen_) return;
        }
        Time sent{0};
        if (!first_sent) first_sent = node_.sim().now();
        const bool ok = try_acquire_or_renew(p, lease.value, sent);
        if (gen != renew_gen_) return;
        if (ok) {
          history_.renewals.push_back(RenewalRecord{spec_.name, *first_sent, node_.sim().now(), true});
          confirmed(sent, /*arm_lease_loss=*/false);
          break;  // wait.Until with period 0: the next round at once
        }
        if (!open) {
          // The try after the deadline failed: OnStoppedLeading.
          lose_lease(
              fmt::format("the renew round's last try, after RenewDeadline ({}), failed "
                          "(client-go 8.0: a try in flight is not cancelled)",
                          sim::format_duration(deadline_after)));
          return;
        }
      }
    }
  }

  std::optional<Observed> observed_;
  Result last_;
  sim::Rng jitter_rng_;       ///< wait.Jitter's rand.Float64 (acquire's retries)
  std::string round_failed_;  ///< the lease loss's reason when a round misses RenewDeadline
  bool before_65094_;         ///< library_version "8.0": RenewDeadline cancels nothing
};

}  // namespace

std::unique_ptr<LockClient> make_table_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              sim::NodeId db) {
  if (lock.table().expiry == TableExpiry::kObserved)
    return std::make_unique<LeaderElectionClient>(node, h, spec, lock, db);
  return std::make_unique<ShedLockClient>(node, h, spec, lock, db);
}

}  // namespace fencesim::client
