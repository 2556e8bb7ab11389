// real/fault_env.hpp — the fault verbs (models/faults.hpp FaultEnv) carried
// out on the real processes of a run, so that the model's one fault table
// (FaultKindInfo::apply, through apply_fault) drives the real stack too:
//
//   pause        a server: SIGSTOP, SIGCONT at the end; a client: its threads
//                stop at their next safepoint (Gate) and its Go helper gets
//                SIGSTOP; the resource: PostgreSQL's postmaster SIGSTOP
//   crash        a server: SIGKILL; a client: its sockets shut down, no
//                release, its etcd helper SIGKILLed (ClientState::crash)
//   restart      a server: started again on the same data folder and
//                arguments; a client: a new process (new connections)
//   clock_jump,  a Redis client's own clocks (real/clocks.hpp ClientClock) or
//   set_drift    a server's through fencesim-clock.so (ServerClock); a jump's
//                `by` is scaled to real time, a drift's rate is not
//   partition,   the runner's TCP proxies (real/links.hpp, LinkFaults)
//   heal, slow
//   failover     SENTINEL FAILOVER (redis.io "Redis Sentinel")
//   counter_reset  SET of the counter key on the primary / UPDATE of the
//                stored marks
//
// A verb the real stack cannot do returns false with the reason (the fault
// is then skipped with it); unsupported_reason (real/real.hpp) refuses
// those scenarios before anything starts. Used from the runner's thread only
// (it started every child, so a restarted one keeps its death signal).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/faults.hpp"
#include "real/run.hpp"

namespace fencesim::real {

/// The server process named `name` (redis-N, sentinel-N, etcd-N) or nullptr.
RedisProc* find_proc(Run& run, const std::string& name);
/// The node a role alias ("redis-primary", "etcd-leader") stands for now;
/// any other name is returned as it is. Throws std::runtime_error when the
/// etcd leader cannot be found.
std::string resolve_target(Run& run, const std::string& target);

/// The runner's timed actions (faults and their ends), run in time order;
/// actions due at the same instant run in the order they were added.
class Actions {
 public:
  void at(Clock::time_point t, std::function<void()> fn) { q_.emplace(t, std::move(fn)); }
  /// Runs every action due by now (including those a running one adds).
  void run_due();
  /// No action is left: every fault has started and ended.
  bool empty() const { return q_.empty(); }

 private:
  std::multimap<Clock::time_point, std::function<void()>> q_;
};

class RealFaultEnv final : public FaultEnv {
 public:
  RealFaultEnv(Run& run, std::vector<std::unique_ptr<ClientState>>& clients, Actions& actions)
      : run_(run), clients_(clients), actions_(actions) {}
  /// Schedules every fault of `faults` that starts before the run's end:
  /// each fires at its (scaled) instant through apply_fault.
  void schedule(const std::vector<FaultSpec>& faults);

  /// Real elapsed time in scenario time.
  Time now() override { return run_.tb.now(); }
  void record(FaultRecord rec) override;
  std::optional<std::string> resolve(const std::string& target, std::string& why) override;
  /// At the fault's scheduled instant plus `d` (not its late start).
  void after(Duration d, std::function<void(FaultEnv&)> then) override;

  bool pause(const std::string& node, Duration d, std::string& why) override;
  bool crash(const std::string& node, bool power_loss, std::string& why) override;
  bool restart(const std::string& node, std::string& why) override;
  bool clock_jump(const std::string& node, Duration by, ClockSelect clock, std::string& why) override;
  bool set_drift(const std::string& node, std::int64_t ppm, std::string& why) override;
  std::optional<std::uint64_t> partition(const std::vector<std::vector<std::string>>& groups,
                                         const std::vector<std::string>& isolate, bool one_way,
                                         std::string& why) override;
  void end_partition(std::uint64_t id) override { run_.links.end_partition(static_cast<int>(id)); }
  void heal() override { run_.links.heal(); }
  std::optional<std::uint64_t> slow(const std::string& node, Duration delay, std::string& why) override;
  void end_slow(const std::string&, Duration, std::uint64_t id) override { run_.links.end_slow(static_cast<int>(id)); }
  bool apply_service_fault(const FaultSpec& f, std::string& why) override;
  void reset_resource_marks(std::int64_t value) override;

 private:
  /// The end of a pause: SIGCONT, or the client's gate opened.
  void resume(const std::string& node);
  ClientState* client(const std::string& name);
  Run& run_;
  std::vector<std::unique_ptr<ClientState>>& clients_;
  Actions& actions_;
  Time at_{0};  ///< the scheduled instant of the fault (or end) being carried out
};

}  // namespace fencesim::real
