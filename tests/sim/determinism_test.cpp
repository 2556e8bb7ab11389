// A run is a pure function of its inputs and seed: the trace fingerprint of a
// busy workload (random latency, loss, random sleeps, every kind of fault) is
// the same for the same seed, differs for another seed, and does not depend
// on anything else running in the process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using simtest::text;
using simtest::text_of;

/// Five nodes calling each other at random with every fault the engine has.
class Workload {
 public:
  explicit Workload(std::uint64_t seed) : s(seed) {
    s.set_network({1ms, 30ms, 50'000'000});  // 5 % loss
    for (int i = 0; i < 5; ++i) {
      sim::Node& n = s.add_node("n" + std::to_string(i));
      servers_.push_back(std::make_unique<Server>(*this, n));
      n.set_behaviour(servers_.back().get());
      start_client(n);
    }
    s.at(
        100ms, [this] { s.clock_jump(1, sim::ClockKind::kWall, 1s); }, sim::EventClass::kFault);
    s.at(
        150ms, [this] { s.set_drift(2, 200); }, sim::EventClass::kFault);
    s.at(
        200ms, [this] { s.pause(3, 300ms); }, sim::EventClass::kFault);
    s.at(
        400ms,
        [this] {
          partition_ = s.add_partition(sim::Partition{{}, {4}, false});
        },
        sim::EventClass::kFault);
    s.at(
        600ms, [this] { s.remove_partition(partition_); }, sim::EventClass::kFault);
    s.at(
        650ms, [this] { s.add_slow(1, 15ms); }, sim::EventClass::kFault);
    s.at(
        700ms, [this] { s.crash(0); }, sim::EventClass::kFault);
    s.at(
        800ms, [this] { s.restart(0); }, sim::EventClass::kFault);
  }

  sim::Simulation s;

 private:
  struct Server final : sim::NodeBehaviour {
    Server(Workload& w, sim::Node& n) : w(w), node(n), rng(w.s.rng("server-" + n.name())) {}
    void on_message(const sim::Message& m) override {
      w.s.record(node.name(), "recv",
                 {{"from", w.s.node(m.from).name()}, {"body", text_of(m)}, {"sent_at", m.sent_at}, {"id", m.id}});
      if (rng.chance(9, 10)) node.reply(m, text("re:" + text_of(m)));
    }
    void on_crash() override { w.s.record(node.name(), "crash"); }
    void on_restart() override {
      w.s.record(node.name(), "restart");
      w.start_client(node);
    }
    Workload& w;
    sim::Node& node;
    sim::Rng rng;
  };

  void start_client(sim::Node& n) {
    n.spawn("client", [this](sim::Process& p) {
      sim::Node& me = p.node();
      sim::Rng rng = s.rng("client-" + me.name() + "-" + std::to_string(me.incarnation()));
      for (int i = 0;; ++i) {
        p.sleep(rng.uniform(1ms, 15ms));
        auto to = static_cast<sim::NodeId>(rng.below(s.node_count()));
        if (to == me.id()) continue;
        auto reply = p.call(to, text(me.name() + "#" + std::to_string(i)), 25ms);
        s.record(me.name(), reply ? "reply" : "timeout",
                 {{"to", s.node(to).name()}, {"monotonic", me.monotonic()}, {"wall", me.wall()}});
      }
    });
  }

  std::vector<std::unique_ptr<Server>> servers_;
  std::uint64_t partition_ = 0;
};

std::uint64_t fingerprint_of(std::uint64_t seed, std::size_t* events = nullptr) {
  Workload w(seed);
  w.s.run_until(1s);
  if (events != nullptr) *events = w.s.trace().events().size();
  return w.s.trace().fingerprint();
}

TEST(Determinism, TheSameSeedGivesTheSameTraceFingerprint) {
  std::size_t events = 0;
  const std::uint64_t first = fingerprint_of(42, &events);
  EXPECT_GT(events, 200u) << "the workload must be busy enough to mean something";
  EXPECT_EQ(fingerprint_of(42), first);
  // And the traces are identical line by line, not just by hash.
  Workload a(42), b(42);
  a.s.run_until(1s);
  b.s.run_until(1s);
  std::ostringstream ja, jb;
  a.s.trace().write_jsonl(ja);
  b.s.trace().write_jsonl(jb);
  EXPECT_EQ(ja.str(), jb.str());
  EXPECT_EQ(a.s.events_processed(), b.s.events_processed());
}

TEST(Determinism, ADifferentSeedGivesADifferentTraceFingerprint) {
  const std::uint64_t base = fingerprint_of(42);
  for (std::uint64_t seed : {43ULL, 1ULL, 0ULL}) EXPECT_NE(fingerprint_of(seed), base) << "seed " << seed;
}

TEST(Determinism, TwoSimulationsInterleavedInOneProcessDoNotDisturbEachOther) {
  const std::uint64_t alone_7 = fingerprint_of(7);
  const std::uint64_t alone_8 = fingerprint_of(8);
  Workload a(7);
  Workload b(8);
  for (sim::Time t = 0ms; t < 1s; t += 3ms) {
    a.s.run_until(t);
    b.s.run_until(t);
  }
  a.s.run_until(1s);
  b.s.run_until(1s);
  EXPECT_EQ(a.s.trace().fingerprint(), alone_7);
  EXPECT_EQ(b.s.trace().fingerprint(), alone_8);
}

TEST(Determinism, ASimulationCanBeDrivenFromInsideAnotherOnesProcess) {
  // Nothing in the engine is global: a fiber of one simulation may run a
  // whole other simulation (e.g. a model that simulates a sub-system).
  const std::uint64_t alone = fingerprint_of(9);
  std::uint64_t inner_fingerprint = 0;
  sim::Simulation outer(1);
  outer.add_node("host").spawn("driver", [&](sim::Process& p) {
    Workload inner(9);
    for (sim::Time t = 0ms; t <= 1s; t += 100ms) {
      inner.s.run_until(t);
      p.sleep(1ms);
    }
    inner_fingerprint = inner.s.trace().fingerprint();
  });
  outer.run_until(sim::kTimeMax);
  EXPECT_EQ(inner_fingerprint, alone);
}

TEST(Trace, EventsRenderAsJsonLinesWithFieldsInInsertionOrder) {
  sim::Trace t;
  t.add(1500ms, "A", "grant", {{"token", 7}, {"value", "c0\"ffee"}, {"ok", true}, {"ttl", sim::Duration{10s}}});
  t.add(2s, "line\nbreak", "x");
  std::ostringstream out;
  t.write_jsonl(out);
  EXPECT_EQ(out.str(),
            "{\"t\":1500000000,\"node\":\"A\",\"kind\":\"grant\",\"token\":7,\"value\":\"c0\\\"ffee\",\"ok\":true,"
            "\"ttl\":10000000000}\n"
            "{\"t\":2000000000,\"node\":\"line\\nbreak\",\"kind\":\"x\"}\n");
  EXPECT_EQ(t.fingerprint(), sim::fnv1a64(out.str()));
  EXPECT_EQ(sim::json_escape(std::string_view("\x01", 1)), "\\u0001");
}

TEST(Trace, ADisabledTraceRecordsNothing) {
  sim::Simulation s(1);
  s.trace().set_enabled(false);
  s.record("A", "ignored");
  EXPECT_TRUE(s.trace().events().empty());
  const std::uint64_t empty = s.trace().fingerprint();
  s.trace().set_enabled(true);
  s.record("A", "kept", {{"n", 1}});
  EXPECT_EQ(s.trace().events().size(), 1u);
  EXPECT_NE(s.trace().fingerprint(), empty);
}

}  // namespace
