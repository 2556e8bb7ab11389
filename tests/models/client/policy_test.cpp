// models/policy.hpp: custom ResourceCheck and ClientPolicy in a run — the
// built-ins' behaviour reproduced through the interface, the renewal-failure
// and re-check seams, and the debug checks (PolicyMisuse).
#include <gtest/gtest.h>

#include <memory>

#include "models/policy.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

// The built-in schedule (renew_interval = TTL/3 on the monotonic clock) as a custom policy.
struct ThirdOfTtl final : ClientPolicy {
  std::string name() const override { return "third"; }
  sim::Time next_renewal(const PolicyContext&, const RenewalFacts& f) const override {
    return f.last_reply + std::max(f.ttl / 3, Duration{1});
  }
};

// The built-in strict fence as a custom check.
struct Strict final : ResourceCheck {
  std::string name() const override { return "my-strict"; }
  ResourceDecision decide(const PolicyContext&, const ResourceRequest& r, ResourceMarks& s) const override {
    if (r.op == ResourceOp::kRead) return {true, {}};
    if (!r.token) return {false, "write without a token"};
    if (*r.token < s.last_seen)
      return {false, "token " + std::to_string(*r.token) + " < last_seen " + std::to_string(s.last_seen)};
    if (*r.token <= s.last_written) {
      return {false, "token " + std::to_string(*r.token) + " <= last_written " + std::to_string(s.last_written)};
    }
    s.last_written = *r.token;
    s.last_seen = std::max(s.last_seen, *r.token);
    return {true, {}};
  }
};

ScenarioBuilder worked(std::shared_ptr<const ClientPolicy> p = nullptr) {
  ScenarioBuilder b("worked");
  b.duration(60s).redis(10s).fenced(FenceCheck::kStrict, false, 1000);
  if (p) {
    b.client("A", allocator(100, 500ms), p).client("B", allocator(100, 500ms), p, [](ClientSpec& c) { c.start = 2s; });
  } else {
    b.client("A", allocator(100, 500ms)).client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; });
  }
  return b.pause("A", 200ms, 12s);
}

TEST(CustomPolicy, TheBuiltInsThroughTheInterfaceMakeTheSameRun) {
  const RunResult builtin = worked().run();
  RunOptions opt;
  opt.self_check = true;
  const RunResult custom = run_scenario(worked(std::make_shared<ThirdOfTtl>()).build(), opt);
  EXPECT_EQ(custom.fingerprint, builtin.fingerprint);
  const RunResult check = run_scenario(worked().resource_check(std::make_shared<Strict>()).build(), opt);
  EXPECT_EQ(check.fingerprint, builtin.fingerprint);
  EXPECT_EQ(status(check, Property::kNoStaleWrite), Status::kHolds);
  EXPECT_EQ(check.metrics.writes_rejected, 1);
}

struct GiveUp final : ClientPolicy {
  std::string name() const override { return "give-up"; }
  sim::Time next_renewal(const PolicyContext&, const RenewalFacts& f) const override {
    return f.last_reply + f.ttl / 3;
  }
  RenewalFailure on_renewal_failure(const PolicyContext&, const LeaseFacts&, int) const override {
    return RenewalFailure::kLoseLease;
  }
};

TEST(CustomPolicy, AFailedRenewalCanEndTheBelief) {
  // A holds the lock for 30 s and is cut off from redis at 5 s.
  const RunResult r = ScenarioBuilder("cut-off")
                          .duration(40s)
                          .redis(10s)
                          .client("A", allocator(100, 30s), std::make_shared<GiveUp>())
                          .isolate(5s, {"A"}, 20s)
                          .run();
  ASSERT_FALSE(r.history.beliefs.empty());
  EXPECT_EQ(r.history.beliefs[0].end_reason, "renewal failed (give-up)");
  // The first renewal after the cut (at about 6.67 s) timed out 1 s later,
  // before the lease could expire at the server (about 13.3 s).
  ASSERT_TRUE(r.history.beliefs[0].end);
  EXPECT_GT(*r.history.beliefs[0].end, Time{7600ms});
  EXPECT_LT(*r.history.beliefs[0].end, Time{7700ms});
}

// Re-checks before the write until the lease was confirmed less than 2 s ago.
struct Recheck final : ClientPolicy {
  std::string name() const override { return "recheck"; }
  sim::Time next_renewal(const PolicyContext&, const RenewalFacts& f) const override { return f.last_reply + 1s; }
  WriteDecision before_write(const PolicyContext& ctx, const LeaseFacts& f) const override {
    if (ctx.monotonic() - *f.confirmed_sent_monotonic < 500ms) return {};
    return {WriteAction::kRecheck, {}, 100ms};
  }
};

TEST(CustomPolicy, ARecheckWaitsAndAsksAgain) {
  const RunResult r = ScenarioBuilder("recheck")
                          .duration(20s)
                          .redis(10s)
                          .client("A", counter(1500ms), std::make_shared<Recheck>())
                          .run();
  ASSERT_EQ(r.history.iterations.size(), 1u);
  EXPECT_TRUE(r.history.iterations[0].success) << r.history.iterations[0].outcome;
  // Read at ~0, work 1.5 s; renewals confirmed at 1 s and 2 s: the write waits for the second.
  EXPECT_GE(*r.history.iterations[0].done, Time{2s});
}

// Depends on a member it changes: the same arguments answer differently in a second run.
struct Counting final : ClientPolicy {
  mutable int calls = 0;
  std::string name() const override { return "counting"; }
  sim::Time next_renewal(const PolicyContext&, const RenewalFacts& f) const override {
    return f.last_reply + (++calls > 3 ? 2s : 3s);
  }
};

TEST(CustomPolicy, TheSelfCheckNamesAPolicyThatKeepsState) {
  RunOptions opt;
  opt.self_check = true;
  try {
    run_scenario(worked(std::make_shared<Counting>()).build(), opt);
    FAIL() << "the self-check did not catch it";
  } catch (const PolicyMisuse& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("policy \"counting\" (next_renewal)"), std::string::npos) << what;
    EXPECT_NE(what.find("answered differently"), std::string::npos) << what;
  }
}

// Keeps its context and uses it at the next call.
struct Keeper final : ClientPolicy {
  mutable const PolicyContext* kept = nullptr;
  std::string name() const override { return "keeper"; }
  sim::Time next_renewal(const PolicyContext& ctx, const RenewalFacts& f) const override {
    if (kept != nullptr) (void)kept->monotonic();
    kept = &ctx;
    return f.last_reply + 3s;
  }
};

TEST(CustomPolicy, AContextUsedAfterItsCallIsRefused) {
  try {
    run_scenario(worked(std::make_shared<Keeper>()).build());
    FAIL() << "a kept context was used";
  } catch (const PolicyMisuse& e) {
    EXPECT_NE(std::string(e.what()).find("used after the policy call"), std::string::npos) << e.what();
  }
}

// Runs a scenario from inside a call.
struct Nested final : ResourceCheck {
  std::string name() const override { return "nested"; }
  ResourceDecision decide(const PolicyContext&, const ResourceRequest&, ResourceMarks&) const override {
    run_scenario(ScenarioBuilder("inner").redis(10s).client("X", counter(1s)).build());
    return {true, {}};
  }
};

TEST(CustomPolicy, RunningAScenarioFromInsideAPolicyIsRefused) {
  EXPECT_THROW(run_scenario(worked().resource_check(std::make_shared<Nested>()).build()), PolicyMisuse);
}

struct ZeroRecheck final : ClientPolicy {
  std::string name() const override { return "zero"; }
  sim::Time next_renewal(const PolicyContext&, const RenewalFacts& f) const override { return f.last_reply + 3s; }
  WriteDecision before_write(const PolicyContext&, const LeaseFacts&) const override {
    return {WriteAction::kRecheck, {}, 0s};
  }
};

TEST(CustomPolicy, ARecheckWithoutAWaitIsRefused) {
  EXPECT_THROW(run_scenario(worked(std::make_shared<ZeroRecheck>()).build()), PolicyMisuse);
}

TEST(CustomPolicy, AKnobThePolicyReplacesIsRefusedWithItsPath) {
  const auto p = std::make_shared<ThirdOfTtl>();
  const auto problem = ScenarioBuilder("x")
                           .redis(10s)
                           .client("A", counter(1s), p, [](ClientSpec& c) { c.check_lease_before_write = 1s; })
                           .validate();
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->path, "clients[0].check_lease_before_write");
  EXPECT_NE(problem->message.find("\"third\" replaces"), std::string::npos) << problem->message;
}

TEST(CustomPolicy, TheStreamIsTheRunsOwn) {
  struct Jitter final : ClientPolicy {
    std::string name() const override { return "jitter"; }
    sim::Time next_renewal(const PolicyContext& ctx, const RenewalFacts& f) const override {
      return f.last_reply + f.ttl / 2 - Duration{ctx.rng().uniform(0, (f.ttl / 10).count())};
    }
  };
  const Scenario s = worked(std::make_shared<Jitter>()).build();
  RunOptions a, b;
  a.seed = 1, b.seed = 2;
  a.self_check = b.self_check = true;
  const RunResult r1 = run_scenario(s, a), r1again = run_scenario(s, a), r2 = run_scenario(s, b);
  EXPECT_EQ(r1.fingerprint, r1again.fingerprint);
  EXPECT_NE(r1.fingerprint, r2.fingerprint);
}

}  // namespace
}  // namespace fencesim::testing
