// real/fault_env.cpp — faults on real processes (real/fault_env.hpp).
#include "real/fault_env.hpp"

#include <nlohmann/json.hpp>

namespace fencesim::real {

RedisProc* find_proc(Run& run, const std::string& name) {
  for (auto* v : {&run.redis, &run.sentinels, &run.etcd}) {
    for (auto& p : *v) {
      if (p.name == name) return &p;
    }
  }
  return nullptr;
}

/// The node a role alias stands for now.
std::string resolve_target(Run& run, const std::string& target) {
  if (target == "redis-primary") {
    const auto port = run.primary_port();
    return port ? run.redis_name_of_port(*port) : "redis-0";
  }
  if (target == "etcd-leader") {
    const std::string etcdctl = require_program("etcdctl", "etcd-client");
    ChildOptions e;
    e.env = {"ETCDCTL_API=3"};
    for (int attempt = 0; attempt < 20; ++attempt) {
      const auto r = run_command(
          {etcdctl, "--endpoints", run.etcd_endpoints, "--command-timeout=1s", "endpoint", "status", "-w", "json"},
          5000ms, e);
      try {
        const auto j = nlohmann::json::parse(r.out);
        for (const auto& st : j) {
          if (st["Status"]["leader"] == st["Status"]["header"]["member_id"]) {
            const std::string ep = st["Endpoint"];
            for (const auto& m : run.etcd) {
              if (ep == fmt::format("http://127.0.0.1:{}", m.port)) return m.name;
            }
          }
        }
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    throw std::runtime_error("fencesim-real: could not find the etcd leader");
  }
  return target;
}

/// A clock_jump, or a clock_drift's start (or its end: `end`), on a Redis
/// client's clocks or a shimmed server's (real/clocks.hpp). A jump's `by`
/// is scaled to real time; a drift's rate is not.
void apply_clock_fault(Run& r, const FaultSpec& f, const std::string& node, ClientState* c, bool end) {
  if (c) {
    if (f.kind == FaultKind::kClockJump) {
      c->clock.jump(f.clock, f.by);
    } else {
      c->clock.set_drift(end ? 0 : f.ppm);
    }
    c->gate.wake();
    if (c->lock) c->lock->clock_changed();
    return;
  }
  const auto it = r.server_clocks.find(node);
  if (it == r.server_clocks.end()) {
    r.say("no clock shim on " + node + ": clock fault not applied");
    return;
  }
  if (f.kind == FaultKind::kClockJump) {
    it->second->jump(f.clock, std::chrono::duration_cast<std::chrono::nanoseconds>(r.tb.real(f.by)));
  } else {
    it->second->set_drift(end ? 0 : f.ppm);
  }
  if (end) r.say(fmt::format("clock_drift of {} ended", node));
}

}  // namespace fencesim::real
