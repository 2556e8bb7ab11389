// models/history.hpp — what happened in a run, as the checkers need it.
//
// Models append to a History while the run goes on; checkers and report
// renderers only read it (docs/ARCHITECTURE.md: checkers read only the History).
// Every time is true simulated time (sim::Time, ns since the start).
//
// Records and who writes them:
//   GrantRecord      the lock service, when it grants (docs/FORMAT.md "Grants and tokens":
//                    a Redis grant is the true time the primary applied the
//                    SET NX; Redlock: the primary that completed the majority)
//   BeliefRecord     the lock client: from handling the grant until it sends
//                    the release, learns that a renewal was refused (or its
//                    own lease_loss_after ran out), or crashes (a pause or a
//                    timeout does not end it)
//   LeaseEndRecord   the service observer: the first true time at which the
//                    authoritative lock state no longer holds the lease
//   ResourceOpRecord the resource copy, at the moment it accepts or rejects
//   IterationRecord  the workload: start, acquisition, accepted write
//   FaultRecord      the fault script and nemesis
//   RenewalRecord    the lock client: first send to successful reply
//   MessageRecord    the work queue (lock.service "queue"): each message's
//                    receives, deletion or move to the dead-letter queue
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "sim/time.hpp"

namespace fencesim {

using sim::Time;

struct GrantRecord {
  Time at{0};
  std::string client;
  std::string value;  ///< the lease's unique value (Redis) or key (etcd)
  std::optional<std::int64_t> token;
  std::string server;     ///< node that granted
  std::uint64_t seq = 0;  ///< order of recording, breaks ties in `at`
  /// The lock granted (lock.key or one of lock.keys) when the scenario has
  /// more than one lock (lock.keys); empty with one lock.
  std::string lock;
};

struct BeliefRecord {
  std::string client;
  std::string value;
  std::optional<std::int64_t> token;
  Time start{0};
  std::optional<Time> end;  ///< empty: still believed when the run ended
  std::string end_reason;   ///< "release", "renewal refused", "crash", "session ended: …", "no acquire or renewal
                            ///< succeeded for 8s (lease_loss_after)"
  /// The queue design: the message the worker believes it holds (the
  /// belief's `value` is its receipt handle). Two beliefs conflict only when
  /// they hold the same message; for a lock it is empty (one lock).
  std::string message_id;
  /// The lock believed held when the scenario has more than one lock
  /// (lock.keys): two beliefs conflict only when they hold the same lock.
  /// Empty with one lock.
  std::string lock;
};

/// Why a lease ended at the service, as the service decided it (the words
/// on the timelines come from it, report/timeline_text.hpp).
enum class LeaseEndCause {
  kExpired,       ///< its TTL (or lock_until, or a visibility timeout) ran out
  kReleased,      ///< its holder released it (etcd's unlock, ShedLock's unlock, client-go's clear)
  kReleasedBy,    ///< another client (`who`) cleared it
  kTakenOver,     ///< another client (`who`) took the record
  kRevoked,       ///< its etcd lease was revoked
  kDeleted,       ///< its key or message was deleted (a txn, DeleteMessage, a DEL seen from outside)
  kNotOnPrimary,  ///< the current primary (`who`) does not hold it (after a failover, or a DEL)
  kNoMajority,    ///< fewer than a majority of Redlock's primaries hold it
  kServiceDown,   ///< the primary is down and no live replica holds it
  kEnded,         ///< anything else (the reason says it)
};

struct LeaseEndRecord {
  std::string value;
  Time at{0};
  std::string reason;  ///< e.g. "expired on redis-0 wall clock", "deleted", "primary crashed"
  LeaseEndCause cause = LeaseEndCause::kEnded;
  std::string who;  ///< kReleasedBy, kTakenOver: the client; kNotOnPrimary: the primary; else empty
};

/// What a resource operation was (ResourceOpRecord::kind). The register
/// (models/resource/) answers reads and writes; the other kinds are the
/// operations of a work queue with visibility timeouts, named here so the
/// record already has their shape: a worker receives a message (and a
/// receipt handle), extends its visibility, and deletes it. The work queue
/// of models/queue/ records its receives as grants (GrantRecord: value the
/// receipt, token the receive count) and the ledger's effects as writes
/// (kWrite with message_id and receipt), so that the lock checkers and the
/// timeline read them unchanged; the queue kinds are not recorded yet.
enum class ResourceOpKind {
  kRead,              ///< the register: value (and version, tag) returned
  kWrite,             ///< the register: value (and tag) written
  kSend,              ///< queue: a message is added
  kReceive,           ///< queue: a message handed out with a receipt, invisible for a while
  kExtendVisibility,  ///< queue: a receipt's invisibility is extended
  kDelete,            ///< queue: a message deleted by its receipt
};
/// "read", "write", "send", "receive", "extend_visibility", "delete".
inline const char* to_string(ResourceOpKind k) {
  switch (k) {
    case ResourceOpKind::kRead: return "read";
    case ResourceOpKind::kWrite: return "write";
    case ResourceOpKind::kSend: return "send";
    case ResourceOpKind::kReceive: return "receive";
    case ResourceOpKind::kExtendVisibility: return "extend_visibility";
    case ResourceOpKind::kDelete: return "delete";
  }
  return "?";
}

struct ResourceOpRecord {
  Time at{0};
  /// When the client sent the request (true time). An annotation derived
  /// from the engine's events, so the fingerprint does not hash it.
  Time sent{0};
  std::string client;
  std::string copy;    ///< resource node that answered
  bool write = false;  ///< true exactly when kind is kWrite
  std::optional<std::int64_t> token;
  std::int64_t read_value = 0;  ///< writes: the value the client had read
  std::int64_t value = 0;       ///< writes: the value written; reads: the value returned
  std::int64_t version = 0;     ///< CAS version after the op (or read)
  bool accepted = false;
  std::string reason;       ///< why rejected
  std::string lease_value;  ///< the client's lease value at the time (annotation)
  int iteration = 0;
  std::int64_t last_written = 0;  ///< the copy's marks after the op
  std::int64_t last_seen = 0;
  /// The copy's named marks after the op (a resource program's or a C++
  /// ResourceCheck's own, models/policy.hpp ResourceMarks::marks); shown in
  /// the trace and the timeline. An annotation: the fingerprint does not
  /// hash it (what the marks decide shows in later decisions).
  std::map<std::string, std::int64_t> marks;
  ResourceOpKind kind = ResourceOpKind::kRead;
  /// Who the value is tagged with: writes, the tag the write carried (the
  /// `writer` workload tags each version with its client's name); reads, the
  /// tag of the value returned. Empty: untagged (the initial value, counters).
  std::string tag;
  std::string message_id;  ///< queue operations: the message; empty for the register
  std::string receipt;     ///< queue operations: the receipt handle handed out or presented
  /// What an accepted operation changed, in words, when the fields above do
  /// not say it all: a tagged write names the version it replaced ("version
  /// 1 by A replaces version 2 by B": an older version over a newer one).
  /// Empty otherwise.
  std::string effect;
  /// More than one lock (lock.keys): the client's lock, which is also the
  /// row of the register the operation read or wrote (each lock guards its
  /// own row: its own value, version and tag). Empty with one lock.
  std::string lock;
};

/// Named marks as one line of text for the trace and the timeline:
/// "row-1=3, row-2=2" (name order).
inline std::string named_marks_text(const std::map<std::string, std::int64_t>& marks) {
  std::string out;
  for (const auto& [name, v] : marks) out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(v);
  return out;
}

struct IterationRecord {
  std::string client;
  int index = 0;
  Time start{0};
  std::optional<Time> acquired;
  std::optional<Time> done;  ///< write accepted
  bool success = false;
  std::string outcome;  ///< "ok", "write rejected", "read timed out", ...
  /// When the client began to acquire (its first acquire request; the
  /// queue: its first ReceiveMessage), if this iteration acquired at all: a
  /// design without a lock, or a leader that still holds it, does not.
  /// `acquired` − this is the acquisition latency (docs/REPORTS.md "Metrics").
  std::optional<Time> acquire_sent;
};

struct FaultRecord {
  Time start{0};
  std::optional<Time> end;             ///< empty: never ends
  FaultKind kind = FaultKind::kPause;  ///< to_string(kind) where text is needed
  std::string target;
  std::string detail;  ///< duration, by, ppm, groups...
  std::string origin;  ///< "faults[0]" or "nemesis#3"
  bool skipped = false;
  std::string skip_reason;
};

struct RenewalRecord {
  std::string client;
  Time first_sent{0};
  Time replied{0};
  bool success = false;
};

/// One message of the work queue, as the queue saw it (true times).
struct MessageRecord {
  std::string id;                     ///< "msg-0" …
  int receives = 0;                   ///< ReceiveMessage hand-outs (its receive count)
  std::optional<Time> deleted;        ///< DeleteMessage with its current receipt
  std::string deleted_by;             ///< the client that deleted it
  std::optional<Time> dead_lettered;  ///< moved to the dead-letter queue
};

struct AuditFinding {
  Time at{0};
  std::string copy;
  std::string holder;
  std::int64_t holder_token = 0;
  /// With one lock, the copy's last_seen mark; with more than one lock
  /// (lock.keys), the highest token of `lock` the copy had accepted.
  std::int64_t last_seen = 0;
  /// The holder's lock with more than one lock (lock.keys); empty with one.
  std::string lock;
};

/// A timeline event for reports (grants, expiries, failovers...), free text.
struct NoteRecord {
  Time at{0};
  std::string node;
  std::string kind;
  std::string text;
};

class History {
 public:
  std::vector<GrantRecord> grants;
  std::vector<BeliefRecord> beliefs;
  std::map<std::string, LeaseEndRecord> lease_ends;  ///< by lease value
  std::vector<ResourceOpRecord> resource_ops;
  std::vector<IterationRecord> iterations;
  std::vector<FaultRecord> faults;
  std::vector<RenewalRecord> renewals;
  std::vector<AuditFinding> audit;
  std::vector<NoteRecord> notes;
  std::vector<MessageRecord> messages;  ///< the queue design's messages, in id order; empty otherwise
  std::int64_t lease_losses = 0;        ///< refused renewals / ended sessions
  /// Permanent errors the lock service answered an acquire with (Redis
  /// Cluster's CROSSSLOT), by error text → how many times; written by the
  /// client node. Empty in every other design.
  std::map<std::string, std::int64_t> service_errors;
  /// More than one lock (lock.keys): each client's lock (client name →
  /// lock.key or one of lock.keys), set before the run; grants and beliefs
  /// are labelled with it as they are recorded, so the holder audit
  /// compares a copy's tokens with the holders of the same lock only.
  /// Empty with one lock.
  std::map<std::string, std::string> client_locks;

  void grant(Time at, std::string client, std::string value, std::optional<std::int64_t> token, std::string server) {
    std::string lock = lock_of(client);
    grants.push_back(
        GrantRecord{at, std::move(client), std::move(value), token, std::move(server), grants.size(), std::move(lock)});
  }
  /// Starts a belief; returns its index for `end_belief`.
  std::size_t begin_belief(Time at, std::string client, std::string value, std::optional<std::int64_t> token,
                           std::string message_id = "") {
    std::string lock = lock_of(client);
    beliefs.push_back(BeliefRecord{std::move(client), std::move(value), token, at, std::nullopt, "",
                                   std::move(message_id), std::move(lock)});
    open_beliefs_.push_back(beliefs.size() - 1);
    return beliefs.size() - 1;
  }
  void end_belief(std::size_t index, Time at, std::string reason) {
    BeliefRecord& b = beliefs.at(index);
    if (b.end) return;
    b.end = at;
    b.end_reason = std::move(reason);
    std::erase(open_beliefs_, index);
  }
  /// Records the end of a lease at the service (first end wins): the
  /// reason in words for people, the cause for the timelines.
  void lease_end(Time at, const std::string& value, std::string reason, LeaseEndCause cause, std::string who = "") {
    lease_ends.emplace(value, LeaseEndRecord{value, at, std::move(reason), cause, std::move(who)});
  }
  /// Holder audit (docs/REPORTS.md "Metrics"): at every acceptance at a copy, a
  /// believed holder whose token is below the copy's last_seen is broken.
  /// With more than one lock, per lock: `lock` is the lock of the accepted
  /// request, `last_seen` the highest token of that lock the copy accepted,
  /// and only holders of `lock` are audited (tokens of two locks are not
  /// comparable: each Redis lock has its own counter).
  /// Looks only at the beliefs still open (begun with begin_belief and not
  /// ended), in the order they began: a long run has thousands of beliefs,
  /// a handful of them open at a time.
  void audit_holders(Time at, const std::string& copy, std::int64_t last_seen, const std::string& lock = {}) {
    for (std::size_t i : open_beliefs_) {
      const BeliefRecord& b = beliefs[i];
      if (!b.end && b.token && b.message_id.empty() && b.lock == lock && *b.token < last_seen) {
        audit.push_back(AuditFinding{at, copy, b.client, *b.token, last_seen, lock});
      }
    }
  }
  void note(Time at, std::string node, std::string kind, std::string text) {
    notes.push_back(NoteRecord{at, std::move(node), std::move(kind), std::move(text)});
  }

 private:
  std::string lock_of(const std::string& client) const {
    auto it = client_locks.find(client);
    return it == client_locks.end() ? std::string() : it->second;
  }
  std::vector<std::size_t> open_beliefs_;  ///< indices into `beliefs`, ascending
};

}  // namespace fencesim
