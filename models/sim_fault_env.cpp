// models/sim_fault_env.cpp — the fault verbs on a simulation
// (models/sim_fault_env.hpp).
#include "models/sim_fault_env.hpp"

namespace fencesim {

std::optional<sim::NodeId> SimFaultEnv::id_of(const std::string& node, std::string& why) const {
  auto id = sim_.find_node(node);
  if (!id) why = "unknown target " + node;
  return id;
}

void SimFaultEnv::after(Duration d, std::function<void(FaultEnv&)> then) {
  sim_.at(
      sim_.now() + d, [this, then = std::move(then)] { then(*this); }, sim::EventClass::kFault);
}

bool SimFaultEnv::pause(const std::string& node, Duration d, std::string& why) {
  const auto n = id_of(node, why);
  if (n) sim_.pause(*n, d);  // the engine resumes it after `d` (sim/faults.cpp)
  return n.has_value();
}

bool SimFaultEnv::crash(const std::string& node, bool power_loss, std::string& why) {
  const auto n = id_of(node, why);
  if (!n) return false;
  if (power_loss) {
    sim_.power_loss(*n);
  } else {
    sim_.crash(*n);
  }
  return true;
}

bool SimFaultEnv::restart(const std::string& node, std::string& why) {
  const auto n = id_of(node, why);
  if (n) sim_.restart(*n);
  return n.has_value();
}

bool SimFaultEnv::clock_jump(const std::string& node, Duration by, ClockSelect clock, std::string& why) {
  const auto n = id_of(node, why);
  if (!n) return false;
  if (clock != ClockSelect::kMonotonic) sim_.clock_jump(*n, sim::ClockKind::kWall, by);
  if (clock != ClockSelect::kWall) sim_.clock_jump(*n, sim::ClockKind::kMonotonic, by);
  return true;
}

bool SimFaultEnv::set_drift(const std::string& node, std::int64_t ppm, std::string& why) {
  const auto n = id_of(node, why);
  if (n) sim_.set_drift(*n, ppm);
  return n.has_value();
}

std::optional<std::uint64_t> SimFaultEnv::partition(const std::vector<std::vector<std::string>>& groups,
                                                    const std::vector<std::string>& isolate, bool one_way,
                                                    std::string& why) {
  auto ids = [this, &why](const std::vector<std::string>& names, std::vector<sim::NodeId>& out) {
    for (const std::string& name : names) {
      const auto n = id_of(name, why);
      if (!n) return false;
      out.push_back(*n);
    }
    return true;
  };
  sim::Partition p;
  for (const auto& g : groups) {
    p.groups.emplace_back();
    if (!ids(g, p.groups.back())) return std::nullopt;
  }
  if (!ids(isolate, p.isolate)) return std::nullopt;
  p.one_way = one_way;
  return sim_.add_partition(std::move(p));
}

std::optional<std::uint64_t> SimFaultEnv::slow(const std::string& node, Duration delay, std::string& why) {
  const auto n = id_of(node, why);
  if (!n) return std::nullopt;
  sim_.add_slow(*n, delay);
  return *n;  // a slowdown is undone by its delay, not by an id
}

void SimFaultEnv::end_slow(const std::string& node, Duration delay, std::uint64_t) {
  std::string why;
  if (const auto n = id_of(node, why)) sim_.add_slow(*n, -delay);
}

}  // namespace fencesim
