#include "models/fingerprint.hpp"

namespace fencesim {

void Fingerprint::maybe(const std::optional<std::int64_t>& v) {
  word(v.has_value());
  if (v) number(*v);
}

void Fingerprint::maybe(const std::optional<sim::Time>& v) {
  word(v.has_value());
  if (v) time(*v);
}

namespace {

void add_grants(Fingerprint& f, const History& h) {
  f.word(h.grants.size());
  for (const GrantRecord& g : h.grants) {
    f.time(g.at);
    f.text(g.client);
    f.text(g.value);
    f.maybe(g.token);
    f.text(g.server);
    f.word(g.seq);
    if (!g.lock.empty()) f.text(g.lock);  // more than one lock only: a one-lock run's fingerprint is unchanged
  }
}

void add_beliefs(Fingerprint& f, const History& h) {
  f.word(h.beliefs.size());
  for (const BeliefRecord& b : h.beliefs) {
    f.text(b.client);
    f.text(b.value);
    f.maybe(b.token);
    f.time(b.start);
    f.maybe(b.end);
    f.text(b.end_reason);
    // The queue design's message (hashed only when set, so a lock run's fingerprint is what it was).
    if (!b.message_id.empty()) f.text(b.message_id);
    if (!b.lock.empty()) f.text(b.lock);
  }
  // The queue design's messages (none for a lock: nothing hashed).
  for (const MessageRecord& m : h.messages) {
    f.text(m.id);
    f.number(m.receives);
    f.maybe(m.deleted);
    f.text(m.deleted_by);
    f.maybe(m.dead_lettered);
  }
  f.word(h.lease_ends.size());
  for (const auto& [value, e] : h.lease_ends) {  // (a std::map: in key order)
    f.text(e.value);
    f.time(e.at);
    f.text(e.reason);
  }
  f.number(h.lease_losses);
}

void add_resource_ops(Fingerprint& f, const History& h) {
  f.word(h.resource_ops.size());
  for (const ResourceOpRecord& op : h.resource_ops) {
    f.time(op.at);
    f.text(op.client);
    f.text(op.copy);
    f.word(op.write);
    f.maybe(op.token);
    f.number(op.read_value);
    f.number(op.value);
    f.number(op.version);
    f.word(op.accepted);
    f.text(op.reason);
    f.text(op.lease_value);
    f.number(op.iteration);
    f.number(op.last_written);
    f.number(op.last_seen);
    f.word(static_cast<std::uint64_t>(op.kind));
    f.text(op.tag);
    f.text(op.message_id);
    f.text(op.receipt);
    f.text(op.effect);
    if (!op.lock.empty()) f.text(op.lock);
  }
  f.word(h.audit.size());
  for (const AuditFinding& a : h.audit) {
    f.time(a.at);
    f.text(a.copy);
    f.text(a.holder);
    f.number(a.holder_token);
    f.number(a.last_seen);
  }
}

void add_iterations(Fingerprint& f, const History& h) {
  f.word(h.iterations.size());
  for (const IterationRecord& it : h.iterations) {
    f.text(it.client);
    f.number(it.index);
    f.time(it.start);
    f.maybe(it.acquired);
    f.maybe(it.done);
    f.word(it.success);
    f.text(it.outcome);
  }
  f.word(h.renewals.size());
  for (const RenewalRecord& r : h.renewals) {
    f.text(r.client);
    f.time(r.first_sent);
    f.time(r.replied);
    f.word(r.success);
  }
}

void add_faults_and_notes(Fingerprint& f, const History& h) {
  f.word(h.faults.size());
  for (const FaultRecord& r : h.faults) {
    f.time(r.start);
    f.maybe(r.end);
    f.word(static_cast<std::uint64_t>(r.kind));
    f.text(r.target);
    f.text(r.detail);
    // Not r.origin: a label ("faults[2]", "nemesis#0"), not what happened,
    // so a run replayed from its pasted nemesis draws has the same fingerprint.
    f.word(r.skipped);
    f.text(r.skip_reason);
  }
  f.word(h.notes.size());
  for (const NoteRecord& n : h.notes) {
    f.time(n.at);
    f.text(n.node);
    f.text(n.kind);
    f.text(n.text);
  }
}

}  // namespace

std::uint64_t history_fingerprint(const History& h) {
  Fingerprint f;
  add_grants(f, h);
  add_beliefs(f, h);
  add_resource_ops(f, h);
  add_iterations(f, h);
  add_faults_and_notes(f, h);
  return f.value();
}

std::uint64_t raft_fingerprint(const raft::RaftHistory& h) {
  Fingerprint f;
  f.word(h.events.size());
  for (const raft::RaftEvent& e : h.events) {
    f.time(e.at);
    f.word(static_cast<std::uint64_t>(e.kind));
    f.text(e.member);
    f.word(e.term);
    f.word(e.index);
    f.word(e.command.empty());
    f.word(e.commit);
    f.word(e.incarnation);
    f.time(e.issued_at);
    f.text(e.detail);
  }
  const raft::RaftStats& s = h.stats;
  for (std::uint64_t v : {s.pre_campaigns, s.elections, s.leaders_elected, s.leader_changes, s.step_downs,
                          s.check_quorum_step_downs, s.truncations, s.entries_truncated, s.crashes, s.restarts,
                          s.proposals, s.reads_answered, s.votes_ignored_in_lease, s.old_term_commits_by_counting}) {
    f.word(v);
  }
  return f.value();
}

std::uint64_t run_fingerprint(std::uint64_t history, std::uint64_t engine, std::optional<std::uint64_t> raft) {
  Fingerprint f;
  f.word(history);
  f.word(engine);
  f.word(raft.has_value());
  if (raft) f.word(*raft);
  return f.value();
}

}  // namespace fencesim
