// Simulation::event_fingerprint: a running hash of the events the run loop
// processed. Equal for equal runs, whether or not anything is traced; it
// tells apart runs that differ only in an event nobody records.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using simtest::text;

/// A ping-pong between two nodes with random latency; `tell_bystander`: the
/// pinger also sends every message to a third node that ignores it (no
/// behaviour: the delivery is an engine event and nothing more). Every reply
/// is recorded in the trace if `trace`.
struct PingPong {
  explicit PingPong(std::uint64_t seed, bool trace = true, bool tell_bystander = false) : s(seed) {
    s.trace().set_enabled(trace);
    s.set_network({1ms, 20ms, 0});
    sim::Node& a = s.add_node("a");
    sim::Node& b = s.add_node("b");
    sim::Node& c = s.add_node("bystander");
    b.set_behaviour(&echo);
    echo.node = &b;
    a.spawn("pinger", [this, &b, &c, tell_bystander](sim::Process& p) {
      for (int i = 0; i < 50; ++i) {
        if (tell_bystander) p.node().send(c.id(), text("fyi"));
        auto reply = p.call(b.id(), text("ping"), 100ms);
        s.record("a", reply ? "pong" : "timeout", {{"i", i}});
        p.sleep(5ms);
      }
    });
  }
  struct Echo final : sim::NodeBehaviour {
    sim::Node* node = nullptr;
    void on_message(const sim::Message& m) override { node->reply(m, text("pong")); }
  };
  Echo echo;
  sim::Simulation s;
};

std::uint64_t traced_fingerprint_of(std::uint64_t seed, bool trace = true, bool tell_bystander = false) {
  PingPong w(seed, trace, tell_bystander);
  w.s.run_until(10s);
  return w.s.event_fingerprint();
}

TEST(EventFingerprint, EqualForTwoRunsOfOneSeed) {
  EXPECT_EQ(traced_fingerprint_of(5), traced_fingerprint_of(5));
  PingPong w(5);
  const std::uint64_t before = w.s.event_fingerprint();
  w.s.run_until(10s);
  EXPECT_GT(w.s.events_processed(), 100u);
  EXPECT_NE(w.s.event_fingerprint(), before) << "the events must have been folded in";
}

TEST(EventFingerprint, DiffersForAnotherSeed) {
  const std::uint64_t base = traced_fingerprint_of(5);
  for (std::uint64_t seed : {6ULL, 7ULL, 0ULL}) EXPECT_NE(traced_fingerprint_of(seed), base) << "seed " << seed;
}

TEST(EventFingerprint, IsTheSameWithTheTraceOff) {
  PingPong on(5, /*trace=*/true), off(5, /*trace=*/false);
  on.s.run_until(10s);
  off.s.run_until(10s);
  EXPECT_FALSE(on.s.trace().events().empty());
  EXPECT_TRUE(off.s.trace().events().empty());
  EXPECT_EQ(on.s.event_fingerprint(), off.s.event_fingerprint());
}

TEST(EventFingerprint, SeesADeliveryThatNothingRecords) {
  // The bystander's messages change nothing the trace shows (the latency
  // is fixed, so they take no draw from the network's stream that the ping
  // and pong would have got) — but they are delivered: engine events.
  PingPong quiet(5), told(5, true, /*tell_bystander=*/true);
  quiet.s.set_network({3ms, 3ms, 0});
  told.s.set_network({3ms, 3ms, 0});
  quiet.s.run_until(10s);
  told.s.run_until(10s);
  EXPECT_EQ(quiet.s.trace().fingerprint(), told.s.trace().fingerprint()) << "the same trace";
  EXPECT_GT(told.s.events_processed(), quiet.s.events_processed());
  EXPECT_NE(quiet.s.event_fingerprint(), told.s.event_fingerprint());
}

TEST(EventFingerprint, DependsOnWhenEachEventRan) {
  // Two callbacks at one instant, scheduled in either order: the same
  // events, processed in a different order.
  auto run = [](bool swap) {
    sim::Simulation s(1);
    s.add_node("n");
    s.at(swap ? 2ms : 1ms, [] {});
    s.at(swap ? 1ms : 2ms, [] {});
    s.run_until(1s);
    return s.event_fingerprint();
  };
  EXPECT_NE(run(false), run(true));
}

}  // namespace
