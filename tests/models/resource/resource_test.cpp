// The fenced resource's rules (docs/FORMAT.md `resource`), driven
// directly: a client node sends reads and writes to a copy and we look at the
// answers, the marks and the History.
#include <gtest/gtest.h>

#include "models/resource/resource.hpp"
#include "sim/simulation.hpp"

namespace fencesim::resource {
namespace {

using namespace std::chrono_literals;

struct Op {
  bool write;
  std::optional<std::int64_t> token;
  std::int64_t value = 0;
  std::optional<std::int64_t> expected_version{};
};

/// A world with one client "C" and the resource copies; runs `ops` in order
/// against copy `target` and returns whether each was accepted.
class ResourceHarness {
 public:
  explicit ResourceHarness(ResourceSpec spec) : spec_(spec) {
    client_ = sim_.add_node("C").id();
    copies_.push_back(sim_.add_node("resource").id());
    for (int i = 0; i < spec.replicas; ++i)
      copies_.push_back(sim_.add_node("resource-replica-" + std::to_string(i)).id());
    svc_ = std::make_unique<ResourceService>(sim_, history_, spec_, copies_);
  }

  std::vector<bool> run(const std::vector<Op>& ops, std::size_t target = 0, sim::Duration gap = 0s) {
    std::vector<bool> out;
    sim_.node(client_).spawn("ops", [&](sim::Process& p) {
      for (const Op& op : ops) {
        sim::PayloadPtr req;
        if (op.write) {
          auto w = std::make_shared<WriteRequest>();
          w->token = op.token;
          w->value = op.value;
          w->expected_version = op.expected_version;
          req = w;
        } else {
          auto r = std::make_shared<ReadRequest>();
          r->token = op.token;
          req = r;
        }
        auto reply = p.call(copies_[target], req, 1s);
        out.push_back(reply && reply->as<OpReply>()->accepted);
        if (gap > 0s) p.sleep(gap);
      }
    });
    sim_.run_until(sim_.now() + 60s);
    return out;
  }

  sim::Simulation sim_{1};
  History history_;
  ResourceSpec spec_;
  sim::NodeId client_;
  std::vector<sim::NodeId> copies_;
  std::unique_ptr<ResourceService> svc_;
};

ResourceSpec fenced(FenceCheck check, bool fence_reads = false) {
  ResourceSpec s;
  s.kind = ResourceKind::kFenced;
  s.check = check;
  s.fence_reads = fence_reads;
  return s;
}

TEST(Resource, UnfencedAcceptsEveryWriteWhateverTheToken) {
  ResourceSpec s;
  s.kind = ResourceKind::kUnfenced;
  ResourceHarness h(s);
  EXPECT_EQ(h.run({{true, 5, 1}, {true, 1, 2}, {true, std::nullopt, 3}}), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(h.svc_->copy(0).value(), 3);
}

TEST(Resource, StrictCheckRejectsAnEqualOrLowerToken) {
  ResourceHarness h(fenced(FenceCheck::kStrict));
  EXPECT_EQ(h.run({{true, 2, 1}, {true, 2, 2}, {true, 1, 3}, {true, 3, 4}}),
            (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(h.svc_->copy(0).last_written(), 3);
  EXPECT_EQ(h.svc_->rejected_writes, 2);
  EXPECT_EQ(h.svc_->accepted_writes, 2);
}

TEST(Resource, MonotonicCheckLetsAHolderWriteSeveralTimesUnderOneToken) {
  ResourceHarness h(fenced(FenceCheck::kMonotonic));
  EXPECT_EQ(h.run({{true, 2, 1}, {true, 2, 2}, {true, 1, 3}}), (std::vector<bool>{true, true, false}));
}

TEST(Resource, AFencedCopyRejectsATokenlessWrite) {
  ResourceHarness h(fenced(FenceCheck::kStrict));
  EXPECT_EQ(h.run({{true, std::nullopt, 1}}), (std::vector<bool>{false}));
  EXPECT_EQ(h.history_.resource_ops.back().reason, "write without a token");
}

TEST(Resource, WithFencedReadsATokenlessReadIsRejectedButWithoutThemItIsServed) {
  ResourceHarness with(fenced(FenceCheck::kStrict, true));
  EXPECT_EQ(with.run({{false, std::nullopt}}), (std::vector<bool>{false}));
  ResourceHarness without(fenced(FenceCheck::kStrict, false));
  EXPECT_EQ(without.run({{false, std::nullopt}}), (std::vector<bool>{true}));
}

TEST(Resource, AHolderMayReadThenWriteUnderOneTokenWithStrictCheck) {
  ResourceHarness h(fenced(FenceCheck::kStrict, true));
  EXPECT_EQ(h.run({{false, 1}, {true, 1, 10}}), (std::vector<bool>{true, true}));
  EXPECT_EQ(h.svc_->copy(0).last_seen(), 1);
  EXPECT_EQ(h.svc_->copy(0).last_written(), 1);
}

TEST(Resource, AStaleHolderIsRejectedAsSoonAsANewerHolderHasRead) {
  // Token 1 read, token 2 read (newer holder), token 1's write must fail even
  // though nobody has written with token 2 yet.
  ResourceHarness h(fenced(FenceCheck::kStrict, true));
  EXPECT_EQ(h.run({{false, 1}, {false, 2}, {true, 1, 10}}), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(h.svc_->copy(0).last_written(), 0);
}

TEST(Resource, WithoutFencedReadsANewerReadDoesNotProtectAgainstTheStaleWrite) {
  ResourceHarness h(fenced(FenceCheck::kStrict, false));
  EXPECT_EQ(h.run({{false, 1}, {false, 2}, {true, 1, 10}}), (std::vector<bool>{true, true, true}));
}

TEST(Resource, CasAcceptsOnlyTheVersionThatWasRead) {
  ResourceSpec s;
  s.kind = ResourceKind::kCas;
  ResourceHarness h(s);
  EXPECT_EQ(h.run({{true, std::nullopt, 1, 0}, {true, std::nullopt, 2, 0}, {true, std::nullopt, 3, 1}}),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(h.svc_->copy(0).version(), 2);
}

TEST(Resource, ResetMarksLetsAnOldTokenThroughAgainButKeepsTheData) {
  ResourceHarness h(fenced(FenceCheck::kStrict));
  h.run({{true, 5, 42}});
  h.svc_->reset_marks(0);
  EXPECT_EQ(h.svc_->copy(0).value(), 42);
  EXPECT_EQ(h.run({{true, 1, 43}}), (std::vector<bool>{true}));
}

TEST(Resource, ACopyForwardsAcceptedWritesAfterTheDelayAndTheOtherAppliesThemUnconditionally) {
  ResourceSpec s = fenced(FenceCheck::kStrict);
  s.replicas = 1;
  s.replication_delay = 50ms;
  ResourceHarness h(s);
  // Copy 1 accepts token 9 and, before its forward arrives, copy 0 accepts
  // token 3. Each then applies the other's forward unconditionally: the data
  // takes the forwarded value, each mark the larger token.
  std::vector<bool> got;
  h.sim_.node(h.client_).spawn("both", [&](sim::Process& p) {
    auto w9 = std::make_shared<WriteRequest>();
    w9->token = 9;
    w9->value = 900;
    got.push_back(p.call(h.copies_[1], w9, 1s)->as<OpReply>()->accepted);
    auto w3 = std::make_shared<WriteRequest>();
    w3->token = 3;
    w3->value = 300;
    got.push_back(p.call(h.copies_[0], w3, 1s)->as<OpReply>()->accepted);
  });
  h.sim_.run_until(1s);
  EXPECT_EQ(got, (std::vector<bool>{true, true}));
  EXPECT_EQ(h.svc_->copy(1).value(), 300);
  EXPECT_EQ(h.svc_->copy(1).last_written(), 9);
  EXPECT_EQ(h.svc_->copy(0).value(), 900);
  EXPECT_EQ(h.svc_->copy(0).last_written(), 9);
  // Forwarding is replication, not acceptance: only the two writes count.
  EXPECT_EQ(h.svc_->accepted_writes, 2);
}

TEST(Resource, ACheckOnALaggingCopyAcceptsAStaleToken) {
  ResourceSpec s = fenced(FenceCheck::kStrict);
  s.replicas = 1;
  s.replication_delay = 10s;
  ResourceHarness h(s);
  std::vector<bool> got;
  h.sim_.node(h.client_).spawn("two-copies", [&](sim::Process& p) {
    auto w2 = std::make_shared<WriteRequest>();
    w2->token = 2;
    w2->value = 1;
    got.push_back(p.call(h.copies_[0], w2, 1s)->as<OpReply>()->accepted);
    auto w1 = std::make_shared<WriteRequest>();
    w1->token = 1;
    w1->value = 1;
    got.push_back(p.call(h.copies_[1], w1, 1s)->as<OpReply>()->accepted);
  });
  h.sim_.run_until(1s);
  EXPECT_EQ(got, (std::vector<bool>{true, true}));
}

TEST(Resource, ACrashedCopyKeepsItsDataAndMarksAndRequestsToItTimeOut) {
  ResourceHarness h(fenced(FenceCheck::kStrict));
  h.run({{true, 4, 7}});
  h.sim_.crash(h.copies_[0]);
  EXPECT_EQ(h.run({{true, 5, 8}}), (std::vector<bool>{false}));  // timed out
  h.sim_.restart(h.copies_[0]);
  EXPECT_EQ(h.svc_->copy(0).value(), 7);
  EXPECT_EQ(h.svc_->copy(0).last_written(), 4);
  EXPECT_EQ(h.run({{true, 4, 9}, {true, 5, 9}}), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace fencesim::resource

namespace fencesim::resource {
namespace {

TEST(Resource, ATaggedWriteStoresItsTagAndItsRecordNamesTheVersionItReplaced) {
  ResourceSpec s;
  s.kind = ResourceKind::kFenced;
  ResourceHarness h(s);
  std::vector<bool> got;
  auto write = [&](sim::Process& p, std::int64_t token, std::int64_t value, std::string tag) {
    auto w = std::make_shared<WriteRequest>();
    w->token = token;
    w->value = value;
    w->tag = std::move(tag);
    auto reply = p.call(h.copies_[0], w, 1s);
    got.push_back(reply->as<OpReply>()->accepted);
    EXPECT_EQ(reply->as<OpReply>()->tag, h.svc_->copy(0).tag());
  };
  h.sim_.node(h.client_).spawn("tagged", [&](sim::Process& p) {
    write(p, 1, 5, "B");
    write(p, 1, 3, "A");  // refused (strict): the tag stays B's
    write(p, 2, 3, "A");  // an older version over a newer one
    write(p, 3, 4, "");   // untagged: clears the tag
  });
  h.sim_.run_until(1s);
  EXPECT_EQ(got, (std::vector<bool>{true, false, true, true}));
  const auto& ops = h.history_.resource_ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].effect, "version 5 by B replaces version 0");
  EXPECT_EQ(ops[1].effect, "") << "a refused write changes nothing";
  EXPECT_EQ(ops[1].tag, "A");
  EXPECT_EQ(ops[2].effect, "version 3 by A replaces version 5 by B");
  EXPECT_EQ(ops[3].effect, "");
  EXPECT_EQ(h.svc_->copy(0).tag(), "");
  for (const ResourceOpRecord& op : ops) EXPECT_EQ(op.kind, ResourceOpKind::kWrite);
}

}  // namespace
}  // namespace fencesim::resource
