// Fiber processes: sleeping, waking, request/reply, Promise and Mailbox.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using simtest::text;
using simtest::text_of;
using simtest::World;
using testing::ElementsAre;

TEST(Process, ASpawnedProcessRunsAtTheCurrentInstantAfterWhatIsAlreadyScheduled) {
  World w;
  sim::Node& a = w.node("A");
  w.note_at(0s, "observer scheduled first");
  a.spawn("p", [&](sim::Process& p) { w.note("process " + p.name() + " on " + p.node().name()); });
  w.note_at(0s, "observer scheduled after the spawn");
  w.run();
  EXPECT_THAT(w.log,
              ElementsAre("0s observer scheduled first", "0s process p on A", "0s observer scheduled after the spawn"));
}

TEST(Process, SleepWakesExactlyWhenTheMonotonicClockHasAdvancedByTheDuration) {
  World w;
  w.node("A").spawn("sleeper", [&](sim::Process& p) {
    p.sleep(250ms);
    w.note("woke at monotonic " + sim::format_duration(p.node().monotonic()));
    p.sleep(1500ms);
    w.note("woke again");
    p.sleep(0s);
    w.note("a zero sleep returns at the same instant");
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("250ms woke at monotonic 250ms", "1.75s woke again",
                                 "1.75s a zero sleep returns at the same instant"));
  EXPECT_EQ(w.sim.now(), 1750ms);
}

TEST(Process, YieldLetsEveryOtherEventOfTheInstantRunFirst) {
  World w;
  w.node("A").spawn("first", [&](sim::Process& p) {
    w.note("first before yield");
    p.yield();
    w.note("first after yield");
  });
  w.node("A").spawn("second", [&](sim::Process&) { w.note("second"); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("0s first before yield", "0s second", "0s first after yield"));
}

TEST(Process, NotifyWakesABlockedProcessAndATimeoutReportsFalse) {
  World w;
  sim::WaitHandle handle;
  w.node("A").spawn("waiter", [&](sim::Process& p) {
    handle = p.prepare_wait();
    const bool notified = p.block(sim::ClockKind::kMonotonic, p.node().monotonic() + 10s);
    w.note(notified ? "notified" : "timed out");
    handle = p.prepare_wait();
    const bool again = p.block(sim::ClockKind::kMonotonic, p.node().monotonic() + 2s);
    w.note(again ? "notified" : "timed out");
  });
  w.sim.at(3s, [&] { w.sim.notify(handle); });
  // A second notify of the same wait is a no-op; it must not wake the next one.
  w.sim.at(3s, [&] { w.sim.notify(handle); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3s notified", "5s timed out"));
}

TEST(Process, ANotifyForAWaitThatAlreadyTimedOutIsIgnored) {
  World w;
  sim::WaitHandle stale;
  sim::WaitHandle current;
  w.node("A").spawn("waiter", [&](sim::Process& p) {
    stale = p.prepare_wait();
    w.note(p.block(sim::ClockKind::kMonotonic, 1s) ? "notified" : "timed out");
    current = p.prepare_wait();
    w.note(p.block(sim::ClockKind::kMonotonic, 5s) ? "notified" : "timed out");
  });
  w.sim.at(2s, [&] { w.sim.notify(stale); });
  w.sim.at(3s, [&] { w.sim.notify(current); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1s timed out", "3s notified"));
}

TEST(Process, BlockForeverWaitsUntilNotified) {
  World w;
  sim::WaitHandle handle;
  w.node("A").spawn("waiter", [&](sim::Process& p) {
    handle = p.prepare_wait();
    w.note(p.block_forever() ? "notified" : "?");
  });
  w.sim.at(1h, [&] { w.sim.notify(handle); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("3600s notified"));
}

TEST(Process, ACallGetsItsReplyWithinTheTimeout) {
  World w;
  w.sim.set_network({10ms, 10ms, 0});
  sim::Node& server = w.listener("server", /*echo=*/true);
  w.node("client").spawn("c", [&](sim::Process& p) {
    auto reply = p.call(server.id(), text("hello"), 1s);
    ASSERT_TRUE(reply.has_value());
    w.note("client got " + text_of(*reply) + " in reply to " + std::to_string(reply->reply_to));
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("10ms server got hello from client", "20ms client got re:hello in reply to 1"));
}

TEST(Process, ARequestThatTimesOutReturnsNothingAndItsLateReplyIsDropped) {
  World w;
  w.sim.set_network({400ms, 400ms, 0});
  sim::Node& server = w.listener("server", /*echo=*/true);
  sim::Node& client = w.listener("client");
  client.spawn("c", [&](sim::Process& p) {
    auto reply = p.call(server.id(), text("slow"), 500ms);
    w.note(reply ? "got a reply" : "timed out");
    // The reply arrives at 800 ms; it must neither wake this process nor reach
    // the node's on_message as if it were a new request.
    auto second = p.call(server.id(), text("again"), 1s);
    w.note(second ? "got " + text_of(*second) : "timed out again");
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("400ms server got slow from client", "500ms timed out",
                                 "900ms server got again from client", "1.3s got re:again"));
}

TEST(Process, AReplyThatArrivesBeforeTheProcessAwaitsItIsKept) {
  World w;
  sim::Node& server = w.listener("server", /*echo=*/true);
  w.node("client").spawn("c", [&](sim::Process& p) {
    const std::uint64_t call = p.send_request(server.id(), text("q"));
    p.sleep(1s);  // the reply arrives at 2 ms, while the process sleeps
    auto reply = p.await_reply(call, p.node().monotonic() + 1s);
    w.note(reply ? "got " + text_of(*reply) : "nothing");
    // A forgotten call's reply is dropped.
    const std::uint64_t forgotten = p.send_request(server.id(), text("q2"));
    p.forget(forgotten);
    w.note(p.await_reply(forgotten, p.node().monotonic() + 1s) ? "got a forgotten reply"
                                                               : "forgotten call has no reply");
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1ms server got q from client", "1s got re:q", "1s forgotten call has no reply",
                                 "1.001s server got q2 from client"));
}

TEST(Promise, AWaitingProcessWakesWhenThePromiseIsSet) {
  World w;
  sim::Promise<int> promise(w.sim);
  w.node("A").spawn("waiter", [&](sim::Process& p) {
    const std::optional<int>& v = promise.wait(p);
    w.note("value " + std::to_string(v.value_or(-1)));
  });
  w.sim.at(2s, [&] { promise.set(7); });
  w.sim.at(3s, [&] { promise.set(8); });  // one-shot: ignored
  w.run();
  EXPECT_THAT(w.log, ElementsAre("2s value 7"));
  EXPECT_EQ(promise.value(), 7);
}

TEST(Promise, WaitUntilReturnsEmptyOnTimeoutAndAnAlreadySetValueAtOnce) {
  World w;
  sim::Promise<std::string> late(w.sim);
  sim::Promise<std::string> early(w.sim);
  early.set("ready");
  w.node("A").spawn("waiter", [&](sim::Process& p) {
    w.note(early.wait_until(p, 1h).value_or("none"));
    w.note(late.wait_until(p, p.node().monotonic() + 1s).value_or("none"));
    w.note(late.wait_until(p, p.node().monotonic() + 10s).value_or("none"));
  });
  w.sim.at(5s, [&] { late.set("late value"); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("0s ready", "1s none", "5s late value"));
  EXPECT_TRUE(late.ready());
}

TEST(Mailbox, ValuesAreReceivedInFifoOrderAndAnEmptyMailboxTimesOut) {
  World w;
  sim::Mailbox<int> box(w.sim);
  box.push(1);
  box.push(2);
  w.node("A").spawn("reader", [&](sim::Process& p) {
    for (;;) {
      auto v = box.receive(p, 2s);
      if (!v) {
        w.note("timed out");
        return;
      }
      w.note("got " + std::to_string(*v));
    }
  });
  w.sim.at(1s, [&] {
    box.push(3);
    box.push(4);
  });
  w.sim.at(2500ms, [&] { box.push(5); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("0s got 1", "0s got 2", "1s got 3", "1s got 4", "2.5s got 5", "4.5s timed out"));
  EXPECT_TRUE(box.empty());
}

TEST(Mailbox, AProcessCanFeedAnotherProcess) {
  World w;
  sim::Mailbox<std::string> box(w.sim);
  w.node("A").spawn("producer", [&](sim::Process& p) {
    for (int i = 0; i < 3; ++i) {
      p.sleep(100ms);
      box.push("item" + std::to_string(i));
    }
  });
  w.node("B").spawn("consumer", [&](sim::Process& p) {
    while (auto v = box.receive(p, 1s)) w.note("consumed " + *v);
  });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("100ms consumed item0", "200ms consumed item1", "300ms consumed item2"));
}

TEST(Simulation, RunUntilStopsAtTheEndTimeAndLaterEventsStayQueued) {
  World w;
  w.note_at(1s, "one");
  w.note_at(2s, "two");
  w.note_at(3s, "three");
  w.run(2s);
  EXPECT_THAT(w.log, ElementsAre("1s one", "2s two"));
  EXPECT_EQ(w.sim.now(), 2s);
  EXPECT_TRUE(w.sim.has_pending_events());
  w.run(10s);
  EXPECT_EQ(w.sim.now(), 10s) << "the clock advances to the end even without events";
  EXPECT_EQ(w.log.size(), 3u);
  EXPECT_FALSE(w.sim.has_pending_events());
}

TEST(Simulation, AnObserverCallbackForThePastRunsNow) {
  World w;
  w.note_at(5s, "at five");
  w.run(5s);
  w.note_at(1s, "asked for 1s");
  w.run();
  EXPECT_THAT(w.log, ElementsAre("5s at five", "5s asked for 1s"));
}

TEST(Simulation, TheEventBudgetStopsARunawayRun) {
  World w;
  std::function<void()> again = [&] { w.sim.at(w.sim.now(), again); };
  w.sim.at(0s, again);
  EXPECT_EQ(w.sim.run_until(1s, 1000), sim::RunStatus::kEventBudgetExceeded);
  EXPECT_EQ(w.sim.events_processed(), 1000u);
  EXPECT_EQ(w.sim.now(), 0s);
}

TEST(Simulation, AProcessThatThrowsEndsTheRunWithAModelBugNamingIt) {
  World w;
  w.node("A").spawn("buggy", [&](sim::Process& p) {
    p.sleep(1s);
    throw std::runtime_error("invariant broken");
  });
  try {
    w.run();
    FAIL() << "expected a ModelBug";
  } catch (const sim::ModelBug& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("buggy"));
    EXPECT_THAT(e.what(), testing::HasSubstr("invariant broken"));
  }
}

TEST(Simulation, NodeTimersRunAndCanBeCancelled) {
  World w;
  sim::Node& a = w.node("A");
  a.after(1s, [&] { w.note("one second"); });
  const sim::TimerId cancelled = a.after(2s, [&] { w.note("must not run"); });
  a.at_clock(sim::ClockKind::kWall, 3s, [&] { w.note("wall reads 3s"); });
  w.sim.at(500ms, [&] { a.cancel(cancelled); });
  w.run();
  EXPECT_THAT(w.log, ElementsAre("1s one second", "3s wall reads 3s"));
}

TEST(Simulation, NodesAreFoundByName) {
  World w;
  sim::Node& a = w.node("A");
  sim::Node& b = w.node("B");
  EXPECT_EQ(w.sim.find_node("A"), a.id());
  EXPECT_EQ(w.sim.find_node("B"), b.id());
  EXPECT_EQ(w.sim.find_node("C"), std::nullopt);
  EXPECT_EQ(w.sim.node_count(), 2u);
  EXPECT_EQ(&w.sim.node(b.id()), &b);
}

}  // namespace
