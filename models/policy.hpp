// models/policy.hpp — the two seams a user plugs their own lock logic into
// (the public overview, with examples: include/fencesim/policy.hpp and
// docs/API.md):
//
//   ResourceCheck  what the protected storage does with a read or a write:
//                  accept or reject it (with the reason the report shows)
//                  and the copy's new marks, in one atomic step.
//   ClientPolicy   the decisions a lock client library makes: when the next
//                  renewal is due, what to do before a write (go ahead,
//                  abandon, re-check), what to do when a renewal attempt
//                  fails, and whether an iteration stops once the lease is
//                  known lost.
//
// The built-in designs are implementations of both (models/resource/check.cpp:
// unfenced, fenced strict/monotonic with or without fence_reads, cas;
// models/client/policy.cpp: the knobs renew_interval, renew_clock,
// check_lease_before_write, on_lease_loss, lease_loss_after). A Scenario
// carries a custom one in ResourceSpec::check / ClientSpec::policy (the
// builder's .resource_check() and .client(..., tweak) set them); nullptr is
// the built-in one the other fields describe.
//
// Determinism (what a policy must not do): a policy is a pure function of
// its arguments. It must not read the wall clock or any real clock (use
// PolicyContext::monotonic / wall, the client's simulated clocks), draw from
// OS or global randomness or std distributions (use PolicyContext::rng, the
// run's named stream "policy/<client>" or "check/<copy>"), start threads,
// block, keep state between calls in members or globals (state belongs in
// ResourceMarks for a check, and a client policy's inputs carry what it
// needs), or keep the PolicyContext after the call. The same policy object
// is shared by every client and copy it is given to, by every run of a sweep
// and by the sweep's worker threads: its methods are const and must stay so.
//
// Debug checks (PolicyMisuse, a std::logic_error naming the policy):
//   * a PolicyContext used after the call it was given to returned (kept and
//     used later, or in another run);
//   * a policy call made while another policy call is running on the same
//     thread (re-entrancy: a policy that runs a scenario, or calls back into
//     the run);
//   * RunOptions::self_check (on by default in a debug build of fencesim for
//     scenarios with a custom policy): the run is made twice and every
//     policy call's arguments and answer are compared; the first call that
//     got the same arguments and answered differently names the policy, the
//     call and the time — it depends on something outside its arguments (a
//     member it changes, a global, a real clock, a thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/clock.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace fencesim {

/// A policy broke a rule of models/policy.hpp "Determinism".
struct PolicyMisuse : std::logic_error {
  using std::logic_error::logic_error;
};

/// What a policy may look at besides its arguments, valid only during the
/// call it is given to (using it later throws PolicyMisuse).
class PolicyContext {
 public:
  /// The simulated time of the node the policy runs for (a client, or the
  /// resource copy), on each of its clocks (pauses, jumps and drift apply).
  sim::Time monotonic() const;
  sim::Time wall() const;
  sim::Time clock(sim::ClockKind k) const;
  /// The run's named stream for this policy: "policy/<client>" for a client
  /// policy, "check/<copy>" for a resource check. Draws from it are part of
  /// the run: the same scenario and seed draw the same numbers.
  sim::Rng& rng() const;
  /// The client's name (a client policy) or the copy's (a check).
  const std::string& node() const;

  struct Source {
    virtual ~Source() = default;
    virtual sim::Time clock(sim::ClockKind k) const = 0;
    virtual sim::Rng& rng() = 0;
    virtual const std::string& node() const = 0;
  };
  /// Made by the models for one call (models/policy_runtime.hpp); `serial`
  /// names the call.
  PolicyContext(Source& src, std::uint64_t serial) : src_(src), serial_(serial) {}

 private:
  void check() const;
  Source& src_;
  std::uint64_t serial_;
};

// =========================================================== ResourceCheck ==

enum class ResourceOp { kRead, kWrite };

/// A read or a write as the copy receives it.
struct ResourceRequest {
  ResourceOp op = ResourceOp::kRead;
  std::string client;                 ///< the client's name
  std::optional<std::int64_t> token;  ///< the fencing token it carries, if any (reads: only with fence_reads)
  /// Writes: the version of the value the client had read (a copy's version
  /// counts its accepted writes); nullopt for reads.
  std::optional<std::int64_t> version_read;
  /// Writes: the value the client had read before it wrote (what an S3-style
  /// check hashes into the ETag the client would send with If-Match);
  /// nullopt for reads.
  std::optional<std::int64_t> value_read;
  std::int64_t value = 0;  ///< writes: the value to store; reads: 0
  sim::Time at{0};         ///< true time of the request's arrival (for the check's own reasons)
  /// The lock the client takes (clients[].lock; lock.key when it names
  /// none), which is also the row the request reads or writes: with more
  /// than one lock (lock.keys) each lock guards its own row of the register,
  /// and ResourceMarks::value / version are that row's. Empty in a design
  /// without a lock key (the work queue).
  std::string lock;
};

/// A copy's stored state as a check sees it. `value` and `version` are the
/// data (read-only for the check: the copy stores an accepted write's value
/// and bumps the version itself) — with more than one lock, those of the
/// request's row (ResourceRequest::lock); the marks are the check's own and
/// belong to the whole copy, whatever the row. The
/// built-in fenced check uses last_written / last_seen, which every record
/// of the report shows; a custom check may use them and keep any other marks
/// by name in `marks` (e.g. one per row: "row-1" → its last token).
/// Replication (resource.replicas) carries the marks to the other copies:
/// each mark there becomes the larger of its own and the forwarded one.
struct ResourceMarks {
  std::int64_t value = 0;
  std::int64_t version = 0;
  std::int64_t last_written = 0;
  std::int64_t last_seen = 0;
  std::map<std::string, std::int64_t> marks;
};

struct ResourceDecision {
  bool accepted = false;
  std::string reason;  ///< why it was rejected (the report shows it); empty when accepted
};

/// The storage's rule. `decide` is one atomic step of the copy: no other
/// request is handled between the request's arrival and the decision, and
/// what it changes in `state` (the marks) is kept, accepted or not.
class ResourceCheck {
 public:
  virtual ~ResourceCheck() = default;
  /// The name reports give the resource ("kind" in report.json).
  virtual std::string name() const = 0;
  virtual ResourceDecision decide(const PolicyContext& ctx, const ResourceRequest& req, ResourceMarks& state) const = 0;
  /// Does a write need the version the client read (ResourceRequest::
  /// version_read)? True: writes carry it, and a write rejected by this
  /// check is re-read and retried as a CAS loop (workload.retries).
  virtual bool compares_versions() const { return false; }
  /// Do reads carry the client's token (as fence_reads)?
  virtual bool fences_reads() const { return false; }
};

// ============================================================ ClientPolicy ==

/// What the client knows of its lease when a policy is asked. Times are on
/// the client's clocks: `*_monotonic` on its monotonic clock, the renewal
/// times on the policy's renew_clock().
struct LeaseFacts {
  sim::Duration ttl{0};     ///< the lease TTL in effect (LockSpec::ttl)
  bool believes = false;    ///< the client believes it holds the lock
  bool lost = false;        ///< it learned that the lease was lost (refused renewal, ended session, lease_loss_after)
  std::string lost_reason;  ///< how, when `lost`
  /// When the request that last confirmed the lease (the grant or a
  /// renewal) was sent, on the monotonic clock; nullopt before any.
  std::optional<sim::Time> confirmed_sent_monotonic;
};

/// The renewal schedule's inputs, on the policy's renew_clock().
struct RenewalFacts {
  sim::Duration ttl{0};     ///< the lease TTL in effect
  sim::Time granted{0};     ///< when the client handled the grant
  sim::Time last_reply{0};  ///< when it handled the last successful renewal's reply (the grant's time before any)
  int renewals = 0;         ///< successful renewals of this lease so far
};

enum class WriteAction { kGo, kAbandon, kRecheck };
struct WriteDecision {
  WriteAction action = WriteAction::kGo;
  std::string reason;              ///< kAbandon: the iteration's outcome (e.g. "abandoned before the write: …")
  sim::Duration recheck_after{0};  ///< kRecheck: wait this long (> 0) on the client's process, then ask again
};

enum class RenewalFailure { kRetry, kLoseLease };

class ClientPolicy {
 public:
  virtual ~ClientPolicy() = default;
  /// The name reports give the client's policy ("policy" in report.json).
  virtual std::string name() const = 0;
  /// Does the client renew its lease at all?
  virtual bool renews() const { return true; }
  /// The clock the renewal schedule is read on (next_renewal's time).
  virtual sim::ClockKind renew_clock() const { return sim::ClockKind::kMonotonic; }
  /// When the next renewal is due, on renew_clock(); called after the grant
  /// and after each successful renewal.
  virtual sim::Time next_renewal(const PolicyContext& ctx, const RenewalFacts& f) const = 0;
  /// A renewal attempt got no answer (a timeout, no leader) — not a refusal,
  /// which always loses the lease. `failures` counts the failed attempts of
  /// this renewal so far (1 at the first). kRetry: try again as the library
  /// does; kLoseLease: the client ends its belief ("renewal failed (<name>)").
  virtual RenewalFailure on_renewal_failure(const PolicyContext& ctx, const LeaseFacts& f, int failures) const {
    (void)ctx, (void)f, (void)failures;
    return RenewalFailure::kRetry;
  }
  /// Before each step of an iteration (read, work, write): the outcome to
  /// stop with, or nullopt to go on (on_lease_loss "abort" stops once lost).
  virtual std::optional<std::string> stop_before_step(const PolicyContext& ctx, const LeaseFacts& f) const {
    (void)ctx, (void)f;
    return std::nullopt;
  }
  /// Just before a write (after stop_before_step said go on).
  virtual WriteDecision before_write(const PolicyContext& ctx, const LeaseFacts& f) const {
    (void)ctx, (void)f;
    return {};
  }
  /// lease_loss_after: the client gives the lease up itself when no acquire
  /// or renewal has succeeded for this long on its monotonic clock.
  virtual std::optional<sim::Duration> lease_loss_after() const { return std::nullopt; }
};

}  // namespace fencesim
