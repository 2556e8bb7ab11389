// Two lock-client designs, compared under the same faults by a small seed
// sweep from C++ (fencesim/sweep.hpp):
//   eager-give-up  renews at half the TTL minus a random jitter (up to a
//                  tenth of the TTL, from the run's own stream) and treats
//                  the first renewal that gets no answer as a lost lease;
//   third-retry    renews at a third of the TTL and retries a renewal that
//                  gets no answer until it is answered (as most libraries do).
// The tests record under which pause lengths each one breaks
// mutual_exclusion: a GC pause of the holder, and the holder cut off from
// Redis. Each seed draws when the fault starts, so the sweep covers every
// phase of the renewal schedule.
#include <gtest/gtest.h>
#include <fencesim/builder.hpp>
#include <fencesim/policy.hpp>
#include <fencesim/sweep.hpp>

#include <memory>

using namespace std::chrono_literals;
using fencesim::Property;

class EagerGiveUp final : public fencesim::ClientPolicy {
 public:
  std::string name() const override { return "eager-give-up"; }
  sim::Time next_renewal(const fencesim::PolicyContext& ctx, const fencesim::RenewalFacts& f) const override {
    const sim::Duration jitter{ctx.rng().uniform(0, (f.ttl / 10).count())};
    return f.last_reply + f.ttl / 2 - jitter;
  }
  fencesim::RenewalFailure on_renewal_failure(const fencesim::PolicyContext&, const fencesim::LeaseFacts&,
                                              int) const override {
    return fencesim::RenewalFailure::kLoseLease;
  }
};

class ThirdRetry final : public fencesim::ClientPolicy {
 public:
  std::string name() const override { return "third-retry"; }
  sim::Time next_renewal(const fencesim::PolicyContext&, const fencesim::RenewalFacts& f) const override {
    return f.last_reply + f.ttl / 3;
  }
};

enum class Fault { kPause, kCutOff };

// A holds the lock for a long piece of work; B wants it from 1 s on. The
// fault hits A once, starting somewhere in [15 s, 25 s] (drawn per seed).
fencesim::Scenario design(std::shared_ptr<const fencesim::ClientPolicy> policy, Fault fault, sim::Duration length) {
  using namespace fencesim::workloads;
  fencesim::ScenarioBuilder b("renewal-" + policy->name());
  b.duration(60s).redis(10s).fenced();
  b.client("A", allocator(100, 40s), policy);
  b.client("B", allocator(100, 500ms), policy, [](fencesim::ClientSpec& c) { c.start = 1s; });
  fencesim::FaultSpec f = fault == Fault::kPause ? fencesim::faults::pause("A", 15s, length)
                                                 : fencesim::faults::isolate(15s, {"A"}, length);
  f.at_max = 25s;  // a start drawn per seed in [15 s, 25 s]
  b.fault(f);
  return b.build();
}

/// In how many of 40 seeds mutual_exclusion broke.
std::uint64_t broken(std::shared_ptr<const fencesim::ClientPolicy> policy, Fault fault, sim::Duration length) {
  fencesim::SweepOptions opt;
  opt.seeds = {1, 40};
  opt.jobs = 2;
  opt.keep = fencesim::Keep::kNone;
  const fencesim::SweepResult r = fencesim::run_sweep(design(policy, fault, length), opt);
  EXPECT_FALSE(r.error) << r.error->message;
  EXPECT_FALSE(r.mismatch);
  for (const fencesim::PropertyAggregate& p : r.properties) {
    if (p.property == Property::kMutualExclusion) return p.violations;
  }
  return 0;
}

const auto eager = std::make_shared<EagerGiveUp>();
const auto third = std::make_shared<ThirdRetry>();

TEST(RenewalPolicies, AShortPauseBreaksNeither) {
  EXPECT_EQ(broken(eager, Fault::kPause, 3s), 0u);
  EXPECT_EQ(broken(third, Fault::kPause, 3s), 0u);
}

TEST(RenewalPolicies, APauseOfSixAndAHalfSecondsBreaksOnlyTheHalfTtlRenewer) {
  // Renewing at TTL/2 (minus up to 1 s) leaves as little as half the TTL of
  // lease when the pause starts; at TTL/3, at least two thirds (6.67 s).
  EXPECT_GT(broken(eager, Fault::kPause, 6500ms), 0u);
  EXPECT_EQ(broken(third, Fault::kPause, 6500ms), 0u);
}

TEST(RenewalPolicies, APausePastTheTtlBreaksBoth) {
  EXPECT_EQ(broken(eager, Fault::kPause, 11s), 40u);
  EXPECT_EQ(broken(third, Fault::kPause, 11s), 40u);
}

TEST(RenewalPolicies, CutOffFromRedisOnlyTheRetryingClientBreaks) {
  // Cut off, a renewal times out: eager-give-up ends its belief at the first
  // timeout, before its lease can expire; third-retry keeps believing while
  // its lease expires and B takes the lock.
  EXPECT_EQ(broken(eager, Fault::kCutOff, 12s), 0u);
  EXPECT_EQ(broken(third, Fault::kCutOff, 12s), 40u);
  EXPECT_EQ(broken(third, Fault::kCutOff, 4s), 0u);
}

TEST(RenewalPolicies, ThePolicyIsDeterministicAndNamedInTheReport) {
  const fencesim::Scenario s = design(eager, Fault::kPause, 6500ms);
  fencesim::RunOptions opt;
  opt.self_check = true;  // the run twice, every policy call compared
  const fencesim::RunResult r = fencesim::run_scenario(s, opt);
  const std::string json = fencesim::render_report_json(s, r, {"", false});
  EXPECT_NE(json.find("\"policy\": \"eager-give-up\""), std::string::npos);
}
