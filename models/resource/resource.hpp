// models/resource/resource.hpp — the protected resource and its copies.
//
// Shape: `ResourceService` owns one `ResourceCopy` behaviour per node
// `resource`, `resource-replica-0` …. A copy holds an integer value (the
// allocator's counter, the counter, or the writer's file version), the tag
// of that value (the name the writer tagged its version with; empty for the
// initial value and untagged writes), a CAS version, and the two fencing
// marks of docs/FORMAT.md "Resource":
//   last_written  highest token of an accepted write
//   last_seen     highest token of an accepted read or write (reads count
//                 only with fence_reads)
// Rules (fenced):  read  t accepted iff t >= last_seen           (fence_reads)
//                  write t accepted iff t >= last_seen and
//                        t >  last_written (strict) / t >= last_written (monotonic)
// Acceptance updates the marks in the same atomic step; a request without a
// token is rejected by a fenced copy (reads only with fence_reads).
// `unfenced` accepts everything; `cas` accepts a write iff the version the
// client read is still current (Kleppmann, "How to do distributed locking":
// the storage must check the token; CAS is the lock-free alternative).
//
// Copies serve the clients routed to them, check against their own state,
// and forward each accepted write to the other copies `replication_delay`
// later; a forwarded write is applied unconditionally (data takes the value,
// each mark the larger of its own and the forwarded token). Copies are
// durable: a crash keeps data, marks and the forwarding outbox.
//
// The queue design (lock.service "queue") uses the copy as a ledger of
// effects, one per message (ledger.cpp): an EffectRequest carries the
// message id, the receipt handle and (fenced) its receive count. Kinds:
//   unfenced    applies every effect
//   fenced      applies iff the receive count is above (strict; monotonic:
//               not below) the highest one applied for that message
//   idempotent  applies the first effect per message; later ones are
//               answered "already applied" (already_applied, not accepted)
//   fenced + "idempotent": true   the fence first, then the once-only rule
// An effect is recorded as a write (kind kWrite) with message_id, receipt,
// value = how many times that message's effect has been applied, and the
// marks of that message (last_written = last_seen = its highest count).
// The ledger is durable like the register; it has no replicas.
//
// The rules of the register are ResourceCheck implementations (check.cpp,
// models/policy.hpp); ResourceSpec::custom_check replaces them with a
// check of the user's, called the same way: the copy hands it the request
// and its marks (ResourceMarks) and stores an accepted write's value.
//
// Every read and write the copy answers is appended to the History as a
// ResourceOpRecord (kind kRead / kWrite); a tagged write's record also says
// which version it replaced (`effect`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/policy.hpp"
#include "models/policy_runtime.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::resource {

struct ReadRequest final : sim::Payload {
  std::optional<std::int64_t> token;
  std::string lease_value;  ///< history annotation, not used by the copy's logic
  int iteration = 0;
  std::string describe() const override;
};

struct WriteRequest final : sim::Payload {
  std::optional<std::int64_t> token;
  std::int64_t value = 0;
  std::int64_t read_value = 0;                   ///< history annotation: what the client had read
  std::optional<std::int64_t> expected_version;  ///< cas only
  std::string lease_value;
  int iteration = 0;
  /// Stored with the value when the write is accepted (the writer's client
  /// name); empty: an untagged write, which clears the tag.
  std::string tag;
  std::string describe() const override;
};

/// The queue design: apply the effect of one message (ledger.cpp).
struct EffectRequest final : sim::Payload {
  std::string message_id;
  std::string receipt;                ///< the receipt handle it was received with
  std::optional<std::int64_t> token;  ///< the receive count (with fencing)
  int iteration = 0;
  std::string describe() const override;
};

/// The answer to every resource request. The register fills accepted,
/// value, version, tag and reason; `message_id` and `receipt` are for the
/// operations of a queue (ResourceOpKind), empty for the register.
struct OpReply final : sim::Payload {
  bool accepted = false;
  std::int64_t value = 0;
  std::int64_t version = 0;
  std::string reason;
  std::string tag;  ///< the tag of `value` after the operation
  std::string message_id;
  std::string receipt;
  /// The ledger: the message's effect had been applied before (an
  /// idempotent ledger's answer; `accepted` is false).
  bool already_applied = false;
  std::string describe() const override { return accepted ? "ACCEPTED" : "REJECTED " + reason; }
};

struct Forward final : sim::Payload {
  std::string row;  ///< the row written ("" with one lock)
  std::int64_t value = 0;
  std::int64_t version = 0;
  std::optional<std::int64_t> token;
  std::string tag;
  /// A custom check's marks (every mark: the larger one wins); nullopt for the built-ins.
  std::optional<ResourceMarks> marks;
  std::string describe() const override { return "FORWARD"; }
};

class ResourceService;

class ResourceCopy final : public sim::NodeBehaviour {
 public:
  ResourceCopy(ResourceService& svc, sim::Node& node);
  void on_message(const sim::Message& m) override;
  void on_restart() override;

  std::int64_t value() const { return state_.value; }
  std::int64_t version() const { return state_.version; }
  const std::string& tag() const { return tag_; }
  std::int64_t last_written() const { return state_.last_written; }
  std::int64_t last_seen() const { return state_.last_seen; }
  /// The marks of a custom check (models/policy.hpp), by name.
  const std::map<std::string, std::int64_t>& marks() const { return state_.marks; }
  /// counter_reset of the resource: every mark, a check's named ones too,
  /// becomes `v` (the store forgot what it had seen).
  void reset_marks(std::int64_t v) {
    state_.last_written = state_.last_seen = v;
    for (auto& [name, mark] : state_.marks) mark = v;
    for (auto& [row, seen] : audit_seen_) seen = v;
    audit_floor_ = v;
  }
  sim::Node& node() const { return node_; }

 private:
  void read(const sim::Message& m, const ReadRequest& r);
  void write(const sim::Message& m, const WriteRequest& w);
  /// Makes `row` the current one: its value, version and tag in state_ and
  /// tag_ (the others wait in rows_). "" is the only row with one lock.
  void use_row(const std::string& row);
  /// The ledger of the queue design (ledger.cpp).
  void effect(const sim::Message& m, const EffectRequest& e);
  /// The check's decision on `req`, as one policy call (it may change the marks).
  ResourceDecision decide(const ResourceRequest& req);
  void forward(std::optional<std::int64_t> token);
  /// Completes `rec` (time, client, copy, version, marks after the op,
  /// acceptance and reason from `reply`), appends it to the History and, for
  /// an acceptance at a fenced copy, audits the believed holders.
  void record(const sim::Message& m, const OpReply& reply, ResourceOpRecord rec);

  ResourceService& svc_;
  sim::Node& node_;
  /// value, version and the marks (models/policy.hpp ResourceMarks).
  ResourceMarks state_;
  std::string tag_;
  struct Row {
    std::int64_t value = 0;
    std::int64_t version = 0;
    std::string tag;
  };
  std::string row_;                  ///< the row state_ and tag_ hold
  std::map<std::string, Row> rows_;  ///< the other rows (more than one lock)
  /// More than one lock: per row (lock), the highest token of an accepted
  /// read or write of it at this copy, or forwarded to it — the holder
  /// audit's per-lock last_seen (state_.last_seen mixes the locks' tokens).
  std::map<std::string, std::int64_t> audit_seen_;
  std::int64_t audit_floor_ = 0;  ///< a row's mark before its first token (counter_reset of "resource")
  /// Raises `row`'s audit mark to `token`; returns the mark.
  std::int64_t see(const std::string& row, std::optional<std::int64_t> token) {
    std::int64_t& seen = audit_seen_.try_emplace(row, audit_floor_).first->second;
    if (token) seen = std::max(seen, *token);
    return seen;
  }
  policy_detail::PolicyHost host_;  ///< the check's clocks and its stream "check/<copy>"
  struct Pending {
    std::shared_ptr<Forward> fwd;
    bool sent = false;
  };
  std::vector<std::shared_ptr<Pending>> outbox_;
  /// The ledger, by message id: how many times its effect was applied and
  /// the highest receive count applied.
  struct LedgerEntry {
    std::int64_t applied = 0;
    std::int64_t highest = 0;
  };
  std::map<std::string, LedgerEntry> ledger_;
};

class ResourceService {
 public:
  /// `check`: the check of this run (a resource program's,
  /// models/program/program_check.hpp); nullptr: check_of(spec).
  ResourceService(sim::Simulation& s, History& h, const ResourceSpec& spec, std::vector<sim::NodeId> copies,
                  std::shared_ptr<const ResourceCheck> check = nullptr);
  ~ResourceService();

  const ResourceSpec& spec() const { return spec_; }
  History& history() { return history_; }
  sim::Simulation& sim() { return sim_; }
  const std::vector<sim::NodeId>& copies() const { return ids_; }
  ResourceCopy& copy(std::size_t i) { return *copies_[i]; }

  /// The scenario's locks: `lock_key` (lock.key; "" for a design without a
  /// lock key) and, with more than one lock (lock.keys), client name → its
  /// lock, the row its reads and writes go to (empty: one row).
  void set_locks(std::string lock_key, std::map<std::string, std::string> rows) {
    lock_key_ = std::move(lock_key);
    rows_ = std::move(rows);
  }
  /// The row of `client`'s requests ("" with one lock).
  const std::string& row_of(const std::string& client) const;
  bool has_rows() const { return !rows_.empty(); }
  /// The lock name a check sees for `client` (ResourceRequest::lock).
  std::string lock_name(const std::string& client) const;

  /// counter_reset of the resource: every copy's marks set to `value`, data kept.
  void reset_marks(std::int64_t value);

  std::int64_t accepted_writes = 0, rejected_writes = 0, accepted_reads = 0, rejected_reads = 0;

  /// The check every copy applies (the built-in one of the spec, or the custom one).
  const ResourceCheck& check() const { return *check_; }
  const std::string& check_name() const { return check_name_; }
  /// A check of the user's (a custom ResourceCheck or a resource program):
  /// its marks travel with replication.
  bool custom() const { return spec_.custom_check != nullptr || spec_.program.has_value(); }
  /// Accepted operations are audited against the believed holders (fenced, or a custom check).
  bool audits() const { return audits_; }

 private:
  sim::Simulation& sim_;
  History& history_;
  ResourceSpec spec_;
  std::vector<sim::NodeId> ids_;
  std::vector<std::unique_ptr<ResourceCopy>> copies_;
  std::map<std::string, std::string> rows_;
  std::string lock_key_;  ///< lock.key: what a one-lock check sees as ResourceRequest::lock
  std::shared_ptr<const ResourceCheck> check_;
  std::string check_name_;
  bool audits_ = false;
};

/// The built-in check `spec` describes (check.cpp), ignoring custom_check.
std::shared_ptr<const ResourceCheck> builtin_check(const ResourceSpec& spec);
/// custom_check, or the built-in one.
std::shared_ptr<const ResourceCheck> check_of(const ResourceSpec& spec);
/// Do reads carry the token (fence_reads, or the custom check's fences_reads)?
inline bool fences_reads(const ResourceSpec& spec) {
  return spec.custom_check ? spec.custom_check->fences_reads() : spec.fence_reads;
}
/// Do writes carry the version read, and is a rejected write a CAS conflict (retried)?
inline bool compares_versions(const ResourceSpec& spec) {
  return spec.custom_check ? spec.custom_check->compares_versions()
                           : spec.kind == ResourceKind::kCas || spec.compare_versions;
}
/// Does the client's token reach the resource (a fenced resource, a custom
/// check or a resource program)? Its acceptances are then audited against
/// the believed holders.
inline bool takes_tokens(const ResourceSpec& spec) {
  return spec.custom_check != nullptr || spec.kind == ResourceKind::kFenced || spec.kind == ResourceKind::kProgram;
}

}  // namespace fencesim::resource
