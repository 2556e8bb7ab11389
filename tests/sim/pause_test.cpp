// Pauses (GC stop-the-world, VM freeze, SIGSTOP): node code freezes, clocks
// keep running, and what fell due runs at the end in the order it fell due.
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

/// Schedules a pause of `n` from `at` for `d`, as the fault script does.
void pause_at(World& w, sim::Node& n, sim::Time at, sim::Duration d) {
  w.sim.at(
      at, [&w, &n, d] { w.sim.pause(n.id(), d); }, sim::EventClass::kFault);
}

TEST(Pause, TimersThatFallDueDuringAPauseFireAtItsEndInTheOrderTheyFellDue) {
  World w;
  sim::Node& n = w.node("N");
  auto sleeper = [&](sim::Duration d) {
    return [&w, d](sim::Process& p) {
      p.sleep(d);
      w.note(p.name() + " woke, monotonic reads " + sim::format_duration(p.node().monotonic()));
    };
  };
  // Spawned out of due order on purpose.
  n.spawn("p1", sleeper(1s));
  n.spawn("p3", sleeper(3s));
  n.spawn("p2", sleeper(2s));
  n.after(2500ms, [&] { w.note("node timer of 2.5s"); });
  pause_at(w, n, 500ms, 5s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("5.5s p1 woke, monotonic reads 5.5s", "5.5s p2 woke, monotonic reads 5.5s",
                                 "5.5s node timer of 2.5s", "5.5s p3 woke, monotonic reads 5.5s"));
}

TEST(Pause, MessagesWaitForThePauseAndAreHandledInArrivalOrderInterleavedWithTimers) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  b.after(2s, [&] { w.note("B timer due at 2s"); });
  b.after(4s, [&] { w.note("B timer due at 4s"); });
  // Default latency 1 ms: these arrive at 1 s, 3 s, exactly at the pause's
  // end (5.5 s), and after it.
  w.sim.at(999ms, [&] { a.send(b.id(), text("m1")); });
  w.sim.at(2999ms, [&] { a.send(b.id(), text("m3")); });
  w.sim.at(5499ms, [&] { a.send(b.id(), text("at-the-end")); });
  w.sim.at(5999ms, [&] { a.send(b.id(), text("after")); });
  pause_at(w, b, 500ms, 5s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("5.5s B got m1 from A", "5.5s B timer due at 2s", "5.5s B got m3 from A",
                                 "5.5s B timer due at 4s", "5.5s B got at-the-end from A", "6s B got after from A"));
}

TEST(Pause, AProcessContinuesExactlyWhereItStopped) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("counter", [&](sim::Process& p) {
    for (int i = 0; i < 5; ++i) {
      w.note("i=" + std::to_string(i));
      p.sleep(100ms);
    }
  });
  pause_at(w, n, 250ms, 1s);
  w.run();
  // The sleep due at 300 ms ends at the pause's end; the next one is measured
  // from there.
  EXPECT_THAT(w.log, ElementsAre("0s i=0", "100ms i=1", "200ms i=2", "1.25s i=3", "1.35s i=4"));
}

TEST(Pause, PausingAPausedNodeExtendsThePauseToTheLaterEnd) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("p", [&](sim::Process& p) {
    w.note("started");
    p.sleep(100ms);
    w.note("woke");
  });
  pause_at(w, n, 0s, 5s);  // the fault runs before the spawned process starts
  pause_at(w, n, 1s, 2s);  // ends at 3 s: inside the first, changes nothing
  pause_at(w, n, 4s, 3s);  // ends at 7 s: extends
  for (sim::Time t : {sim::Time{2s}, sim::Time{3s}, sim::Time{5s}, sim::Time{6999ms}}) {
    w.sim.at(t, [&] { w.note(n.paused() ? "paused" : "running"); });
  }
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s paused", "3s paused", "5s paused", "6.999s paused", "7s started", "7.1s woke"));
  EXPECT_FALSE(n.paused());
}

TEST(Pause, APauseOfADownNodeHasNoEffect) {
  World w;
  sim::Node& n = w.node("N");
  w.sim.crash(n.id());
  w.sim.pause(n.id(), 10s);
  EXPECT_FALSE(n.paused());
  w.sim.restart(n.id());
  n.spawn("p", [&](sim::Process& p) {
    p.sleep(1s);
    w.note("woke");
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1s woke"));
}

TEST(Pause, ObserversAreNotFrozenByAPauseAndClocksKeepRunning) {
  World w;
  sim::Node& n = w.node("N");
  pause_at(w, n, 0s, 10s);
  w.sim.at(2s, [&] { w.note("observer callback, N wall reads " + sim::format_duration(n.wall())); });
  w.sim.observe_clock(n.id(), sim::ClockKind::kMonotonic, 3s, [&] { w.note("observer timer on N's clock"); });
  n.after(3s, [&] { w.note("node timer"); });
  w.run();
  EXPECT_THAT(w.log,
              ElementsAre("2s observer callback, N wall reads 2s", "3s observer timer on N's clock", "10s node timer"));
}

TEST(Pause, AProcessSpawnedOnAPausedNodeStartsWhenThePauseEnds) {
  World w;
  sim::Node& n = w.node("N");
  pause_at(w, n, 0s, 2s);
  w.sim.at(1s, [&] { n.spawn("late", [&](sim::Process&) { w.note("late started"); }); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s late started"));
}

TEST(Pause, ATimeoutThatFellDueBeforeTheReplyArrivedWinsAfterThePause) {
  World w;
  w.sim.set_network({800ms, 800ms, 0});
  sim::Node& server = w.listener("server", /*echo=*/true);
  sim::Node& client = w.node("client");
  client.spawn("c", [&](sim::Process& p) {
    auto reply = p.call(server.id(), text("q"), 1s);  // reply would arrive at 1.6 s
    w.note(reply ? "got " + text_of(*reply) : "timed out");
  });
  pause_at(w, client, 500ms, 2500ms);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("800ms server got q from client", "3s timed out"));
}

TEST(Pause, AReplyThatArrivedBeforeTheTimeoutFellDueWinsAfterThePause) {
  World w;
  w.sim.set_network({300ms, 300ms, 0});
  sim::Node& server = w.listener("server", /*echo=*/true);
  sim::Node& client = w.node("client");
  client.spawn("c", [&](sim::Process& p) {
    auto reply = p.call(server.id(), text("q"), 1s);  // reply arrives at 600 ms
    w.note(reply ? "got " + text_of(*reply) : "timed out");
  });
  pause_at(w, client, 500ms, 2500ms);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("300ms server got q from client", "3s got re:q"));
}

TEST(Pause, ANotifyAfterAWaitAlreadyTimedOutDuringThePauseDoesNotOvertakeIt) {
  // The wait's deadline (1 s) fell due before the message (1.2 s) and the
  // notify (2 s): at the pause's end the process sees its timeout first.
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  sim::WaitHandle handle;
  b.spawn("waiter", [&](sim::Process& p) {
    handle = p.prepare_wait();
    w.note(p.block(sim::ClockKind::kMonotonic, 1s) ? "notified" : "timed out");
  });
  pause_at(w, b, 500ms, 2500ms);
  w.sim.at(1199ms, [&] { a.send(b.id(), text("msg")); });
  w.sim.at(2s, [&] { w.sim.notify(handle); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3s timed out", "3s B got msg from A"));
}

TEST(Pause, ANotifyDuringThePauseIsHandledInItsPlaceAmongWhatFellDue) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  sim::WaitHandle handle;
  b.spawn("waiter", [&](sim::Process& p) {
    handle = p.prepare_wait();
    w.note(p.block(sim::ClockKind::kMonotonic, 10s) ? "notified" : "timed out");
  });
  pause_at(w, b, 500ms, 2500ms);
  w.sim.at(999ms, [&] { a.send(b.id(), text("before")); });
  w.sim.at(2s, [&] { w.sim.notify(handle); });
  w.sim.at(2199ms, [&] { a.send(b.id(), text("after")); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3s B got before from A", "3s notified", "3s B got after from A"));
}

TEST(Pause, ATimerThatFellDueDuringAPauseStaysDueWhenTheClockStepsBack) {
  // Like a kernel timer that expired while the process was stopped: a later
  // step of the clock does not re-arm it.
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  b.at_clock(sim::ClockKind::kWall, 1s, [&] { w.note("wall timer of 1s"); });
  b.at_clock(sim::ClockKind::kWall, 2500ms, [&] { w.note("wall timer of 2.5s"); });
  b.spawn("sleeper", [&](sim::Process& p) {
    p.sleep_until(sim::ClockKind::kWall, 1200ms);
    w.note("process sleeping until wall 1.2s woke");
  });
  pause_at(w, b, 500ms, 2500ms);
  w.sim.at(1499ms, [&] { a.send(b.id(), text("msg")); });
  w.sim.at(
      2s, [&] { w.sim.clock_jump(b.id(), sim::ClockKind::kWall, -5s); }, sim::EventClass::kFault);
  w.run();
  // The 2.5 s timer had not fallen due at the step, so the step moves it:
  // wall reads -3 s at 2 s true time, and 2.5 s at 7.5 s.
  EXPECT_THAT(w.log, ElementsAre("3s wall timer of 1s", "3s process sleeping until wall 1.2s woke",
                                 "3s B got msg from A", "7.5s wall timer of 2.5s"));
}

TEST(Pause, AForwardClockStepDuringAPauseMakesATimerFallDueThen) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.listener("B");
  b.at_clock(sim::ClockKind::kWall, 10s, [&] { w.note("wall timer of 10s"); });
  pause_at(w, b, 500ms, 2500ms);
  w.sim.at(999ms, [&] { a.send(b.id(), text("m1")); });
  w.sim.at(
      1500ms, [&] { w.sim.clock_jump(b.id(), sim::ClockKind::kWall, 20s); }, sim::EventClass::kFault);
  w.sim.at(1999ms, [&] { a.send(b.id(), text("m2")); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3s B got m1 from A", "3s wall timer of 10s", "3s B got m2 from A"));
}

}  // namespace
