// Fibers under load: pooled stacks reused by many processes, exceptions
// inside processes, cancellation mid-call. Mostly a target for the sanitizer
// build (FENCESIM_SANITIZE=ON), where a wrong fiber annotation shows up as a
// false stack-buffer-overflow or stack-use-after-scope report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>

#include "tests/sim/helpers.hpp"

namespace {

using namespace std::chrono_literals;
using simtest::text;
using simtest::World;

/// Uses `depth` frames of 1 KiB of stack each and returns a checksum, so the
/// compiler keeps the arrays.
int deep(int depth, int seed) {
  std::array<volatile char, 1024> buf;
  for (std::size_t i = 0; i < buf.size(); i += 64) buf[i] = static_cast<char>(seed + static_cast<int>(i));
  if (depth == 0) return buf[0];
  return deep(depth - 1, seed + 1) + buf[64];
}

TEST(Fibers, ThousandsOfShortProcessesReuseStacksCleanly) {
  World w(5);
  sim::Node& a = w.node("A");
  sim::Node& b = w.node("B");
  int finished = 0;
  int unwound = 0;
  struct Unwind {
    int& n;
    ~Unwind() { ++n; }
  };
  sim::Rng r = w.sim.rng("test");
  for (int wave = 0; wave < 40; ++wave) {
    w.sim.at(sim::Duration{wave * 10ms}, [&, wave] {
      for (int i = 0; i < 50; ++i) {
        sim::Node& n = (i % 2 == 0 || !b.up()) ? a : b;
        const sim::Duration nap = r.uniform(0ms, 15ms);
        n.spawn("w" + std::to_string(wave) + "-" + std::to_string(i), [&, nap, i](sim::Process& p) {
          Unwind u{unwound};
          volatile int sum = deep(8 + i % 8, i);
          try {
            if (i % 5 == 0) throw std::runtime_error("handled inside the process");
          } catch (const std::runtime_error&) {
            sum = sum + deep(4, i);
          }
          p.sleep(nap);
          sum = sum + deep(12, i);
          ++finished;
        });
      }
    });
  }
  // Crash B now and then: its processes unwind mid-sleep, in the middle of
  // their stacks.
  for (sim::Time t = 5ms; t < 400ms; t += 37ms) {
    w.sim.at(
        t, [&] { w.sim.crash(b.id()); }, sim::EventClass::kFault);
    w.sim.at(
        t + 1ms, [&] { w.sim.restart(b.id()); }, sim::EventClass::kFault);
  }
  w.run();
  EXPECT_EQ(unwound, 2000);
  EXPECT_GT(finished, 1000);
  EXPECT_LT(finished, 2000) << "some processes must have been cancelled by the crashes";
}

TEST(Fibers, AProcessMayCatchAndRethrowCancelledToCleanUp) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("p", [&](sim::Process& p) {
    try {
      p.sleep(1h);
    } catch (const sim::Cancelled&) {
      w.note("cleaning up");
      throw;
    }
  });
  w.sim.at(1s, [&] { w.sim.crash(n.id()); });
  w.run();
  EXPECT_THAT(w.log, testing::ElementsAre("1s cleaning up"));
}

TEST(Fibers, ACancelledProcessCannotBlockAgain) {
  World w;
  sim::Node& n = w.node("N");
  n.spawn("stubborn", [&](sim::Process& p) {
    try {
      p.sleep(1h);
    } catch (const sim::Cancelled&) {
      w.note("cancelled once");
    }
    try {
      p.sleep(1s);  // the node is down: this throws at once
    } catch (const sim::Cancelled&) {
      w.note("cancelled again");
    }
  });
  w.sim.at(1s, [&] { w.sim.crash(n.id()); });
  w.run();
  EXPECT_THAT(w.log, testing::ElementsAre("1s cancelled once", "1s cancelled again"));
}

TEST(Fibers, ProcessesBlockedInCallsAreCancelledCleanlyOnCrashAndTeardown) {
  // Every process is blocked in a call with a reply in flight when its node
  // crashes or the simulation is destroyed.
  for (bool crash : {true, false}) {
    int unwound = 0;
    {
      World w;
      w.sim.set_network({50ms, 50ms, 0});
      sim::Node& server = w.listener("server", /*echo=*/true);
      sim::Node& client = w.node("client");
      struct Unwind {
        int& n;
        ~Unwind() { ++n; }
      };
      for (int i = 0; i < 100; ++i) {
        client.spawn("c" + std::to_string(i), [&, i](sim::Process& p) {
          Unwind u{unwound};
          volatile int sum = deep(i % 16, i);
          (void)p.call(server.id(), text("q"), 1s);
          sum = sum + 1;
        });
      }
      if (crash) w.sim.at(75ms, [&] { w.sim.crash(client.id()); });
      w.run(75ms);
    }
    EXPECT_EQ(unwound, 100) << (crash ? "crash" : "teardown");
  }
}

}  // namespace
