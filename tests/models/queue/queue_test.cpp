// The work queue's SQS semantics (models/queue/queue.hpp) through whole
// runs: a stale receipt's delete on a standard and on a FIFO queue, an
// extension with a stale receipt, the dead-letter queue, a crash of the
// durable queue, a clock jump on the queue, and the ledger kinds.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/checkers/checkers.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

const Verdict& verdict(const RunResult& r, Property p) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == p) return v;
  }
  throw std::out_of_range("no verdict");
}

/// Two workers, a 10 s visibility timeout; A receives msg-0 first and is
/// paused for 11 s at 1 s (its work takes `a_work`), B starts at 100 ms.
Scenario paused_worker(ResourceKind kind, Duration a_work = 3s, int messages = 2) {
  Scenario s;
  s.name = "queue-test";
  s.duration = 40s;
  s.settle = 15s;
  s.lock.set_service(ServiceKind::kQueue);
  s.lock.queue().visibility_timeout = 10s;
  s.lock.queue().messages = messages;
  s.lock.ttl = s.lock.requested_ttl = 10s;
  s.resource.kind = kind;
  for (const char* n : {"A", "B"}) {
    ClientSpec c;
    c.name = n;
    c.workload.kind = WorkloadKind::kQueueWorker;
    c.workload.iterations = 5;
    c.workload.work = n[0] == 'A' ? a_work : 5s;
    c.renew_interval = kResolveRenewInterval;
    if (n[0] == 'B') c.start = 100ms;
    s.clients.push_back(c);
  }
  FaultSpec f;
  f.at = 1s;
  f.kind = FaultKind::kPause;
  f.target = "A";
  f.duration = 11s;
  f.origin = "faults[0]";
  s.faults.push_back(f);
  resolve_scenario(s);
  return s;
}

std::size_t notes_of(const History& h, const std::string& kind) {
  return static_cast<std::size_t>(
      std::count_if(h.notes.begin(), h.notes.end(), [&](const NoteRecord& n) { return n.kind == kind; }));
}

const BeliefRecord& belief(const History& h, const std::string& client, const std::string& receipt) {
  for (const BeliefRecord& b : h.beliefs) {
    if (b.client == client && b.value == receipt) return b;
  }
  throw std::out_of_range("no belief of " + client + " with " + receipt);
}

TEST(Queue, ReceiveHandsOutANewReceiptAndCountsReceives) {
  const RunResult r = run_scenario(paused_worker(ResourceKind::kUnfenced));
  ASSERT_EQ(r.history.messages.size(), 2u);
  EXPECT_EQ(r.history.messages[0].receives, 2);  // A, then B after the timeout ran out
  EXPECT_EQ(r.history.messages[1].receives, 1);
  EXPECT_EQ(belief(r.history, "A", "msg-0#1").token, 1);
  EXPECT_EQ(belief(r.history, "B", "msg-0#2").token, 2);
  // The first receipt's visibility ended at the queue 10 s after the receive.
  const LeaseEndRecord& end = r.history.lease_ends.at("msg-0#1");
  EXPECT_EQ(end.reason, "visibility timeout ran out on queue's wall clock");
  EXPECT_EQ(end.at, belief(r.history, "A", "msg-0#1").start - 1ms + 10s);
}

TEST(Queue, StaleDeleteOnAStandardQueueSucceedsWithoutDeleting) {
  const RunResult r = run_scenario(paused_worker(ResourceKind::kUnfenced));
  // A deleted with msg-0#1 at 12 s: answered success, nothing deleted; B deleted it.
  EXPECT_EQ(belief(r.history, "A", "msg-0#1").end_reason, "delete sent");
  EXPECT_EQ(notes_of(r.history, "delete_refused"), 0u);
  ASSERT_TRUE(r.history.messages[0].deleted);
  EXPECT_EQ(r.history.messages[0].deleted_by, "B");
  EXPECT_GT(*r.history.messages[0].deleted, 15s);
  EXPECT_EQ(verdict(r, Property::kNoDuplicateEffect).status, Status::kViolated);
}

TEST(Queue, StaleDeleteOnAFifoQueueFails) {
  Scenario s = paused_worker(ResourceKind::kUnfenced);
  s.lock.queue().fifo = true;
  const RunResult r = run_scenario(s);
  ASSERT_EQ(notes_of(r.history, "delete_refused"), 1u);
  const auto it = std::find_if(r.history.notes.begin(), r.history.notes.end(),
                               [](const NoteRecord& n) { return n.kind == "delete_refused"; });
  EXPECT_EQ(it->node, "A");
  EXPECT_NE(it->text.find("InvalidParameterValue"), std::string::npos) << it->text;
  EXPECT_EQ(r.history.messages[0].deleted_by, "B");
}

TEST(Queue, FifoHandsOutNothingWhileAnEarlierMessageIsInFlight) {
  Scenario s = paused_worker(ResourceKind::kUnfenced);
  s.lock.queue().fifo = true;
  const RunResult r = run_scenario(s);
  // B could not take msg-1 while msg-0 was in flight with A: its first
  // message is msg-0, after A's visibility ran out.
  const auto first_b = std::find_if(r.history.grants.begin(), r.history.grants.end(),
                                    [](const GrantRecord& g) { return g.client == "B"; });
  ASSERT_NE(first_b, r.history.grants.end());
  EXPECT_EQ(first_b->value, "msg-0#2");
  EXPECT_GE(first_b->at, r.history.lease_ends.at("msg-0#1").at);
}

TEST(Queue, AnExtensionWithAStaleReceiptIsRefusedAndEndsTheBelief) {
  // A's work outlasts its pause: its overdue extension goes out first, after
  // B holds msg-0#2, and is refused.
  const RunResult r = run_scenario(paused_worker(ResourceKind::kUnfenced, 20s));
  const BeliefRecord& a = belief(r.history, "A", "msg-0#1");
  EXPECT_EQ(a.end_reason, "extension refused");
  EXPECT_EQ(r.history.lease_losses, 1);
  const auto refused = std::count_if(r.history.renewals.begin(), r.history.renewals.end(),
                                     [](const RenewalRecord& x) { return x.client == "A" && !x.success; });
  EXPECT_EQ(refused, 1);
}

TEST(Queue, AnExtensionKeepsTheMessageInvisible) {
  Scenario s = paused_worker(ResourceKind::kUnfenced, 25s);
  s.faults.clear();
  s.notes.clear();
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  // A works 25 s under a 10 s timeout, extending every 3.3 s: nobody else receives msg-0.
  EXPECT_EQ(r.history.messages[0].receives, 1);
  EXPECT_EQ(r.history.messages[0].deleted_by, "A");
  EXPECT_EQ(verdict(r, Property::kMutualExclusion).status, Status::kHolds);
  EXPECT_EQ(verdict(r, Property::kNoDuplicateEffect).status, Status::kHolds);
}

TEST(Queue, PastMaxReceivesAMessageGoesToTheDeadLetterQueue) {
  Scenario s = paused_worker(ResourceKind::kUnfenced, 3s, 1);
  s.lock.queue().max_receives = 1;
  const RunResult r = run_scenario(s);
  ASSERT_TRUE(r.history.messages[0].dead_lettered);
  EXPECT_FALSE(r.history.messages[0].deleted);  // A's delete came after the move
  EXPECT_EQ(r.history.messages[0].receives, 1);
  EXPECT_EQ(notes_of(r.history, "dead_letter"), 1u);
  const Verdict& p = verdict(r, Property::kProgress);
  EXPECT_EQ(p.status, Status::kViolated);
  EXPECT_NE(p.summary.find("dead-letter"), std::string::npos) << p.summary;
  EXPECT_NE(p.summary.find("dead-lettered: msg-0"), std::string::npos) << p.summary;
}

TEST(Queue, ACrashedQueueKeepsItsMessages) {
  Scenario s = paused_worker(ResourceKind::kIdempotent, 1s, 4);
  s.faults[0].kind = FaultKind::kCrash;
  s.faults[0].target = "queue";
  s.faults[0].duration.reset();
  s.faults[0].restart_after = 3s;
  s.notes.clear();
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  for (const MessageRecord& m : r.history.messages) EXPECT_TRUE(m.deleted) << m.id;
  EXPECT_EQ(verdict(r, Property::kNoDuplicateEffect).status, Status::kHolds);
  EXPECT_EQ(verdict(r, Property::kProgress).status, Status::kHolds) << verdict(r, Property::kProgress).summary;
}

TEST(Queue, AClockJumpOnTheQueueEndsVisibilityEarly) {
  Scenario s = paused_worker(ResourceKind::kUnfenced);
  s.faults[0].kind = FaultKind::kClockJump;
  s.faults[0].target = "queue";
  s.faults[0].duration.reset();
  s.faults[0].by = 20s;
  s.faults[0].clock = ClockSelect::kWall;
  s.notes.clear();
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  // The jump at 1 s passes msg-0#1's deadline (10 s) at once.
  EXPECT_EQ(r.history.lease_ends.at("msg-0#1").at, Time{1s});
}

TEST(Queue, TheLedgerKinds) {
  // fenced alone: the stale effect (count 1) arrives first and both apply.
  const RunResult fenced = run_scenario(paused_worker(ResourceKind::kFenced));
  EXPECT_EQ(verdict(fenced, Property::kNoDuplicateEffect).status, Status::kViolated);
  // fenced, the newer effect first (A works 20 s): the stale one is refused.
  const RunResult late = run_scenario(paused_worker(ResourceKind::kFenced, 20s));
  EXPECT_EQ(verdict(late, Property::kNoDuplicateEffect).status, Status::kHolds);
  const auto refused = std::find_if(late.history.resource_ops.begin(), late.history.resource_ops.end(),
                                    [](const ResourceOpRecord& op) { return op.client == "A" && !op.accepted; });
  ASSERT_NE(refused, late.history.resource_ops.end());
  EXPECT_EQ(refused->reason, "receive count 1 <= highest 2 of msg-0");
  // idempotent: once per message; the second is "already applied" and B deletes.
  const RunResult idem = run_scenario(paused_worker(ResourceKind::kIdempotent));
  EXPECT_EQ(verdict(idem, Property::kNoDuplicateEffect).status, Status::kHolds);
  EXPECT_EQ(idem.history.messages[0].deleted_by, "B");
  const auto already = std::count_if(idem.history.resource_ops.begin(), idem.history.resource_ops.end(),
                                     [](const ResourceOpRecord& op) { return op.reason == "already applied"; });
  EXPECT_EQ(already, 1);
  // fenced + idempotent: the same.
  Scenario both = paused_worker(ResourceKind::kFenced);
  both.resource.idempotent = true;
  const RunResult fi = run_scenario(both);
  EXPECT_EQ(verdict(fi, Property::kNoDuplicateEffect).status, Status::kHolds);
}

TEST(Queue, PropertiesThatApply) {
  const Scenario s = paused_worker(ResourceKind::kUnfenced);
  EXPECT_TRUE(property_applies(s, Property::kMutualExclusion));
  EXPECT_TRUE(property_applies(s, Property::kNoStaleWrite));
  EXPECT_TRUE(property_applies(s, Property::kProgress));
  EXPECT_TRUE(property_applies(s, Property::kNoDuplicateEffect));
  EXPECT_FALSE(property_applies(s, Property::kNoLostUpdate));
  EXPECT_FALSE(property_applies(s, Property::kTokenMonotonic));
  EXPECT_FALSE(property_applies(s, Property::kRaftSafety));
  Scenario redis = s;
  redis.lock.set_service(ServiceKind::kRedis);
  EXPECT_FALSE(property_applies(redis, Property::kNoDuplicateEffect));
}

}  // namespace
}  // namespace fencesim

namespace fencesim {
namespace {

TEST(QueueNotes, MoreMessagesThanTheWorkersCanEverReceiveGetANote) {
  // Two workers of 5 iterations each receive at most 10 messages.
  Scenario fits = paused_worker(ResourceKind::kUnfenced, 3s, 10);
  EXPECT_TRUE(std::none_of(fits.notes.begin(), fits.notes.end(),
                           [](const std::string& n) { return n.find("never handled") != std::string::npos; }));
  Scenario over = paused_worker(ResourceKind::kUnfenced, 3s, 12);
  const auto it = std::find_if(over.notes.begin(), over.notes.end(),
                               [](const std::string& n) { return n.find("never handled") != std::string::npos; });
  ASSERT_NE(it, over.notes.end());
  EXPECT_EQ(*it,
            "lock.messages is 12 but the 2 workers run at most 10 iterations in all (one message each): at least 2 "
            "messages are never handled; raise the workers' iterations or add workers");
}

}  // namespace
}  // namespace fencesim
