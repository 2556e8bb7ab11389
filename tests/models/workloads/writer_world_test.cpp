// The writer in a whole world (ScenarioBuilder): a lock service, a paused
// holder, and the store's counter_reset, as in scenarios/counter-reset-resource.json.
#include <gtest/gtest.h>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

TEST(WriterWorld, AStaleWriterRollsTheFileBackAndTheNextWriterSaysWhoseVersionItRead) {
  // A reads version 0 and is frozen 15 s; B writes versions 1 and 2 under
  // tokens 2 and 3; the store loses its marks at 14 s; A's token 1 passes
  // and version 1 by A replaces version 2 by B; B's next write builds on it.
  const RunResult r = ScenarioBuilder("writer-rollback")
                          .duration(40s)
                          .redis(8s)
                          .fenced()
                          .client("A", writer(1s))
                          .client("B", writer(300ms, 3, 4s), [](ClientSpec& c) { c.start = 1s; })
                          .pause("A", 500ms, 15s)
                          .counter_reset("resource", 14s, 0)
                          .run();
  std::vector<std::string> effects;
  for (const ResourceOpRecord& op : r.history.resource_ops) {
    if (op.write && op.accepted) effects.push_back(op.effect);
  }
  EXPECT_EQ(effects, (std::vector<std::string>{
                         "version 1 by B replaces version 0", "version 2 by B replaces version 1 by B",
                         "version 1 by A replaces version 2 by B", "version 2 by B replaces version 1 by A"}));
  std::vector<std::string> outcomes;
  for (const IterationRecord& it : r.history.iterations) outcomes.push_back(it.client + ": " + it.outcome);
  EXPECT_EQ(outcomes, (std::vector<std::string>{
                          "A: ok: wrote version 1 over version 0", "B: ok: wrote version 1 over version 0",
                          "B: ok: wrote version 2 over version 1 by B", "B: ok: wrote version 2 over version 1 by A"}));
}

}  // namespace
}  // namespace fencesim::testing
