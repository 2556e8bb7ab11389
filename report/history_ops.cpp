// report/history_ops.cpp — the History as invoke/complete operations
// (history_ops.hpp). Pure: reads the History, writes nothing.
#include "report/history_ops.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace fencesim::history_export {

namespace {

/// Client name → index into Scenario::clients (the process numbering).
std::map<std::string, std::size_t> client_indices(const Scenario& s) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < s.clients.size(); ++i) out.emplace(s.clients[i].name, i);
  return out;
}

/// When the client asked for the lock it came to believe it held at `start`:
/// its iteration's first acquire request; `start` itself when no iteration
/// records one (a leader that still held the lock, a renewal).
sim::Time acquire_invoked(const History& h, const std::string& client, sim::Time start) {
  for (const IterationRecord& it : h.iterations) {
    if (it.client == client && it.acquired && *it.acquired == start && it.acquire_sent) return *it.acquire_sent;
  }
  return start;
}

/// A belief as knossos' mutex sees it: :acquire from the request to the
/// grant; at its end a :release — :ok when the client released, :info when
/// the belief ended any other way (a crash, a refused renewal, its own
/// lease_loss_after): the lock became free at the service at some time the
/// client never saw. A belief still held at the end of the run has no release.
void add_belief(const History& h, const BeliefRecord& b, std::size_t client, std::vector<Op>& ops) {
  const std::string key = b.message_id.empty() ? b.lock : b.message_id;
  Op acquire;
  acquire.kind = OpKind::kAcquire;
  acquire.client = client;
  acquire.invoke = acquire_invoked(h, b.client, b.start);
  acquire.complete = b.start;
  acquire.key = key;
  ops.push_back(acquire);
  if (!b.end) return;
  Op release;
  release.kind = OpKind::kRelease;
  release.outcome = b.end_reason == "release" ? Outcome::kOk : Outcome::kInfo;
  release.client = client;
  release.invoke = *b.end;
  release.complete = *b.end;
  release.key = key;
  ops.push_back(release);
}

/// A grant the client never handled (paused or crashed before the reply
/// reached it, or the reply lost): the service's lock changed hands, the
/// client never knew. Jepsen writes such an op :info — it may have taken
/// effect; the client has no belief, so it has no release either.
void add_unseen_grants(const History& h, const std::map<std::string, std::size_t>& index, std::vector<Op>& ops) {
  std::set<std::pair<std::string, std::string>> believed;
  for (const BeliefRecord& b : h.beliefs) believed.emplace(b.client, b.value);
  for (const GrantRecord& g : h.grants) {
    auto it = index.find(g.client);
    if (it == index.end() || believed.contains({g.client, g.value})) continue;
    Op acquire;
    acquire.kind = OpKind::kAcquire;
    acquire.outcome = Outcome::kInfo;
    acquire.client = it->second;
    acquire.invoke = g.at;
    acquire.complete = g.at;
    acquire.key = g.lock;
    ops.push_back(acquire);
  }
}

/// A register read or write at the copy: invoked when the client sent it,
/// completed when the copy answered (the instant it took effect, or was
/// refused). A write is the :cas the client meant under its lock: replace
/// the value it read with the new one.
void add_resource_op(const ResourceOpRecord& r, std::size_t client, std::vector<Op>& ops) {
  Op op;
  op.kind = r.kind == ResourceOpKind::kRead ? OpKind::kRead : OpKind::kCas;
  op.outcome = r.accepted ? Outcome::kOk : Outcome::kFail;
  op.client = client;
  op.invoke = std::min(r.sent, r.at);
  op.complete = r.at;
  op.value = r.value;
  op.expected = r.read_value;
  op.key = r.lock;
  ops.push_back(op);
}

/// Jepsen's rule that a process has one operation open at a time, and that
/// a process whose op ended :info is not used again.
void assign_processes(std::size_t clients, std::vector<Op>& ops) {
  struct Last {
    int process = 0;
    sim::Time complete{0};
    bool open = false;  ///< its last op ended :info, or none yet
    bool any = false;
  };
  std::vector<Last> last(clients);
  for (std::size_t i = 0; i < clients; ++i) last[i].process = static_cast<int>(i);
  int next = static_cast<int>(clients);
  for (Op& op : ops) {
    Last& l = last[op.client];
    if (l.any && (l.open || l.complete > op.invoke)) l.process = next++;
    op.process = l.process;
    l.complete = op.complete;
    l.open = op.outcome == Outcome::kInfo;
    l.any = true;
  }
}

}  // namespace

std::vector<Op> build_ops(const Scenario& s, const History& h) {
  const std::map<std::string, std::size_t> index = client_indices(s);
  std::vector<Op> ops;
  for (const BeliefRecord& b : h.beliefs) {
    auto it = index.find(b.client);
    if (it != index.end()) add_belief(h, b, it->second, ops);
  }
  add_unseen_grants(h, index, ops);
  for (const ResourceOpRecord& r : h.resource_ops) {
    if (r.kind != ResourceOpKind::kRead && r.kind != ResourceOpKind::kWrite) continue;
    if (!r.message_id.empty()) continue;  // the queue's ledger: not a register
    auto it = index.find(r.client);
    if (it != index.end()) add_resource_op(r, it->second, ops);
  }
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.invoke < b.invoke; });
  assign_processes(s.clients.size(), ops);
  return ops;
}

std::vector<Event> order_events(const std::vector<Op>& ops) {
  std::vector<Event> events;
  events.reserve(ops.size() * 2);
  for (const Op& op : ops) {
    events.push_back(Event{&op, false, op.invoke});
    events.push_back(Event{&op, true, op.complete});
  }
  // Ops are in invoke order, so an op's position breaks ties in time; the
  // sort is stable, so an op's invocation stays before its completion.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  return events;
}

}  // namespace fencesim::history_export
