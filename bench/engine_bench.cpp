// Engine micro-benchmarks: the event queue against a std::priority_queue
// baseline, fiber switches (raw Boost.Context and through the scheduler),
// timer-driven processes, and the cost of a short simulation's setup and
// teardown. Figures and targets: docs/ENGINE.md "Performance".
//
//   build-x/bench/fencesim_engine_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace std::chrono_literals;

/// "<prefix><i>". (Not `"p" + std::to_string(i)`: GCC 12 at -O3 warns about
/// that with a false -Wrestrict, GCC bug 105329.)
std::string numbered(const char* prefix, int i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

// ------------------------------------------------------------ event queue --
//
// The "hold" model: the queue keeps `pending` events; each step pops the
// earliest and pushes one a random delay later, as a simulation does. One
// item = one pop + one push. Delays come from a precomputed table so that
// both queues see exactly the same work and the PRNG is not timed.

std::vector<sim::Duration> delay_table() {
  sim::Rng r(12345);
  std::vector<sim::Duration> d(1 << 16);
  for (auto& x : d) x = sim::Duration{r.uniform(1, 1'000'000)};
  return d;
}

void BM_EventQueue(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const std::vector<sim::Duration> delays = delay_table();
  const std::size_t mask = delays.size() - 1;
  sim::EventQueue q;
  q.reserve(pending + 1);
  std::size_t k = 0;
  for (std::size_t i = 0; i < pending; ++i) {
    q.push(delays[k++ & mask], sim::EventClass::kNormal, sim::EventType::kUser, static_cast<std::uint32_t>(i), 0);
  }
  for (auto _ : state) {
    const sim::Event e = q.pop();
    q.push(e.time + delays[k++ & mask], sim::EventClass::kNormal, sim::EventType::kUser, e.a, e.b);
  }
  benchmark::DoNotOptimize(q.top());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_EventQueue)->Arg(1000)->Arg(100000);

/// The baseline: a 32-byte event in std::priority_queue (a binary heap on a
/// std::vector), ordered by (time, sequence) like the engine's.
struct PlainEvent {
  std::int64_t time;
  std::uint64_t seq;
  std::uint64_t a;
  std::uint64_t b;
};
static_assert(sizeof(PlainEvent) == 32);
struct Later {
  bool operator()(const PlainEvent& x, const PlainEvent& y) const {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
};

void BM_StdPriorityQueue(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const std::vector<sim::Duration> delays = delay_table();
  const std::size_t mask = delays.size() - 1;
  std::vector<PlainEvent> storage;
  storage.reserve(pending + 1);
  std::priority_queue<PlainEvent, std::vector<PlainEvent>, Later> q(Later{}, std::move(storage));
  std::size_t k = 0;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) q.push(PlainEvent{delays[k++ & mask].count(), seq++, i, 0});
  for (auto _ : state) {
    const PlainEvent e = q.top();
    q.pop();
    q.push(PlainEvent{e.time + delays[k++ & mask].count(), seq++, e.a, e.b});
  }
  benchmark::DoNotOptimize(q.top());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_StdPriorityQueue)->Arg(1000)->Arg(100000);

// ----------------------------------------------------------- fiber switch --

/// Raw Boost.Context: one iteration is a round trip, two switches.
void BM_RawFiberSwitch(benchmark::State& state) {
  namespace ctx = boost::context;
  bool stop = false;
  ctx::fiber f{[&stop](ctx::fiber&& main) {
    while (!stop) main = std::move(main).resume();
    return std::move(main);
  }};
  for (auto _ : state) f = std::move(f).resume();
  stop = true;
  f = std::move(f).resume();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2);
  // Seconds per switch (printed with an SI prefix, e.g. "5.5ns").
  state.counters["per_switch"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RawFiberSwitch);

/// Two processes waking each other through the scheduler: each hop is a
/// notify (one queued event), a block (switch to the scheduler), a pop and a
/// resume (switch to the other process). One item = one hop.
void BM_ProcessPingPong(benchmark::State& state) {
  sim::Simulation s(1);
  s.trace().set_enabled(false);
  sim::Node& n = s.add_node("n");
  sim::WaitHandle handle[2];
  for (int me = 0; me < 2; ++me) {
    n.spawn(me == 0 ? "ping" : "pong", [&handle, me](sim::Process& p) {
      handle[me] = p.prepare_wait();
      if (me == 1) p.sim().notify(handle[0]);
      for (;;) {
        p.block_forever();
        handle[me] = p.prepare_wait();
        p.sim().notify(handle[1 - me]);
      }
    });
  }
  s.run_until(sim::kTimeZero, 10);  // both started and waiting on each other
  constexpr std::uint64_t kBatch = 10000;
  for (auto _ : state) s.run_until(sim::kTimeMax, kBatch);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_ProcessPingPong);

/// One process yielding: each yield is a queued event and two switches.
void BM_ProcessYield(benchmark::State& state) {
  sim::Simulation s(1);
  s.trace().set_enabled(false);
  s.add_node("n").spawn("yielder", [](sim::Process& p) {
    for (;;) p.yield();
  });
  constexpr std::uint64_t kBatch = 10000;
  for (auto _ : state) s.run_until(sim::kTimeMax, kBatch);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_ProcessYield);

// ----------------------------------------------------- timer-driven load --

/// `processes` processes (on 10 nodes), each sleeping a random 1 us..1 ms on
/// its node's monotonic clock and waking, forever. One item = one wake-up.
void BM_TimerProcesses(benchmark::State& state) {
  const auto processes = static_cast<int>(state.range(0));
  sim::Simulation s(7);
  s.trace().set_enabled(false);
  std::vector<sim::Node*> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(&s.add_node(numbered("n", i)));
  std::uint64_t wakeups = 0;
  for (int i = 0; i < processes; ++i) {
    nodes[static_cast<std::size_t>(i % 10)]->spawn(numbered("p", i), [&wakeups, i](sim::Process& p) {
      sim::Rng rng = p.sim().rng(numbered("sleeper-", i));
      for (;;) {
        p.sleep(rng.uniform(1us, 1ms));
        ++wakeups;
      }
    });
  }
  s.run_until(sim::kTimeZero);  // every process started and asleep
  wakeups = 0;
  constexpr std::uint64_t kBatch = 20000;
  for (auto _ : state) s.run_until(sim::kTimeMax, kBatch);
  state.SetItemsProcessed(static_cast<std::int64_t>(wakeups));
  state.counters["wakeups/s"] = benchmark::Counter(static_cast<double>(wakeups), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TimerProcesses)->Arg(100)->Arg(1000)->Arg(10000);

// -------------------------------------------------------------- short run --

struct Echo final : sim::NodeBehaviour {
  explicit Echo(sim::Node& n) : node(n) {}
  void on_message(const sim::Message& m) override { node.reply(m, m.body); }
  sim::Node& node;
};
struct Ping final : sim::Payload {
  std::string describe() const override { return "ping"; }
};

/// Constructs a Simulation with 3 nodes, spawns 5 processes that sleep and
/// call a server 10 times each, runs to the end and destroys it: the fixed
/// cost a whole scenario run pays around its events.
void BM_ShortRun(benchmark::State& state) {
  const auto ping = std::make_shared<Ping>();
  std::uint64_t events = 0;
  for (auto _ : state) {
    sim::Simulation s(1);
    s.trace().set_enabled(false);
    sim::Node& server = s.add_node("server");
    Echo echo(server);
    server.set_behaviour(&echo);
    sim::Node& c0 = s.add_node("client-0");
    sim::Node& c1 = s.add_node("client-1");
    for (int i = 0; i < 5; ++i) {
      (i % 2 == 0 ? c0 : c1).spawn("client", [&server, &ping](sim::Process& p) {
        for (int k = 0; k < 10; ++k) {
          p.sleep(10ms);
          benchmark::DoNotOptimize(p.call(server.id(), ping, 1s));
        }
      });
    }
    s.run_until(sim::kTimeMax);
    events += s.events_processed();
  }
  state.counters["events/run"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ShortRun)->Unit(benchmark::kMicrosecond);

/// Setup and teardown alone: a Simulation with 3 nodes and 5 processes that
/// end at once.
void BM_EmptyRun(benchmark::State& state) {
  for (auto _ : state) {
    sim::Simulation s(1);
    for (int i = 0; i < 3; ++i) s.add_node(numbered("n", i));
    for (int i = 0; i < 5; ++i) s.node(static_cast<sim::NodeId>(i % 3)).spawn("p", [](sim::Process&) {});
    s.run_until(sim::kTimeMax);
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmptyRun)->Unit(benchmark::kMicrosecond);

}  // namespace

// main() is in bench_main.cpp.
