// fencesim/builder.hpp for the two services without a lock server of their
// own: ScenarioBuilder::queue and ScenarioBuilder::table (with idempotent()
// and the queue_worker / leader workloads) build the scenario the loader
// makes of the shipped file, so the runs are the same run.
#include <gtest/gtest.h>

#include <filesystem>

#include "include/fencesim/builder.hpp"
#include "loader/loader.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;
using namespace fencesim::workloads;

Scenario shipped(const std::string& name) {
  const LoadResult r =
      load_scenario_file((std::filesystem::path(FENCESIM_SOURCE_DIR) / "scenarios" / (name + ".json")).string());
  if (!r.ok()) throw std::runtime_error(r.error->to_string());
  return *r.scenario;
}

void expect_same_run(const Scenario& built, const Scenario& loaded) {
  const RunResult a = run_scenario(built);
  const RunResult b = run_scenario(loaded);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.verdicts.size(), b.verdicts.size());
  for (std::size_t i = 0; i < a.verdicts.size(); ++i) {
    EXPECT_EQ(a.verdicts[i].property, b.verdicts[i].property);
    EXPECT_EQ(a.verdicts[i].status, b.verdicts[i].status) << to_string(a.verdicts[i].property);
  }
}

TEST(BuilderServices, AQueueScenarioIsTheOneTheLoaderMakesOfItsFile) {
  // scenarios/queue-pause-idempotent.json, in code.
  Scenario built = ScenarioBuilder("queue-pause-idempotent")
                       .seed(1)
                       .duration(40s)
                       .settle(15s)
                       .queue(10s, 2)
                       .idempotent()
                       .client("A", queue_worker(3s, 5))
                       .client("B", queue_worker(5s, 5), [](ClientSpec& c) { c.start = 100ms; })
                       .pause("A", 1s, 11s)
                       .expect(Property::kMutualExclusion, Expectation::kViolated)
                       .expect(Property::kNoStaleWrite, Expectation::kViolated)
                       .expect(Property::kNoDuplicateEffect, Expectation::kHolds)
                       .expect(Property::kProgress, Expectation::kHolds)
                       .build();
  const Scenario loaded = shipped("queue-pause-idempotent");
  EXPECT_EQ(built.lock.service(), ServiceKind::kQueue);
  EXPECT_EQ(built.lock.ttl, 10s);  // the design's lease TTL: the visibility timeout
  EXPECT_EQ(built.lock.queue(), loaded.lock.queue());
  EXPECT_EQ(built.lock.ttl, loaded.lock.ttl);
  EXPECT_EQ(built.resource, loaded.resource);
  ASSERT_EQ(built.clients.size(), loaded.clients.size());
  for (std::size_t i = 0; i < built.clients.size(); ++i) EXPECT_EQ(built.clients[i], loaded.clients[i]) << i;
  expect_same_run(built, loaded);
  EXPECT_FALSE(ScenarioBuilder("q").queue(10s, 2).idempotent().client("A", queue_worker(1s)).validate());
}

TEST(BuilderServices, AQueueTweakSetsFifoAndTheDeadLetterQueueAndTheTtlFollowsTheVisibilityTimeout) {
  const Scenario s = ScenarioBuilder("q")
                         .queue(10s, 3,
                                [](QueueSpec& q) {
                                  q.fifo = true;
                                  q.max_receives = 2;
                                  q.visibility_timeout = 20s;
                                })
                         .fenced()
                         .idempotent(/*on_fenced=*/true)
                         .client("A", queue_worker(1s))
                         .build();
  EXPECT_TRUE(s.lock.queue().fifo);
  EXPECT_EQ(s.lock.queue().max_receives, 2);
  EXPECT_EQ(s.lock.ttl, 20s);
  EXPECT_EQ(s.resource.kind, ResourceKind::kFenced);
  EXPECT_TRUE(s.resource.idempotent);
}

TEST(BuilderServices, ALockTableScenarioIsTheOneTheLoaderMakesOfItsFile) {
  // scenarios/table-k8s-paused-leader-version-token.json, in code.
  auto client_go = [](Duration start) {
    return [start](ClientSpec& c) {
      c.start = start;
      c.renew_interval = 2s;     // RetryPeriod
      c.lease_loss_after = 10s;  // RenewDeadline
    };
  };
  const Scenario loaded = shipped("table-k8s-paused-leader-version-token");
  ScenarioBuilder b = ScenarioBuilder("table-k8s-paused-leader-version-token")
                          .seed(loaded.seed)
                          .duration(60s)
                          .settle(20s)
                          .table(TableExpiry::kObserved, 15s, [](TableSpec& t) { t.token = TableToken::kVersion; })
                          .fenced(FenceCheck::kMonotonic)
                          .client("A", leader(1s, 1000), client_go(0s))
                          .client("B", leader(1s, 1000), client_go(1s))
                          .pause("A", 10045500us, 20s);
  const Scenario built = b.build();
  EXPECT_EQ(built.lock.service(), ServiceKind::kTable);
  EXPECT_EQ(built.lock.ttl, 15s);
  EXPECT_EQ(built.lock.table(), loaded.lock.table());
  EXPECT_EQ(built.resource, loaded.resource);
  ASSERT_EQ(built.clients.size(), loaded.clients.size());
  for (std::size_t i = 0; i < built.clients.size(); ++i) EXPECT_EQ(built.clients[i], loaded.clients[i]) << i;
  EXPECT_FALSE(b.validate());
  expect_same_run(built, loaded);
}

TEST(BuilderServices, ALockTableIsCheckedByTheLoadersRules) {
  // client-go needs a RenewDeadline: the file's error, from the builder.
  const auto p = ScenarioBuilder("t")
                     .table(TableExpiry::kObserved, 15s)
                     .client("A", leader(1s, 5), [](ClientSpec& c) { c.renew_interval = 2s; })
                     .validate();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "clients[0].lease_loss_after");
  // ShedLock with the database's clock and a lock delay is fine.
  EXPECT_FALSE(ScenarioBuilder("t")
                   .table(TableExpiry::kDbClock, 10s, [](TableSpec& t) { t.lock_delay = 5s; })
                   .client("A", counter(1s))
                   .validate());
}

}  // namespace
}  // namespace fencesim
