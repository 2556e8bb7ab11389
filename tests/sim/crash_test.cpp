// Crashes end a node's processes, timers and pending deliveries; a restart
// runs the model's recovery hook.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using simtest::text;
using simtest::text_of;
using simtest::World;
using testing::ElementsAre;
using testing::IsEmpty;

void crash_at(World& w, sim::Node& n, sim::Time at) {
  w.sim.at(
      at, [&w, &n] { w.sim.crash(n.id()); }, sim::EventClass::kFault);
}
void restart_at(World& w, sim::Node& n, sim::Time at) {
  w.sim.at(
      at, [&w, &n] { w.sim.restart(n.id()); }, sim::EventClass::kFault);
}

/// Logs its own destruction: shows that a cancelled process unwinds.
struct Guard {
  World& w;
  std::string name;
  ~Guard() { w.note(name + " destroyed"); }
};

TEST(Crash, ACrashCancelsTheNodesProcessesAndRunsTheirDestructors) {
  World w;
  sim::Node& n = w.listener("N");
  n.spawn("sleeper", [&](sim::Process& p) {
    Guard outer{w, "outer guard"};
    {
      Guard inner{w, "inner guard"};
      p.sleep(10s);
      w.note("must not run");
    }
  });
  n.spawn("caller", [&](sim::Process& p) {
    Guard g{w, "caller guard"};
    sim::Node& other = p.sim().node(p.sim().find_node("other").value());
    (void)p.call(other.id(), text("never answered"), 1h);
    w.note("must not run");
  });
  w.node("other");
  crash_at(w, n, 1s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1s inner guard destroyed", "1s outer guard destroyed", "1s caller guard destroyed",
                                 "1s N crash hook"));
  EXPECT_FALSE(n.up());
  EXPECT_EQ(n.incarnation(), 1u);
}

TEST(Crash, AProcessThatHadNotStartedNeverRuns) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("unstarted", [&](sim::Process&) { w.note("must not run"); });
  crash_at(w, n, 0s);  // a fault runs before the spawn's first resume
  w.run();
  EXPECT_THAT(w.log, IsEmpty());
}

TEST(Crash, ACrashDropsNodeTimersButKeepsObserverTimers) {
  World w;
  sim::Node& n = w.node("N");
  n.after(2s, [&] { w.note("node timer"); });
  n.at_clock(sim::ClockKind::kWall, 3s, [&] { w.note("node wall timer"); });
  w.sim.observe_clock(n.id(), sim::ClockKind::kMonotonic, 2s, [&] { w.note("observer timer"); });
  crash_at(w, n, 1s);
  restart_at(w, n, 1500ms);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s observer timer"));
}

TEST(Crash, ARestartRunsTheRecoveryHookWhichCanSpawnProcessesAgain) {
  World w;
  sim::Node& n = w.listener("N");
  w.listeners["N"]->restart = [&](sim::Node& node) {
    node.spawn("recovered", [&](sim::Process& p) {
      p.sleep(1s);
      w.note("recovered process runs, incarnation " + std::to_string(p.node().incarnation()));
    });
  };
  crash_at(w, n, 1s);
  restart_at(w, n, 3s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1s N crash hook", "3s N restart hook", "4s recovered process runs, incarnation 1"));
  EXPECT_TRUE(n.up());
}

TEST(Crash, MessagesWaitingInAPausedNodesInboxAreLost) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  w.sim.pause(b.id(), 5s);
  a.send(b.id(), text("waiting in the inbox"));
  crash_at(w, b, 2s);
  restart_at(w, b, 3s);
  w.sim.at(6s, [&] { a.send(b.id(), text("after")); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s B crash hook", "3s B restart hook", "6.001s B got after from A"));
  EXPECT_FALSE(b.paused());
}

TEST(Crash, AMessageInFlightToACrashedNodeIsLostEvenIfItRestartsBeforeArrival) {
  // Like a TCP connection: what was sent to the old incarnation does not
  // reach the new one.
  World w;
  w.sim.set_network({100ms, 100ms, 0});
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  a.send(b.id(), text("to the old incarnation"));
  crash_at(w, b, 10ms);
  restart_at(w, b, 20ms);
  w.sim.at(30ms, [&] { a.send(b.id(), text("to the new incarnation")); });
  w.run();
  EXPECT_THAT(w.log,
              ElementsAre("10ms B crash hook", "20ms B restart hook", "130ms B got to the new incarnation from A"));
}

TEST(Crash, ACallPendingAtTheCrashIsForgottenAndItsReplyDropped) {
  World w;
  w.sim.set_network({100ms, 100ms, 0});
  sim::Node& server = w.listener("server", /*echo=*/true);
  sim::Node& client = w.listener("client");
  client.spawn("c", [&](sim::Process& p) {
    (void)p.call(server.id(), text("q"), 10s);
    w.note("must not run");
  });
  crash_at(w, client, 50ms);
  restart_at(w, client, 60ms);
  w.run();
  // The reply arrives at 200 ms at the new incarnation: no call waits for it
  // and a reply is never handed to on_message.
  EXPECT_THAT(w.log,
              ElementsAre("50ms client crash hook", "60ms client restart hook", "100ms server got q from client"));
}

TEST(Crash, ACrashEndsAPause) {
  World w;
  sim::Node& n = w.node("N");
  w.sim.pause(n.id(), 10s);
  crash_at(w, n, 1s);
  w.sim.at(2s, [&] {
    w.sim.restart(n.id());
    n.spawn("fresh", [&](sim::Process&) { w.note("fresh process runs at once"); });
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s fresh process runs at once"));
}

TEST(Crash, ACrashCalledFromInsideAProcessIsAModelBug) {
  World w;
  w.node("N").spawn("suicidal", [&](sim::Process& p) { p.sim().crash(p.node().id()); });
  EXPECT_THROW(w.run(), sim::ModelBug);
}

TEST(Crash, SpawningOnADownNodeIsAModelBugAndItsTimersAreRefused) {
  World w;
  sim::Node& n = w.node("N");
  w.sim.crash(n.id());
  EXPECT_THROW(n.spawn("p", [](sim::Process&) {}), sim::ModelBug);
  EXPECT_FALSE(n.after(1s, [] {}).valid());
}

TEST(Crash, CrashingADownNodeOrRestartingAnUpNodeChangesNothing) {
  World w;
  sim::Node& n = w.listener("N");
  w.sim.restart(n.id());
  w.sim.crash(n.id());
  w.sim.crash(n.id());
  EXPECT_EQ(n.incarnation(), 1u);
  EXPECT_THAT(w.log, ElementsAre("0s N crash hook"));
}

TEST(Crash, DestroyingASimulationUnwindsEveryLiveProcess) {
  std::vector<std::string> log;
  {
    World w;
    sim::Node& a = w.node("A");
    sim::Node& b = w.node("B");
    struct Counted {
      std::vector<std::string>& log;
      std::string name;
      ~Counted() { log.push_back(name); }
    };
    a.spawn("sleeping", [&](sim::Process& p) {
      Counted c{log, "sleeping"};
      p.sleep(1h);
    });
    a.spawn("forever", [&](sim::Process& p) {
      Counted c{log, "forever"};
      p.block_forever();
    });
    b.spawn("paused", [&](sim::Process& p) {
      Counted c{log, "paused"};
      p.sleep(1ms);
      log.push_back("must not run");
    });
    w.sim.at(0s, [&] { w.sim.pause(b.id(), 1h); });
    w.run(1s);
    b.spawn("unstarted", [&](sim::Process&) { log.push_back("must not run"); });
    EXPECT_TRUE(log.empty());
  }
  EXPECT_THAT(log, ElementsAre("sleeping", "forever", "paused"));
}

}  // namespace
