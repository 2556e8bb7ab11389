// models/sim_fault_env.hpp — the fault verbs (models/faults.hpp FaultEnv)
// carried out on a sim::Simulation: what a fault does in the simulated world.
//
//   class WorldFaultEnv final : public SimFaultEnv { ... resolve, the
//     service's own faults, the resource's marks ... };
//
// Nodes are looked up by name (sim::Simulation::find_node); a name no node
// has is refused ("unknown target NAME"). Every verb calls the one
// simulation function it stands for, so the events and random draws of a run
// are those of the engine's own fault functions (sim/faults.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "models/faults.hpp"
#include "models/history.hpp"
#include "sim/simulation.hpp"

namespace fencesim {

/// The verbs on a simulation and its History. It must live as long as the
/// simulation runs: after() schedules events that call back into it.
class SimFaultEnv : public FaultEnv {
 public:
  SimFaultEnv(sim::Simulation& s, History& h) : sim_(s), history_(h) {}
  sim::Simulation& sim() { return sim_; }

  Time now() override { return sim_.now(); }
  void record(FaultRecord rec) override { history_.faults.push_back(std::move(rec)); }
  void after(Duration d, std::function<void(FaultEnv&)> then) override;

  bool pause(const std::string& node, Duration d, std::string& why) override;
  bool crash(const std::string& node, bool power_loss, std::string& why) override;
  bool restart(const std::string& node, std::string& why) override;
  bool clock_jump(const std::string& node, Duration by, ClockSelect clock, std::string& why) override;
  bool set_drift(const std::string& node, std::int64_t ppm, std::string& why) override;
  std::optional<std::uint64_t> partition(const std::vector<std::vector<std::string>>& groups,
                                         const std::vector<std::string>& isolate, bool one_way,
                                         std::string& why) override;
  void end_partition(std::uint64_t id) override { sim_.remove_partition(id); }
  void heal() override { sim_.heal(); }
  std::optional<std::uint64_t> slow(const std::string& node, Duration delay, std::string& why) override;
  void end_slow(const std::string& node, Duration delay, std::uint64_t id) override;

 protected:
  /// The node named `node`; nullopt and `why` when there is none.
  std::optional<sim::NodeId> id_of(const std::string& node, std::string& why) const;

 private:
  sim::Simulation& sim_;
  History& history_;
};

}  // namespace fencesim
