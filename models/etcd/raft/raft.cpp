#include "models/etcd/raft/raft.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace fencesim::raft {

const char* message_type_name(MessageType t) {
  switch (t) {
    case MessageType::kAppend: return "MsgApp";
    case MessageType::kAppendResp: return "MsgAppResp";
    case MessageType::kHeartbeat: return "MsgHeartbeat";
    case MessageType::kHeartbeatResp: return "MsgHeartbeatResp";
    case MessageType::kVote: return "MsgVote";
    case MessageType::kVoteResp: return "MsgVoteResp";
    case MessageType::kPreVote: return "MsgPreVote";
    case MessageType::kPreVoteResp: return "MsgPreVoteResp";
    case MessageType::kReadIndex: return "MsgReadIndex";
    case MessageType::kReadIndexResp: return "MsgReadIndexResp";
  }
  return "?";
}

std::string RaftMessage::describe() const {
  std::string s =
      fmt::format("{} term={} index={} log_term={} commit={}", message_type_name(type), term, index, log_term, commit);
  if (!entries.empty()) s += fmt::format(" entries={}", entries.size());
  if (reject) s += fmt::format(" reject hint={}", reject_hint);
  if (context != 0) s += fmt::format(" ctx={}", context);
  if (transfer) s += " transfer";
  return s;
}

const char* event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::kBecameLeader: return "became_leader";
    case EventKind::kSteppedDown: return "stepped_down";
    case EventKind::kCommit: return "commit";
    case EventKind::kApply: return "apply";
    case EventKind::kTruncate: return "truncate";
    case EventKind::kCrash: return "crash";
    case EventKind::kRestart: return "restart";
    case EventKind::kRead: return "read";
  }
  return "?";
}

RaftStats& RaftStats::operator+=(const RaftStats& o) {
  pre_campaigns += o.pre_campaigns;
  elections += o.elections;
  leaders_elected += o.leaders_elected;
  leader_changes += o.leader_changes;
  step_downs += o.step_downs;
  check_quorum_step_downs += o.check_quorum_step_downs;
  truncations += o.truncations;
  entries_truncated += o.entries_truncated;
  crashes += o.crashes;
  restarts += o.restarts;
  proposals += o.proposals;
  reads_answered += o.reads_answered;
  votes_ignored_in_lease += o.votes_ignored_in_lease;
  old_term_commits_by_counting += o.old_term_commits_by_counting;
  return *this;
}

const char* role_name(Role r) {
  switch (r) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "pre-candidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "?";
}

// ================================================================ setup ==

RaftNode::RaftNode(sim::Node& node, Config config, RaftHistory* history, bool attach)
    : node_(node),
      config_(std::move(config)),
      history_(history != nullptr ? history : &own_history_),
      rng_(node.sim().rng("raft/" + node.name())) {
  if (config_.heartbeat <= sim::Duration{0}) throw std::invalid_argument("raft: heartbeat must be positive");
  if (config_.election_timeout < config_.heartbeat ||
      config_.election_timeout % config_.heartbeat != sim::Duration{0}) {
    throw std::invalid_argument("raft: election_timeout must be a whole multiple (>= 1) of heartbeat");
  }
  if (config_.members.empty() ||
      std::find(config_.members.begin(), config_.members.end(), node_.id()) == config_.members.end()) {
    throw std::invalid_argument("raft: members must include this node");
  }
  if (config_.max_entries_per_append == 0) throw std::invalid_argument("raft: max_entries_per_append must be >= 1");
  election_ticks_ = static_cast<int>(config_.election_timeout / config_.heartbeat);
  if (history == nullptr) own_history_.record_events = false;
  if (attach) node_.set_behaviour(this);
}

void RaftNode::start() {
  // docs/FORMAT.md "etcd": "At time 0, etcd-0 is leader of term 1 with its
  // empty entry committed on every member; followers' election timers start
  // freshly randomized at 0." Every member voted for the bootstrap leader in
  // term 1, as if it had won the first election.
  const NodeId boot = config_.members.front();
  store_ = Storage{};
  store_.term = 1;
  store_.vote = boot;
  store_.log.push_back(Entry{1, ""});
  store_.commit = 1;
  vol_ = Volatile{};
  reset(1);
  vol_.synced = store_.last_index();
  if (node_.id() == boot) {
    vol_.role = Role::kLeader;
    vol_.lead = boot;
    for (NodeId m : config_.members) {
      if (m != node_.id()) vol_.progress[m] = Progress{1, 2, false};
    }
    record(EventKind::kBecameLeader, 1, 1, {}, "bootstrap");
    history_->last_leader = node_.name();
  } else {
    vol_.role = Role::kFollower;
    vol_.lead = boot;
  }
  record(EventKind::kCommit, 1, 1);
  if (node_.id() == boot && callbacks_.became_leader) callbacks_.became_leader(1);
  apply_committed();
  schedule_tick();
}

// ================================================================ crash ==

void RaftNode::on_crash() {
  // The engine has already dropped this node's timers. Storage stays; the
  // rest goes, including reads nobody will ever answer.
  history_->stats.crashes++;
  record(EventKind::kCrash, store_.term, vol_.applied, {}, role_name(vol_.role));
  vol_ = Volatile{};
}

void RaftNode::on_restart() {
  history_->stats.restarts++;
  vol_ = Volatile{};
  vol_.role = Role::kFollower;
  vol_.lead = sim::kNoNode;
  vol_.synced = store_.last_index();  // what survived the crash is on disk
  reset_randomized_timeout();
  record(EventKind::kRestart, store_.term, store_.commit);
  trace("raft_restart", {{"term", store_.term}, {"commit", store_.commit}, {"last_index", store_.last_index()}});
  if (callbacks_.restarted) callbacks_.restarted();
  // The state machine above is volatile: rebuild it from the log.
  apply_committed();
  schedule_tick();
}

// ================================================================ ticks ==

void RaftNode::schedule_tick() {
  // One tick per heartbeat interval on the monotonic clock, each measured
  // from the previous one (etcd's node ticker). A fresh raftNode counts
  // its creation as its latest tick (newRaftNode: latestTickTs: time.Now()).
  vol_.last_tick = node_.monotonic();
  vol_.tick_timer = node_.every(config_.heartbeat, [this] { tick(); });
}

void RaftNode::tick() {
  if (vol_.stalled) return;            // the raftNode goroutine that ticks is blocked
  vol_.last_tick = node_.monotonic();  // raftNode.tick: r.Tick(); r.latestTickTs = time.Now()
  if (vol_.role == Role::kLeader) {
    tick_heartbeat();
  } else {
    tick_election();
  }
}

void RaftNode::reset_randomized_timeout() {
  // etcd raft.go resetRandomizedElectionTimeout: electionTimeout +
  // a random election timeout, i.e. uniform in {E, …, 2E−1} ticks.
  vol_.randomized_ticks = election_ticks_ + static_cast<int>(rng_.below(static_cast<std::uint64_t>(election_ticks_)));
}

void RaftNode::tick_election() {
  // etcd tickElection: campaign when the randomized timeout has passed
  // without hearing from a leader (§5.2).
  vol_.election_elapsed++;
  if (vol_.election_elapsed >= vol_.randomized_ticks) {
    vol_.election_elapsed = 0;
    hup(false);
  }
}

void RaftNode::tick_heartbeat() {
  // etcd tickHeartbeat.
  vol_.heartbeat_elapsed++;
  vol_.election_elapsed++;
  if (vol_.election_elapsed >= election_ticks_) {
    vol_.election_elapsed = 0;
    // CheckQuorum (etcd MsgCheckQuorum): a leader that has not heard from a
    // quorum during the last election timeout steps down, so a partitioned
    // leader stops believing it leads and stops serving (ReadIndex would not
    // confirm anyway).
    if (!quorum_active()) {
      history_->stats.check_quorum_step_downs++;
      become_follower(store_.term, sim::kNoNode, "check quorum");
      return;
    }
    for (auto& [id, pr] : vol_.progress) pr.recent_active = false;
  }
  if (vol_.heartbeat_elapsed >= 1) {
    vol_.heartbeat_elapsed = 0;
    broadcast_heartbeat(vol_.reads.empty() ? 0 : vol_.reads.back().id);
  }
}

bool RaftNode::quorum_active() const {
  std::size_t active = 1;  // the leader itself
  for (const auto& [id, pr] : vol_.progress) active += pr.recent_active ? 1 : 0;
  return active >= quorum();
}

// ================================================================ roles ==

void RaftNode::reset(Term term) {
  // etcd raft.go reset: a new term clears the vote; every role change
  // clears the leader, the elapsed ticks, the votes and the progress, and
  // draws a fresh randomized election timeout.
  if (store_.term != term) {
    store_.term = term;
    store_.vote = sim::kNoNode;
    persist();
  }
  vol_.lead = sim::kNoNode;
  vol_.election_elapsed = 0;
  vol_.heartbeat_elapsed = 0;
  reset_randomized_timeout();
  vol_.votes.clear();
  vol_.progress.clear();
}

void RaftNode::become_follower(Term term, NodeId lead, const char* why) {
  const bool was_leader = vol_.role == Role::kLeader;
  const Term old_term = store_.term;
  const NodeId old_lead = vol_.lead;
  reset(term);
  vol_.role = Role::kFollower;
  vol_.lead = lead;
  if (was_leader) {
    history_->stats.step_downs++;
    record(EventKind::kSteppedDown, old_term, store_.last_index(), {}, why);
    trace("raft_step_down", {{"term", old_term}, {"new_term", term}, {"why", why}});
    fail_leader_reads("leader changed");
    if (callbacks_.stepped_down) after_stall([this, old_term] { callbacks_.stepped_down(old_term); });
  }
  if (lead != old_lead || term != old_term) fail_forwarded_reads("leader changed");
}

void RaftNode::become_pre_candidate() {
  // etcd becomePreCandidate: neither the term nor the vote changes (thesis
  // §9.6), and the randomized timeout is not redrawn.
  const bool was_leader = vol_.role == Role::kLeader;
  if (was_leader) throw sim::ModelBug("raft: a leader cannot become pre-candidate");
  vol_.role = Role::kPreCandidate;
  vol_.votes.clear();
  if (vol_.lead != sim::kNoNode) fail_forwarded_reads("leader changed");
  vol_.lead = sim::kNoNode;
  history_->stats.pre_campaigns++;
}

void RaftNode::become_candidate(bool transfer) {
  if (vol_.role == Role::kLeader) throw sim::ModelBug("raft: a leader cannot become candidate");
  if (vol_.lead != sim::kNoNode) fail_forwarded_reads("leader changed");
  reset(store_.term + 1);
  store_.vote = node_.id();  // §5.2: vote for self; persisted before the requests go out
  persist();
  vol_.role = Role::kCandidate;
  history_->stats.elections++;
  trace("raft_campaign", {{"term", store_.term}, {"transfer", transfer}});
}

void RaftNode::become_leader() {
  reset(store_.term);
  vol_.role = Role::kLeader;
  vol_.lead = node_.id();
  const Index last = store_.last_index();
  for (NodeId m : config_.members) {
    if (m != node_.id()) vol_.progress[m] = Progress{0, last + 1, false};
  }
  history_->stats.leaders_elected++;
  if (history_->last_leader != node_.name()) history_->stats.leader_changes++;
  history_->last_leader = node_.name();
  record(EventKind::kBecameLeader, store_.term, last);
  trace("raft_leader", {{"term", store_.term}, {"last_index", last}});
  // §8 / etcd becomeLeader: append an empty entry of the new term, so that
  // committing it commits every earlier entry (§5.4.2) and ReadIndex works.
  append_local(Entry{store_.term, ""});
  if (callbacks_.became_leader) callbacks_.became_leader(store_.term);
  if (vol_.role != Role::kLeader) return;  // the callback may have changed things
  broadcast_append();
  maybe_commit();  // a one-member cluster commits at once
}

void RaftNode::hup(bool transfer) {
  if (vol_.role == Role::kLeader) return;
  if (config_.pre_vote && !transfer) {
    // etcd campaign(campaignPreElection): pre-vote for self, then ask
    // everybody else with term + 1.
    become_pre_candidate();
    send_vote_requests(true, false);
    poll_and_maybe_win(node_.id(), true, true);
    return;
  }
  become_candidate(transfer);
  send_vote_requests(false, transfer);
  poll_and_maybe_win(node_.id(), true, false);
}

void RaftNode::send_vote_requests(bool pre, bool transfer) {
  for (NodeId m : config_.members) {
    if (m == node_.id()) continue;
    auto msg = new_message();
    msg->type = pre ? MessageType::kPreVote : MessageType::kVote;
    msg->term = pre ? store_.term + 1 : store_.term;
    msg->index = store_.last_index();
    msg->log_term = store_.last_term();
    msg->transfer = transfer;
    send(m, std::move(msg));
  }
}

void RaftNode::campaign(bool transfer) {
  if (!node_.up()) return;
  hup(transfer);
}

void RaftNode::poll_and_maybe_win(NodeId from, bool granted, bool pre) {
  vol_.votes.emplace(from, granted);  // the first answer of each voter counts
  std::size_t yes = 0, no = 0;
  for (const auto& [id, g] : vol_.votes) (g ? yes : no)++;
  if (yes >= quorum()) {
    if (pre) {
      // etcd: a won pre-vote starts the real election.
      become_candidate(false);
      send_vote_requests(false, false);
      poll_and_maybe_win(node_.id(), true, false);
    } else {
      become_leader();
    }
    return;
  }
  // etcd VoteLost: so many rejections that a quorum is out of reach.
  if (no >= config_.members.size() - quorum() + 1) become_follower(store_.term, sim::kNoNode, "lost election");
}

// ============================================================= messages ==

std::shared_ptr<RaftMessage> RaftNode::new_message() { return sim::make_payload<RaftMessage>(); }

bool RaftNode::step(const sim::Message& msg) {
  const RaftMessage* mp = msg.as<RaftMessage>();
  if (mp == nullptr) return false;
  const RaftMessage& m = *mp;
  const NodeId from = msg.from;
  if (std::find(config_.members.begin(), config_.members.end(), from) == config_.members.end()) return true;

  // etcd raft.go Step: term handling first.
  if (m.term == 0) {
    // Local-style message (MsgReadIndex): no term check.
  } else if (m.term > store_.term) {
    if (m.type == MessageType::kVote || m.type == MessageType::kPreVote) {
      // Leader lease: with CheckQuorum, a member that heard from a leader
      // within the (non-randomized) election timeout ignores a vote request
      // of a higher term, so a rejoining member cannot depose a live leader
      // (etcd: "inLease"; a transfer bypasses it).
      const bool in_lease = vol_.lead != sim::kNoNode && vol_.election_elapsed < election_ticks_;
      if (in_lease && !m.transfer) {
        history_->stats.votes_ignored_in_lease++;
        return true;
      }
    }
    if (m.type == MessageType::kPreVote) {
      // Never change our term in response to a PreVote.
    } else if (m.type == MessageType::kPreVoteResp && !m.reject) {
      // A granted pre-vote carries the term we would campaign in.
    } else if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat) {
      become_follower(m.term, from, "higher term");
    } else {
      become_follower(m.term, sim::kNoNode, "higher term");
    }
  } else if (m.term < store_.term) {
    if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat) {
      // etcd: with CheckQuorum or PreVote, answer a stale leader so it learns
      // the newer term and steps down (a member ignoring it would let it keep
      // trying forever).
      auto r = new_message();
      r->type = MessageType::kAppendResp;
      r->term = store_.term;
      send(from, std::move(r));
    } else if (m.type == MessageType::kPreVote) {
      auto r = new_message();
      r->type = MessageType::kPreVoteResp;
      r->term = store_.term;
      r->reject = true;
      send(from, std::move(r));
    }
    return true;
  }

  if (m.type == MessageType::kVote || m.type == MessageType::kPreVote) {
    handle_vote(from, m);
    return true;
  }
  switch (vol_.role) {
    case Role::kLeader: step_leader(from, m); break;
    case Role::kCandidate:
    case Role::kPreCandidate: step_candidate(from, m); break;
    case Role::kFollower: step_follower(from, m); break;
  }
  return true;
}

bool RaftNode::up_to_date(Index last_index, Term last_term) const {
  // §5.4.1: the candidate's log is at least as up-to-date as ours: a later
  // last term, or the same last term and at least as long.
  if (config_.mutations.disable_up_to_date_check) return true;
  const Term my_term = store_.last_term();
  return last_term > my_term || (last_term == my_term && last_index >= store_.last_index());
}

void RaftNode::handle_vote(NodeId from, const RaftMessage& m) {
  const bool pre = m.type == MessageType::kPreVote;
  // etcd raft.go: we can vote if we already voted for this candidate in this
  // term, or have not voted and know no leader, or it is a pre-vote for a
  // future term (pre-votes do not record anything).
  const bool can_vote = store_.vote == from || (store_.vote == sim::kNoNode && vol_.lead == sim::kNoNode) ||
                        (pre && m.term > store_.term);
  auto r = new_message();
  r->type = pre ? MessageType::kPreVoteResp : MessageType::kVoteResp;
  if (can_vote && up_to_date(m.index, m.log_term)) {
    // The reply carries the term of the request, so a granted pre-vote does
    // not make the pre-candidate step down.
    r->term = m.term;
    if (!pre) {
      vol_.election_elapsed = 0;
      store_.vote = from;  // persisted before the reply leaves (§5.2, Figure 2)
      persist();
    }
  } else {
    r->term = store_.term;
    r->reject = true;
  }
  send(from, std::move(r));
}

void RaftNode::step_leader(NodeId from, const RaftMessage& m) {
  auto it = vol_.progress.find(from);
  switch (m.type) {
    case MessageType::kAppendResp: {
      if (it == vol_.progress.end()) return;
      Progress& pr = it->second;
      pr.recent_active = true;
      if (m.reject) {
        // Back off (etcd maybeDecrTo). A rejection of an index at or below
        // what already matched is stale.
        if (m.index <= pr.match) return;
        pr.next = std::max(pr.match + 1, std::min(m.index, m.reject_hint + 1));
        send_append(from);
        return;
      }
      // A follower never holds more than this leader sent it; the min only
      // keeps a mutated (test-only) run from indexing past our log.
      const Index acked = std::min(m.index, store_.last_index());
      if (acked > pr.match) {
        pr.match = acked;
        pr.next = std::max(pr.next, pr.match + 1);
        const Index before = store_.commit;
        maybe_commit();
        if (vol_.role != Role::kLeader) return;
        // Tell the followers about the new commit index at once (etcd
        // bcastAppend after maybeCommit).
        if (store_.commit > before) {
          broadcast_append();
          return;
        }
      }
      if (pr.next <= store_.last_index()) send_append(from);
      return;
    }
    case MessageType::kHeartbeatResp: {
      if (it == vol_.progress.end()) return;
      Progress& pr = it->second;
      pr.recent_active = true;
      // Retransmission: what the follower has not acknowledged since the last
      // heartbeat is sent again from its match (a simplification of etcd's
      // probe/replicate states, which rely on the transport reporting
      // unreachable peers).
      if (pr.match < store_.last_index()) {
        pr.next = pr.match + 1;
        send_append(from);
      }
      if (m.context != 0) {
        for (ReadRequest& r : vol_.reads) {
          if (r.id == m.context) {
            r.acks.insert(from);
            if (r.acks.size() >= quorum()) release_reads(r.id);
            break;
          }
        }
      }
      return;
    }
    case MessageType::kReadIndex: {
      ReadRequest r;
      r.issued_at = node_.sim().now();
      r.from = from;
      r.remote_ctx = m.context;
      start_read(std::move(r));
      return;
    }
    default: return;  // vote responses of an election already won, stale traffic
  }
}

void RaftNode::step_candidate(NodeId from, const RaftMessage& m) {
  const bool pre = vol_.role == Role::kPreCandidate;
  switch (m.type) {
    case MessageType::kAppend:
      // A leader of our term exists (§5.2): become its follower.
      become_follower(store_.term, from, "leader of this term");
      handle_append(from, m);
      return;
    case MessageType::kHeartbeat:
      become_follower(store_.term, from, "leader of this term");
      handle_heartbeat(from, m);
      return;
    case MessageType::kVoteResp:
      if (!pre) poll_and_maybe_win(from, !m.reject, false);
      return;
    case MessageType::kPreVoteResp:
      if (pre) poll_and_maybe_win(from, !m.reject, true);
      return;
    default: return;
  }
}

void RaftNode::step_follower(NodeId from, const RaftMessage& m) {
  switch (m.type) {
    case MessageType::kAppend:
      vol_.election_elapsed = 0;
      if (vol_.lead != from) {
        if (vol_.lead != sim::kNoNode) fail_forwarded_reads("leader changed");
        vol_.lead = from;
      }
      handle_append(from, m);
      return;
    case MessageType::kHeartbeat:
      vol_.election_elapsed = 0;
      if (vol_.lead != from) {
        if (vol_.lead != sim::kNoNode) fail_forwarded_reads("leader changed");
        vol_.lead = from;
      }
      handle_heartbeat(from, m);
      return;
    case MessageType::kReadIndexResp: {
      auto it = vol_.forwarded.find(m.context);
      if (it == vol_.forwarded.end()) return;
      ReadWait w{m.index, it->second.issued_at, std::move(it->second.done)};
      vol_.forwarded.erase(it);
      vol_.read_waits.push_back(std::move(w));
      answer_waiting_reads();
      return;
    }
    default: return;  // ReadIndex sent to a non-leader, stale vote replies, ...
  }
}

void RaftNode::handle_append(NodeId from, const RaftMessage& m) {
  auto r = new_message();
  r->type = MessageType::kAppendResp;
  r->term = store_.term;
  if (m.index < store_.commit) {
    // Already committed here: say how far we are (etcd handleAppendEntries).
    r->index = store_.commit;
    send(from, std::move(r));
    return;
  }
  const std::optional<Term> prev_term = store_.term_at(m.index);
  if (!prev_term || *prev_term != m.log_term) {
    // Log matching (§5.3, Figure 2 AppendEntries step 2): reject; the hint
    // lets the leader jump back to our last index.
    r->reject = true;
    r->index = m.index;
    r->reject_hint = store_.last_index();
    send(from, std::move(r));
    return;
  }
  // Figure 2 steps 3–4: find the first entry that conflicts with ours,
  // delete it and all that follow, then append what we do not have.
  Index idx = m.index;
  for (std::size_t k = 0; k < m.entries.size(); ++k) {
    ++idx;
    const std::optional<Term> have = store_.term_at(idx);
    if (have && *have == m.entries[k].term) continue;
    if (have) {
      const Index removed = store_.last_index() - idx + 1;
      history_->stats.truncations++;
      history_->stats.entries_truncated += removed;
      RaftEvent e;
      e.at = node_.sim().now();
      e.kind = EventKind::kTruncate;
      e.member = node_.name();
      e.term = store_.term;
      e.index = idx;
      e.commit = store_.commit;
      e.incarnation = node_.incarnation();
      e.detail =
          fmt::format("{} entries from index {} (term {}) replaced by term {}", removed, idx, *have, m.entries[k].term);
      history_->add(std::move(e));
      trace("raft_truncate", {{"from", idx}, {"removed", removed}, {"term", store_.term}});
      store_.log.resize(idx - 1);
      // A correct Raft never gets here with idx <= commit (etcd panics:
      // "entry %d conflict with committed entry"). With a test mutation it
      // can; the checker reports it, and the member forgets what it had
      // committed and applied beyond the cut so the run can go on.
      if (idx <= store_.commit) store_.commit = idx - 1;
      if (idx <= vol_.applied) vol_.applied = idx - 1;
      vol_.synced = std::min(vol_.synced, idx - 1);
    }
    for (; k < m.entries.size(); ++k) store_.log.push_back(m.entries[k]);
    persist();
    break;
  }
  const Index last_new = m.index + m.entries.size();
  commit_to(std::min(m.commit, last_new));
  r->index = last_new;
  send(from, std::move(r));
}

void RaftNode::handle_heartbeat(NodeId from, const RaftMessage& m) {
  // The leader sends min(our match, its commit), so this never runs past
  // what we hold; the min below only guards against a broken leader.
  commit_to(std::min(m.commit, store_.last_index()));
  auto r = new_message();
  r->type = MessageType::kHeartbeatResp;
  r->term = store_.term;
  r->context = m.context;
  send(from, std::move(r));
}

void RaftNode::send_append(NodeId to) {
  Progress& pr = vol_.progress.at(to);
  const Index prev = pr.next - 1;
  auto m = new_message();
  m->type = MessageType::kAppend;
  m->term = store_.term;
  m->index = prev;
  m->log_term = store_.term_at(prev).value_or(0);
  m->commit = store_.commit;
  const Index last = std::min<Index>(store_.last_index(), prev + config_.max_entries_per_append);
  for (Index i = prev + 1; i <= last; ++i) m->entries.push_back(store_.at(i));
  // Optimistic pipelining: the next append continues after these entries; a
  // rejection or a heartbeat response sets `next` back.
  pr.next = last + 1;
  send(to, std::move(m));
}

void RaftNode::broadcast_append() {
  for (NodeId m : config_.members) {
    if (m != node_.id()) send_append(m);
  }
}

void RaftNode::broadcast_heartbeat(std::uint64_t context) {
  for (const auto& [id, pr] : vol_.progress) {
    auto m = new_message();
    m->type = MessageType::kHeartbeat;
    m->term = store_.term;
    // etcd sendHeartbeat: min(match, committed), since the follower may not
    // hold the leader's whole committed prefix yet.
    m->commit = std::min(pr.match, store_.commit);
    m->context = context;
    send(id, std::move(m));
  }
}

// =========================================================== log, commit ==

void RaftNode::append_local(Entry e) {
  store_.log.push_back(std::move(e));
  persist();
}

// ============================================================ WAL fsync ==

void RaftNode::persist() {
  // See "WAL fsync" in raft.hpp. One fsync at a time; changes made at the
  // instant an fsync starts are in it, later ones wait for the next.
  const sim::Duration fsync = config_.wal_fsync;
  if (fsync <= sim::Duration{0}) return;
  const sim::Time now = node_.sim().now();
  if (now >= vol_.sync_busy_until && vol_.sync_next_done > vol_.sync_busy_until) {
    // The queued fsync has started (when the previous one ended).
    vol_.sync_started = vol_.sync_busy_until;
    vol_.sync_busy_until = vol_.sync_next_done;
  }
  sim::Time done{0};
  if (now == vol_.sync_started) {
    done = vol_.sync_busy_until;  // started this instant: it takes this change too
  } else if (now < vol_.sync_busy_until) {
    if (vol_.sync_next_done <= vol_.sync_busy_until) vol_.sync_next_done = vol_.sync_busy_until + fsync;
    done = vol_.sync_next_done;
  } else {
    vol_.sync_started = now;
    vol_.sync_busy_until = done = now + fsync;
  }
  vol_.hold_until = std::max(vol_.hold_until, done);
  const Index last = store_.last_index();
  node_.after(done - now, [this, last] {
    const Index on_disk = std::min(last, store_.last_index());
    if (on_disk <= vol_.synced) return;
    vol_.synced = on_disk;
    if (vol_.role == Role::kLeader) maybe_commit();
  });
}

Index RaftNode::own_match() const {
  return config_.wal_fsync > sim::Duration{0} ? std::min(vol_.synced, store_.last_index()) : store_.last_index();
}

void RaftNode::send(NodeId to, std::shared_ptr<RaftMessage> m) {
  if (vol_.stalled) {
    vol_.stall_held.push_back([this, to, m = std::move(m)]() mutable { send(to, std::move(m)); });
    return;
  }
  // etcd raftNode.start: a follower or candidate sends a Ready's messages
  // after its Save; the leader sends before it saves.
  if (config_.wal_fsync > sim::Duration{0} && vol_.role != Role::kLeader) {
    const sim::Time now = node_.sim().now();
    if (now < vol_.hold_until || vol_.held > 0) {
      ++vol_.held;
      node_.after(std::max(vol_.hold_until - now, sim::Duration{0}), [this, to, m = std::move(m)]() mutable {
        --vol_.held;
        node_.send(to, std::move(m));
      });
      return;
    }
  }
  node_.send(to, std::move(m));
}

std::optional<Index> RaftNode::propose(Command command) {
  if (command.empty()) throw sim::ModelBug("raft: empty commands are reserved for the leader's empty entry");
  if (!node_.up() || vol_.role != Role::kLeader) return std::nullopt;
  append_local(Entry{store_.term, std::move(command)});
  history_->stats.proposals++;
  const Index index = store_.last_index();
  for (auto& [id, pr] : vol_.progress) {
    if (pr.next <= index) send_append(id);
  }
  maybe_commit();
  return index;
}

void RaftNode::maybe_commit() {
  if (vol_.role != Role::kLeader) return;
  // The largest index held by a quorum: sort every member's match (our own
  // is our last index, persisted already; with wal_fsync, our last synced
  // index) and take the quorum-th largest.
  // (A buffer kept between calls: this runs on every append response.)
  std::vector<Index>& match = match_scratch_;
  match.clear();
  match.push_back(own_match());
  for (const auto& [id, pr] : vol_.progress) match.push_back(pr.match);
  // Insertion sort, largest first: a cluster has a handful of members.
  for (std::size_t i = 1; i < match.size(); ++i) {
    const Index v = match[i];
    std::size_t j = i;
    for (; j > 0 && match[j - 1] < v; --j) match[j] = match[j - 1];
    match[j] = v;
  }
  const Index q = match[quorum() - 1];
  if (q <= store_.commit) return;
  // §5.4.2: "Raft never commits log entries from previous terms by counting
  // replicas. Only log entries from the leader's current term are committed
  // by counting replicas" (etcd raftLog.maybeCommit: term(maxIndex) == term).
  if (store_.term_at(q) != store_.term) {
    if (!config_.mutations.disable_current_term_commit_rule) return;
    history_->stats.old_term_commits_by_counting++;
  }
  commit_to(q);
}

bool RaftNode::committed_in_current_term() const { return store_.term_at(store_.commit) == store_.term; }

void RaftNode::commit_to(Index c) {
  if (c <= store_.commit) return;
  const Index from = store_.commit + 1;
  store_.commit = c;  // persisted (etcd HardState.Commit)
  for (Index i = from; i <= c; ++i) {
    const Entry& e = store_.at(i);
    record(EventKind::kCommit, e.term, i, e.command);
  }
  apply_committed();
  if (vol_.role == Role::kLeader && !vol_.reads_before_commit.empty() && committed_in_current_term()) {
    std::vector<ReadRequest> held = std::move(vol_.reads_before_commit);
    vol_.reads_before_commit.clear();
    for (ReadRequest& r : held) start_read(std::move(r));
  }
}

void RaftNode::apply_committed() {
  if (vol_.stalled) return;  // applied at the stall's end
  while (vol_.applied < store_.commit) {
    const Index i = ++vol_.applied;
    const Entry e = store_.at(i);  // a copy: the callback may append to the log
    record(EventKind::kApply, e.term, i, e.command);
    if (callbacks_.apply) callbacks_.apply(i, e.term, e.command);
  }
  answer_waiting_reads();
}

// ================================================================ stall ==

void RaftNode::stall() {
  if (!node_.up() || vol_.stalled) return;
  vol_.stalled = true;
  trace("raft_stall", {{"term", store_.term}, {"role", role_name(vol_.role)}});
}

void RaftNode::after_stall(std::function<void()> action) {
  if (vol_.stalled) {
    vol_.stall_held.push_back(std::move(action));
  } else {
    action();
  }
}

void RaftNode::end_stall() {
  if (!vol_.stalled) return;
  vol_.stalled = false;
  trace("raft_stall_end", {{"term", store_.term}, {"role", role_name(vol_.role)}, {"held", vol_.stall_held.size()}});
  std::vector<std::function<void()>> held = std::move(vol_.stall_held);
  vol_.stall_held.clear();
  for (auto& action : held) action();
  apply_committed();
}

// ================================================================ reads ==

void RaftNode::read_index(ReadCallback done) {
  if (!node_.up()) return;
  if (vol_.role == Role::kLeader) {
    ReadRequest r;
    r.issued_at = node_.sim().now();
    r.done = std::move(done);
    start_read(std::move(r));
    return;
  }
  if (vol_.lead == sim::kNoNode) {
    done(ReadResult{false, 0, "no leader", sim::kNoNode});
    return;
  }
  // etcd stepFollower MsgReadIndex: forward to the leader.
  const std::uint64_t id = vol_.next_read_id++;
  vol_.forwarded.emplace(id, Forwarded{node_.sim().now(), std::move(done)});
  auto m = new_message();
  m->type = MessageType::kReadIndex;
  m->term = 0;
  m->context = id;
  send(vol_.lead, std::move(m));
}

void RaftNode::start_read(ReadRequest r) {
  if (!committed_in_current_term()) {
    // etcd ≥ 3.5: a new leader does not know the commit index of the
    // previous term until it commits its own empty entry; hold the read.
    vol_.reads_before_commit.push_back(std::move(r));
    return;
  }
  r.id = vol_.next_read_id++;
  r.index = store_.commit;
  r.acks.insert(node_.id());
  const std::uint64_t id = r.id;
  vol_.reads.push_back(std::move(r));
  if (vol_.reads.back().acks.size() >= quorum()) {
    release_reads(id);  // a one-member cluster
    return;
  }
  broadcast_heartbeat(id);
}

void RaftNode::release_reads(std::uint64_t up_to_id) {
  // etcd readOnly.advance: a quorum acknowledged a heartbeat sent after this
  // request, and so after every earlier one too.
  std::vector<ReadRequest> done;
  auto it = vol_.reads.begin();
  while (it != vol_.reads.end() && it->id <= up_to_id) ++it;
  done.assign(std::make_move_iterator(vol_.reads.begin()), std::make_move_iterator(it));
  vol_.reads.erase(vol_.reads.begin(), it);
  for (ReadRequest& r : done) {
    if (r.from != sim::kNoNode) {
      auto m = new_message();
      m->type = MessageType::kReadIndexResp;
      m->term = store_.term;
      m->index = r.index;
      m->context = r.remote_ctx;
      send(r.from, std::move(m));
    } else {
      vol_.read_waits.push_back(ReadWait{r.index, r.issued_at, std::move(r.done)});
    }
  }
  answer_waiting_reads();
}

void RaftNode::answer_waiting_reads() {
  if (vol_.stalled) return;  // answered when the stall ends (end_stall applies and answers)
  if (vol_.read_waits.empty()) return;
  std::vector<ReadWait> ready;
  std::vector<ReadWait> rest;
  for (ReadWait& w : vol_.read_waits) (w.index <= vol_.applied ? ready : rest).push_back(std::move(w));
  vol_.read_waits = std::move(rest);
  for (ReadWait& w : ready) {
    history_->stats.reads_answered++;
    RaftEvent e;
    e.at = node_.sim().now();
    e.kind = EventKind::kRead;
    e.member = node_.name();
    e.term = store_.term;
    e.index = w.index;
    e.incarnation = node_.incarnation();
    e.issued_at = w.issued_at;
    history_->add(std::move(e));
    if (w.done) w.done(ReadResult{true, w.index, "", vol_.lead});
  }
}

void RaftNode::fail_leader_reads(const char* why) {
  std::vector<ReadRequest> all = std::move(vol_.reads);
  for (ReadRequest& r : vol_.reads_before_commit) all.push_back(std::move(r));
  vol_.reads.clear();
  vol_.reads_before_commit.clear();
  for (ReadRequest& r : all) {
    if (!r.done) continue;
    // ReadStates reach the layer through a Ready: held while stalled.
    after_stall([done = std::move(r.done), res = ReadResult{false, 0, why, vol_.lead}] { done(res); });
  }
}

void RaftNode::fail_forwarded_reads(const char* why) {
  std::map<std::uint64_t, Forwarded> all = std::move(vol_.forwarded);
  vol_.forwarded.clear();
  for (auto& [id, f] : all) {
    if (!f.done) continue;
    after_stall([done = std::move(f.done), res = ReadResult{false, 0, why, sim::kNoNode}] { done(res); });
  }
}

// ============================================================ recording ==

void RaftNode::record(EventKind kind, Term term, Index index, const Command& command, std::string_view detail) {
  if (!history_->record_events) return;
  // Built in place: two events per entry per member (commit and apply).
  RaftEvent& e = history_->events.emplace_back();
  e.at = node_.sim().now();
  e.kind = kind;
  e.member = node_.name();
  e.term = term;
  e.index = index;
  e.command = command;
  e.commit = store_.commit;
  e.incarnation = node_.incarnation();
  if (!detail.empty()) e.detail = detail;
}

void RaftNode::trace(std::string_view kind, std::initializer_list<sim::TraceField> fields) {
  node_.sim().record(node_.name(), kind, fields);
}

}  // namespace fencesim::raft
