// The checker registry (models/checkers/registry.hpp): one checker per
// property in report order, applicability per design, and check_all taking
// the service's own verdicts and applying expectations.
#include "models/checkers/registry.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "models/checkers/checkers.hpp"
#include "models/checkers/raft_safety.hpp"
#include "sim/simulation.hpp"

namespace fencesim {
namespace {

Scenario design(ServiceKind k) {
  Scenario s;
  s.lock.set_service(k);
  return s;
}

TEST(CheckerRegistry, OneCheckerPerPropertyInReportOrder) {
  const auto& reg = checker_registry();
  ASSERT_EQ(reg.size(), all_properties().size());
  for (std::size_t i = 0; i < reg.size(); ++i) {
    EXPECT_EQ(reg[i].property, all_properties()[i]);
    EXPECT_EQ(&checker_for(reg[i].property), &reg[i]);
  }
}

TEST(CheckerRegistry, WhichPropertiesApplyToEachDesign) {
  using P = Property;
  const Scenario redis = design(ServiceKind::kRedis);
  Scenario redlock = redis;
  redlock.lock.redis().redlock = 3;
  redlock.lock.redis().token = RedisToken::kNone;
  const Scenario etcd = design(ServiceKind::kEtcd);
  const Scenario none = design(ServiceKind::kNone);
  for (P p : {P::kMutualExclusion, P::kNoStaleWrite, P::kNoLostUpdate, P::kTokenMonotonic, P::kProgress}) {
    EXPECT_TRUE(property_applies(redis, p)) << to_string(p);
    EXPECT_TRUE(property_applies(etcd, p)) << to_string(p);
  }
  EXPECT_FALSE(property_applies(redis, P::kRaftSafety));
  EXPECT_TRUE(property_applies(etcd, P::kRaftSafety));
  EXPECT_FALSE(property_applies(redlock, P::kTokenMonotonic));
  EXPECT_FALSE(property_applies(none, P::kMutualExclusion));
  EXPECT_FALSE(property_applies(none, P::kNoStaleWrite));
  EXPECT_FALSE(property_applies(none, P::kTokenMonotonic));
  EXPECT_FALSE(property_applies(none, P::kRaftSafety));
  EXPECT_TRUE(property_applies(none, P::kNoLostUpdate));
  EXPECT_TRUE(property_applies(none, P::kProgress));

  EXPECT_EQ(why_not_applicable(none, P::kMutualExclusion), "the design takes no lock (\"service\": \"none\")");
  EXPECT_EQ(why_not_applicable(none, P::kTokenMonotonic), "the design takes no lock, so it hands out no token");
  EXPECT_EQ(why_not_applicable(redlock, P::kTokenMonotonic),
            "Redlock hands out no fencing token (lock.token is \"none\")");
  EXPECT_EQ(why_not_applicable(redis, P::kRaftSafety),
            "it is checked only for the etcd, ZooKeeper and Hazelcast services; this scenario's is redis");

  // no_duplicate_effect: the queue design only; no_lost_update and token_monotonic: not the queue.
  const Scenario queue = design(ServiceKind::kQueue);
  for (P p : {P::kMutualExclusion, P::kNoStaleWrite, P::kProgress, P::kNoDuplicateEffect}) {
    EXPECT_TRUE(property_applies(queue, p)) << to_string(p);
  }
  for (P p : {P::kNoLostUpdate, P::kTokenMonotonic, P::kRaftSafety}) {
    EXPECT_FALSE(property_applies(queue, p)) << to_string(p);
  }
  for (const Scenario* s : {&redis, &etcd, &none}) EXPECT_FALSE(property_applies(*s, P::kNoDuplicateEffect));
  EXPECT_EQ(why_not_applicable(redis, P::kNoDuplicateEffect),
            "the design has no messages (lock.service is \"redis\", not \"queue\")");
}

TEST(CheckerRegistry, CheckAllTakesTheServiceVerdictAndAppliesTheExpectation) {
  Scenario s = design(ServiceKind::kEtcd);
  s.expect[Property::kRaftSafety] = Expectation::kHolds;
  s.expect[Property::kMutualExclusion] = Expectation::kViolated;
  raft::SafetyVerdict broken;
  broken.holds = false;
  broken.rule = "election safety";
  broken.summary = "two leaders in term 3";
  broken.story = {"1. etcd-0 became leader of term 3", "2. etcd-1 became leader of term 3"};
  broken.checked = 12;
  const History h;
  const auto verdicts = check_all(s, h, CheckContext{}, {raft_safety_verdict(broken)});
  ASSERT_EQ(verdicts.size(), all_properties().size());
  auto raft_of = [](const std::vector<Verdict>& vs) -> const Verdict& {
    for (const Verdict& v : vs) {
      if (v.property == Property::kRaftSafety) return v;
    }
    throw std::out_of_range("no raft_safety verdict");
  };
  const Verdict& raft = raft_of(verdicts);
  EXPECT_EQ(raft.property, Property::kRaftSafety);
  EXPECT_EQ(raft.status, Status::kViolated);
  EXPECT_EQ(raft.summary, "election safety: two leaders in term 3");
  EXPECT_EQ(raft.checked, 12);
  EXPECT_EQ(raft.story.size(), 2u);
  EXPECT_EQ(raft.expected, Expectation::kHolds);
  EXPECT_FALSE(raft.met);
  // No beliefs: mutual exclusion holds, against the expectation.
  EXPECT_EQ(verdicts.front().status, Status::kHolds);
  EXPECT_FALSE(verdicts.front().met);

  raft::SafetyVerdict fine;
  fine.checked = 4;
  const auto ok = check_all(s, h, CheckContext{}, {raft_safety_verdict(fine)});
  EXPECT_TRUE(raft_of(ok).met);
  EXPECT_EQ(raft_of(ok).summary,
            "4 Raft events checked: one leader per term, logs and applied commands agree, no committed entry lost");
}

TEST(CheckerRegistry, APropertyTheServiceChecksNeedsItsVerdict) {
  const History h;
  EXPECT_THROW(check_all(design(ServiceKind::kEtcd), h, CheckContext{}), sim::ModelBug);
  // Where it does not apply, none is needed.
  const auto v = check_all(design(ServiceKind::kRedis), h, CheckContext{});
  EXPECT_EQ(v.back().status, Status::kNotApplicable);
  EXPECT_EQ(v.back().summary, "does not apply to this design");
}

}  // namespace
}  // namespace fencesim
