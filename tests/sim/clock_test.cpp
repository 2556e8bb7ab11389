// Node clocks: wall and monotonic readings, jumps, drift, and the timers set
// on them ("a timer on a clock is a deadline on that clock: it fires when the
// clock reaches it, so a step of that clock moves the timer").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sim/clock.hpp"
#include "sim/rng.hpp"
#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using sim::ClockKind;
using simtest::World;
using testing::ElementsAre;

void jump_at(World& w, sim::Node& n, sim::Time at, ClockKind k, sim::Duration by) {
  w.sim.at(
      at, [&w, &n, k, by] { w.sim.clock_jump(n.id(), k, by); }, sim::EventClass::kFault);
}

TEST(NodeClock, BothClocksReadTrueTimeUntilAFault) {
  sim::NodeClock c;
  EXPECT_EQ(c.read(ClockKind::kWall, 0s), 0s);
  EXPECT_EQ(c.read(ClockKind::kWall, 1234567ns), 1234567ns);
  EXPECT_EQ(c.read(ClockKind::kMonotonic, 1h), 1h);
}

TEST(NodeClock, AJumpStepsOnlyTheClockItNames) {
  sim::NodeClock c;
  c.jump(ClockKind::kWall, 5s, 1s);
  EXPECT_EQ(c.read(ClockKind::kWall, 1s), 6s);
  EXPECT_EQ(c.read(ClockKind::kMonotonic, 1s), 1s);
  c.jump(ClockKind::kWall, -10s, 2s);
  EXPECT_EQ(c.read(ClockKind::kWall, 2s), -3s);
  EXPECT_EQ(c.read(ClockKind::kWall, 3s), -2s);
  c.jump(ClockKind::kMonotonic, 1s, 3s);
  EXPECT_EQ(c.read(ClockKind::kMonotonic, 3s), 4s);
}

TEST(NodeClock, DriftInPartsPerMillionChangesReadingsExactly) {
  sim::NodeClock fast;
  fast.set_drift(100, 0s);  // 100 ppm fast: 100 us per second
  EXPECT_EQ(fast.read(ClockKind::kMonotonic, 1s), 1s + 100us);
  EXPECT_EQ(fast.read(ClockKind::kWall, 10s), 10s + 1ms);
  EXPECT_EQ(fast.drift_ppm(), 100);
  sim::NodeClock slow;
  slow.set_drift(-250, 0s);
  EXPECT_EQ(slow.read(ClockKind::kWall, 1s), 1s - 250us);
  // Readings truncate to whole nanoseconds: 3 ns at 1.5x reads 4 ns.
  sim::NodeClock half_again;
  half_again.set_drift(500'000, 0s);
  EXPECT_EQ(half_again.read(ClockKind::kWall, 3ns), 4ns);
}

TEST(NodeClock, DriftIsPiecewiseFromTheMomentItChanges) {
  sim::NodeClock c;
  c.set_drift(1000, 0s);  // +1 ms per second for 10 s
  c.set_drift(-1000, 10s);
  EXPECT_EQ(c.read(ClockKind::kWall, 10s), 10s + 10ms);
  EXPECT_EQ(c.read(ClockKind::kWall, 20s), 20s);
  c.set_drift(0, 20s);
  EXPECT_EQ(c.read(ClockKind::kMonotonic, 30s), 30s);
}

TEST(NodeClock, TrueTimeWhenIsTheFirstInstantTheClockReadsTheValue) {
  sim::Rng r(8);
  for (int i = 0; i < 5000; ++i) {
    sim::NodeClock c;
    const sim::Time changed = sim::Duration{r.uniform(0, 1'000'000'000)};
    c.set_drift(r.uniform(-999'999, 1'000'000), changed);
    if (r.chance(1, 2)) c.jump(ClockKind::kWall, sim::Duration{r.uniform(-2'000'000'000, 2'000'000'000)}, changed);
    const ClockKind k = r.chance(1, 2) ? ClockKind::kWall : ClockKind::kMonotonic;
    const sim::Time reading = c.read(k, changed) + sim::Duration{r.uniform(0, 5'000'000'000)};
    const sim::Time t = c.true_time_when(k, reading, changed);
    ASSERT_GE(c.read(k, t), reading) << "ppm " << c.drift_ppm();
    if (t > changed) {
      ASSERT_LT(c.read(k, t - 1ns), reading) << "ppm " << c.drift_ppm();
    }
  }
  sim::NodeClock c;
  EXPECT_EQ(c.true_time_when(ClockKind::kWall, 1s, 5s), 5s) << "a reading already passed is due now";
}

TEST(ClockTimers, AForwardWallJumpFiresAWallTimerEarly) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("p", [&](sim::Process& p) {
    p.sleep_until(ClockKind::kWall, 10s);
    w.note("woke, wall reads " + sim::format_duration(p.node().wall()));
  });
  jump_at(w, n, 3s, ClockKind::kWall, 5s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("5s woke, wall reads 10s"));
}

TEST(ClockTimers, AForwardWallJumpPastTheDeadlineFiresTheTimerAtTheJump) {
  World w;
  sim::Node& n = w.node("N");
  n.at_clock(ClockKind::kWall, 10s, [&] { w.note("wall timer, wall reads " + sim::format_duration(n.wall())); });
  jump_at(w, n, 3s, ClockKind::kWall, 1h);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3s wall timer, wall reads 3603s"));
}

TEST(ClockTimers, ABackwardWallJumpDelaysAWallTimer) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("p", [&](sim::Process& p) {
    p.sleep_until(ClockKind::kWall, 10s);
    w.note("woke, wall reads " + sim::format_duration(p.node().wall()));
  });
  jump_at(w, n, 3s, ClockKind::kWall, -2s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("12s woke, wall reads 10s"));
}

TEST(ClockTimers, MonotonicTimersIgnoreWallJumpsAndKeepTheirOrder) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.node("B");
  a.after(10s, [&] { w.note("A first"); });
  b.after(10s, [&] { w.note("B"); });
  a.after(10s, [&] { w.note("A second"); });
  a.spawn("p", [&](sim::Process& p) {
    p.sleep(10s);
    w.note("A process, monotonic reads " + sim::format_duration(p.node().monotonic()));
  });
  jump_at(w, a, 3s, ClockKind::kWall, 5s);
  jump_at(w, a, 4s, ClockKind::kWall, -20s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("10s A first", "10s B", "10s A second", "10s A process, monotonic reads 10s"));
}

TEST(ClockTimers, WallTimersWithOneDeadlineKeepTheirOrderAcrossAJump) {
  World w;
  sim::Node& n = w.node("N");
  for (int i = 0; i < 4; ++i) n.at_clock(ClockKind::kWall, 10s, [&w, i] { w.note("timer " + std::to_string(i)); });
  jump_at(w, n, 3s, ClockKind::kWall, 2s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("8s timer 0", "8s timer 1", "8s timer 2", "8s timer 3"));
}

TEST(ClockTimers, AMonotonicJumpMovesMonotonicTimersButNotWallTimers) {
  World w;
  sim::Node& n = w.node("N");
  n.after(10s, [&] { w.note("monotonic timer"); });
  n.at_clock(ClockKind::kWall, 10s, [&] { w.note("wall timer"); });
  jump_at(w, n, 1s, ClockKind::kMonotonic, 4s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("6s monotonic timer", "10s wall timer"));
}

TEST(ClockTimers, DriftChangesWhenASleepEndsExactly) {
  World w;
  sim::Node& n = w.node("N");
  w.sim.set_drift(n.id(), 1000);  // 1000 ppm fast
  n.spawn("p", [&](sim::Process& p) {
    p.sleep(1s);
    // The first instant at which the clock reads 1 s: ceil(1e9 / 1.001) ns.
    w.note("woke at true " + std::to_string(p.sim().now().count()) + "ns, monotonic " +
           std::to_string(p.node().monotonic().count()) + "ns");
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("999.001ms woke at true 999001000ns, monotonic 1000000001ns"));
}

TEST(ClockTimers, ADriftChangeDuringASleepMovesItsEnd) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("p", [&](sim::Process& p) {
    p.sleep(10s);
    w.note("woke at true " + std::to_string(p.sim().now().count()) + "ns");
  });
  // From 5 s the clock runs 10 % fast: the 5 s left take 5/1.1 s, rounded up.
  w.sim.at(
      5s, [&] { w.sim.set_drift(n.id(), 100'000); }, sim::EventClass::kFault);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("9.545454546s woke at true 9545454546ns"));
}

TEST(ClockTimers, ASlowClockDelaysTimersAndObserverTimersFollowNodeClocks) {
  World w;
  sim::Node& n = w.node("N");
  w.sim.set_drift(n.id(), -500'000);  // half speed
  n.after(1s, [&] { w.note("node timer"); });
  w.sim.observe_clock(n.id(), ClockKind::kWall, 3s, [&] { w.note("observer on N's wall clock"); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s node timer", "6s observer on N's wall clock"));
}

TEST(ClockTimers, ACancelledTimerStaysCancelledAfterAClockStep) {
  World w;
  sim::Node& n = w.node("N");
  const sim::TimerId t = n.at_clock(ClockKind::kWall, 10s, [&] { w.note("must not run"); });
  n.at_clock(ClockKind::kWall, 11s, [&] { w.note("other timer"); });
  w.sim.at(1s, [&] { n.cancel(t); });
  jump_at(w, n, 2s, ClockKind::kWall, 3s);
  w.run();
  EXPECT_THAT(w.log, ElementsAre("8s other timer"));
}

// Periodic timers (Node::every): each beat is measured from the previous one.

TEST(PeriodicTimers, BeatEveryPeriodUntilCancelled) {
  World w;
  sim::Node& n = w.node("N");
  const sim::TimerId t = n.every(1s, [&] { w.note("beat"); });
  w.sim.at(3500ms, [&] { n.cancel(t); });
  w.run(10s);
  EXPECT_THAT(w.log, ElementsAre("1s beat", "2s beat", "3s beat"));
}

TEST(PeriodicTimers, ACallbackThatCancelsItsOwnTimerEndsIt) {
  World w;
  sim::Node& n = w.node("N");
  int beats = 0;
  sim::TimerId t;
  t = n.every(1s, [&] {
    w.note("beat");
    // Timers set meanwhile may take other slots and move the timer table.
    for (int i = 0; i < 100; ++i) n.after(1h, [] {});
    if (++beats == 2) n.cancel(t);
  });
  w.run(10s);
  EXPECT_THAT(w.log, ElementsAre("1s beat", "2s beat"));
}

TEST(PeriodicTimers, APauseDelaysTheBeatWhichThenCountsFromWhenItRan) {
  World w;
  sim::Node& n = w.node("N");
  n.every(1s, [&] { w.note("beat"); });
  w.sim.at(
      1500ms, [&] { w.sim.pause(n.id(), 2s); }, sim::EventClass::kFault);
  w.run(6s);
  EXPECT_THAT(w.log, ElementsAre("1s beat", "3.5s beat", "4.5s beat", "5.5s beat"));
}

TEST(PeriodicTimers, AMonotonicJumpMovesTheNextBeatAndLeavesNoStaleOne) {
  // The jump moves the pending beat earlier; the beat's original event must
  // not fire a second beat later on.
  World w;
  sim::Node& n = w.node("N");
  n.every(1s, [&] { w.note("beat, monotonic reads " + sim::format_duration(n.monotonic())); });
  jump_at(w, n, 1500ms, ClockKind::kMonotonic, 300ms);
  w.run(4s);
  EXPECT_THAT(w.log, ElementsAre("1s beat, monotonic reads 1s", "1.7s beat, monotonic reads 2s",
                                 "2.7s beat, monotonic reads 3s", "3.7s beat, monotonic reads 4s"));
}

TEST(PeriodicTimers, ACrashDropsThePeriodicTimer) {
  World w;
  sim::Node& n = w.node("N");
  n.every(1s, [&] { w.note("beat"); });
  w.sim.at(
      2500ms, [&] { w.sim.crash(n.id()); }, sim::EventClass::kFault);
  w.sim.at(
      3s, [&] { w.sim.restart(n.id()); }, sim::EventClass::kFault);
  w.run(6s);
  EXPECT_THAT(w.log, ElementsAre("1s beat", "2s beat"));
}

}  // namespace
