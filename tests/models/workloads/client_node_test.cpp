// ClientNode's part of an iteration, with a workload of the test's own: the
// IterationRecord bookkeeping, the token handed over, crash and restart. No
// lock service (`service: none`), so no lock client.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/client/client.hpp"
#include "models/resource/resource.hpp"
#include "sim/simulation.hpp"

namespace fencesim::client {
namespace {

using namespace std::chrono_literals;

/// Sleeps `work`, then succeeds on even iterations and fails on odd ones.
class FakeWorkload final : public workloads::Workload {
 public:
  explicit FakeWorkload(Duration work) : work_(work) {}
  workloads::IterationResult iterate(const workloads::Iteration& it) override {
    indexes.push_back(it.index);
    tokens.push_back(it.token);
    it.process.sleep(work_);
    if (it.index % 2 == 0) return {true, "ok: even " + std::to_string(it.index)};
    return {false, "odd"};
  }
  void on_crash() override { ++crashes; }

  std::vector<int> indexes;
  std::vector<std::optional<std::int64_t>> tokens;
  int crashes = 0;

 private:
  Duration work_;
};

struct World {
  explicit World(int iterations, Duration work = 100ms, Duration think = 1s) {
    sc.lock.set_service(ServiceKind::kNone);
    sc.resource.kind = ResourceKind::kCas;
    spec.name = "A";
    spec.workload.iterations = iterations;
    spec.workload.think = think;
    client_id = sim.add_node("A").id();
    copy_id = sim.add_node("resource").id();
    svc = std::make_unique<resource::ResourceService>(sim, history, sc.resource, std::vector<sim::NodeId>{copy_id});
    auto w = std::make_unique<FakeWorkload>(work);
    fake = w.get();
    node = std::make_unique<ClientNode>(sim.node(client_id), history, sc, spec, copy_id, nullptr, std::move(w));
    node->start();
  }
  sim::Simulation sim{1};
  History history;
  Scenario sc;
  ClientSpec spec;
  sim::NodeId client_id = 0, copy_id = 0;
  std::unique_ptr<resource::ResourceService> svc;
  FakeWorkload* fake = nullptr;
  std::unique_ptr<ClientNode> node;
};

TEST(ClientNode, RecordsEachIterationWithTheWorkloadsOutcomeAndThinksBetween) {
  World w(3, 100ms, 1s);
  w.sim.run_until(Time{10s});
  ASSERT_EQ(w.history.iterations.size(), 3u);
  EXPECT_EQ(w.fake->indexes, (std::vector<int>{0, 1, 2}));
  const IterationRecord& first = w.history.iterations[0];
  EXPECT_EQ(first.client, "A");
  EXPECT_EQ(first.start, Time{0});
  EXPECT_EQ(first.acquired, Time{0}) << "no lock: acquired at once";
  EXPECT_TRUE(first.success);
  EXPECT_EQ(first.done, Time{100ms});
  EXPECT_EQ(first.outcome, "ok: even 0");
  const IterationRecord& second = w.history.iterations[1];
  EXPECT_EQ(second.start, Time{1100ms});
  EXPECT_FALSE(second.success);
  EXPECT_FALSE(second.done.has_value());
  EXPECT_EQ(second.outcome, "odd");
  EXPECT_EQ(w.history.iterations[2].start, Time{2200ms});
  // Without a lock there is no token to hand over.
  for (const auto& t : w.fake->tokens) EXPECT_FALSE(t.has_value());
}

TEST(ClientNode, ACrashMarksTheUnfinishedIterationTellsTheWorkloadAndARestartContinues) {
  World w(3, 2s, 1s);
  // Iteration 0 runs 0–2 s; the crash at 1 s cuts it; the restart at 3 s
  // runs iterations 1 and 2.
  w.sim.at(Time{1s}, [&] { w.sim.crash(w.client_id); });
  w.sim.at(Time{3s}, [&] { w.sim.restart(w.client_id); });
  w.sim.run_until(Time{20s});
  EXPECT_EQ(w.fake->crashes, 1);
  ASSERT_EQ(w.history.iterations.size(), 3u);
  EXPECT_EQ(w.history.iterations[0].outcome, "crashed");
  EXPECT_FALSE(w.history.iterations[0].success);
  EXPECT_EQ(w.history.iterations[1].start, Time{3s});
  EXPECT_EQ(w.fake->indexes, (std::vector<int>{0, 1, 2}));
}

TEST(ClientNode, ANullWorkloadIsRefused) {
  sim::Simulation sim{1};
  History history;
  Scenario sc;
  ClientSpec spec;
  spec.name = "A";
  sim::Node& n = sim.add_node("A");
  EXPECT_THROW(ClientNode(n, history, sc, spec, 0, nullptr, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace fencesim::client
