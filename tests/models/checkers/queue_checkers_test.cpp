// The queue design's checkers over hand-made histories:
// no_duplicate_effect (models/checkers/no_duplicate_effect.cpp), progress per
// message (queue_progress.cpp) and mutual_exclusion per message.
#include <gtest/gtest.h>

#include "models/checkers/checkers.hpp"

namespace fencesim {
namespace {

ResourceOpRecord effect(Time at, std::string client, std::string msg, std::string receipt, bool accepted = true) {
  ResourceOpRecord op;
  op.at = at;
  op.client = std::move(client);
  op.copy = "resource";
  op.kind = ResourceOpKind::kWrite;
  op.write = true;
  op.accepted = accepted;
  op.message_id = std::move(msg);
  op.receipt = receipt;
  op.lease_value = std::move(receipt);
  if (!accepted) op.reason = "already applied";
  return op;
}

CheckContext no_faults(Time end) {
  CheckContext c;
  c.run_end = end;
  return c;
}

TEST(NoDuplicateEffect, OneApplicationPerMessageHolds) {
  History h;
  h.resource_ops.push_back(effect(Time{1s}, "A", "msg-0", "msg-0#1"));
  h.resource_ops.push_back(effect(Time{2s}, "B", "msg-1", "msg-1#1"));
  h.resource_ops.push_back(effect(Time{3s}, "B", "msg-0", "msg-0#2", false));  // "already applied"
  const Verdict v = check_no_duplicate_effect(h);
  EXPECT_EQ(v.status, Status::kHolds) << v.summary;
  EXPECT_EQ(v.checked, 2);
}

TEST(NoDuplicateEffect, TheSecondApplicationIsTheViolation) {
  History h;
  h.grant(Time{0s}, "A", "msg-0#1", 1, "queue");
  h.grant(Time{10s}, "B", "msg-0#2", 2, "queue");
  h.lease_end(Time{10s}, "msg-0#1", "visibility timeout ran out on queue's wall clock", LeaseEndCause::kExpired);
  h.resource_ops.push_back(effect(Time{12s}, "A", "msg-0", "msg-0#1"));
  h.resource_ops.push_back(effect(Time{15s}, "B", "msg-0", "msg-0#2"));
  const Verdict v = check_no_duplicate_effect(h);
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, Time{15s});
  EXPECT_EQ(v.summary,
            "the effect of msg-0 was applied twice: by A at 12.000000s (receipt msg-0#1) and by B at 15.000000s "
            "(receipt msg-0#2)");
  ASSERT_EQ(v.story.size(), 5u);
  EXPECT_EQ(v.story[0], "1. 0.000000s: queue handed msg-0 to A (receipt msg-0#1, receive count 1)");
  EXPECT_EQ(v.story[4], "5. 15.000000s: resource applied the effect of msg-0 from B (receipt msg-0#2, no token)");
}

TEST(QueueProgress, EveryMessageAppliedAndDeletedWithinSettle) {
  History h;
  h.messages.push_back(MessageRecord{"msg-0", 1, Time{2s}, "A", std::nullopt});
  h.resource_ops.push_back(effect(Time{1s}, "A", "msg-0", "msg-0#1"));
  const Verdict v = check_queue_progress(h, no_faults(Time{30s}), 10s);
  EXPECT_EQ(v.status, Status::kHolds) << v.summary;
  EXPECT_EQ(v.checked, 1);
}

TEST(QueueProgress, ADeadLetteredMessageIsNamed) {
  History h;
  h.messages.push_back(MessageRecord{"msg-0", 1, Time{2s}, "A", std::nullopt});
  h.messages.push_back(MessageRecord{"msg-1", 3, std::nullopt, "", Time{5s}});
  h.resource_ops.push_back(effect(Time{1s}, "A", "msg-0", "msg-0#1"));
  const Verdict v = check_queue_progress(h, no_faults(Time{30s}), 10s);
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.summary,
            "msg-1 was not applied and deleted within the settle time 10s from the start: it was moved to the "
            "dead-letter queue at 5.000000s after 3 receives; dead-lettered: msg-1");
}

TEST(QueueProgress, DeletedWithoutAnAppliedEffectIsNotProgress) {
  History h;
  h.messages.push_back(MessageRecord{"msg-0", 1, Time{2s}, "A", std::nullopt});
  h.resource_ops.push_back(effect(Time{1s}, "A", "msg-0", "msg-0#1", false));
  EXPECT_EQ(check_queue_progress(h, no_faults(Time{30s}), 10s).status, Status::kViolated);
}

TEST(QueueProgress, VacuousWhenTheSettleTimeRunsPastTheEnd) {
  History h;
  h.messages.push_back(MessageRecord{"msg-0", 0, std::nullopt, "", std::nullopt});
  const Verdict v = check_queue_progress(h, no_faults(Time{5s}), 10s);
  EXPECT_EQ(v.status, Status::kHolds);
  EXPECT_EQ(v.checked, 0);
}

TEST(QueueMutualExclusion, OnlyBeliefsOfTheSameMessageConflict) {
  History h;
  h.begin_belief(Time{0s}, "A", "msg-0#1", 1, "msg-0");
  h.begin_belief(Time{1s}, "B", "msg-1#1", 1, "msg-1");
  EXPECT_EQ(check_mutual_exclusion(h, no_faults(Time{10s})).status, Status::kHolds);
  h.begin_belief(Time{2s}, "C", "msg-0#2", 2, "msg-0");
  const Verdict v = check_mutual_exclusion(h, no_faults(Time{10s}));
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.summary, "A and C both believed they held msg-0 from 2.000000s to 10.000000s (8s)");
}

}  // namespace
}  // namespace fencesim
