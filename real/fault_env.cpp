// real/fault_env.cpp — faults on real processes (real/fault_env.hpp).
#include "real/fault_env.hpp"

#include <nlohmann/json.hpp>

#include <csignal>

#include "models/redis/redis.hpp"
#include "real/client.hpp"

namespace fencesim::real {

RedisProc* find_proc(Run& run, const std::string& name) {
  for (auto* v : {&run.redis, &run.sentinels, &run.etcd, &run.zk}) {
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
  if (target == "zk-leader") {
    // The four-letter `srvr`: "Mode: leader" (or "standalone" for one server).
    for (int attempt = 0; attempt < 20; ++attempt) {
      for (const RedisProc& p : run.zk) {
        const auto r = run_command({"/usr/bin/python3", "-c",
                                    fmt::format("import socket;s=socket.create_connection(('127.0.0.1',{}),1);"
                                                "s.sendall(b'srvr');print(s.recv(4096).decode())",
                                                p.port)},
                                   3000ms);
        if (r.status == 0 &&
            (r.out.find("Mode: leader") != std::string::npos || r.out.find("Mode: standalone") != std::string::npos)) {
          return p.name;
        }
      }
      std::this_thread::sleep_for(100ms);
    }
    throw std::runtime_error("fencesim-real: could not find the ZooKeeper leader");
  }
  return target;
}

void Actions::run_due() {
  while (!q_.empty() && q_.begin()->first <= Clock::now()) {
    auto fn = std::move(q_.begin()->second);
    q_.erase(q_.begin());
    fn();
  }
}

void RealFaultEnv::schedule(const std::vector<FaultSpec>& faults) {
  for (const FaultSpec& f : faults) {
    if (f.at >= run_.s.duration) continue;
    actions_.at(run_.tb.at(f.at), [this, f, &faults] {
      at_ = f.at;
      apply_fault(*this, f, faults);
    });
  }
}

void RealFaultEnv::record(FaultRecord rec) {
  run_.say(fmt::format("fault {} {} {}{}", to_string(rec.kind), rec.target, rec.detail,
                       rec.skipped ? " (skipped: " + rec.skip_reason + ")" : ""));
  std::lock_guard<std::mutex> g(run_.hmu);
  run_.h.faults.push_back(std::move(rec));
}

std::optional<std::string> RealFaultEnv::resolve(const std::string& target, std::string& why) {
  try {
    return resolve_target(run_, target);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

void RealFaultEnv::after(Duration d, std::function<void(FaultEnv&)> then) {
  const Time when = at_ + d;
  actions_.at(run_.tb.at(when), [this, when, then = std::move(then)] {
    at_ = when;
    then(*this);
  });
}

ClientState* RealFaultEnv::client(const std::string& name) {
  for (auto& c : clients_) {
    if (c->spec.name == name) return c.get();
  }
  return nullptr;
}

bool RealFaultEnv::pause(const std::string& node, Duration d, std::string& why) {
  if (ClientState* c = client(node)) {
    c->gate.close();
    if (c->helper) c->helper->child().signal(SIGSTOP);
    if (const int pid = c->program_pid.load(); pid > 0) ::kill(-pid, SIGSTOP);
  } else if (RedisProc* p = find_proc(run_, node)) {
    p->child->signal(SIGSTOP);
  } else if (node == "resource") {
    run_.pg->signal(SIGSTOP);
  } else {
    why = "no real process is node " + node;
    return false;
  }
  after(d, [this, node](FaultEnv&) { resume(node); });
  return true;
}

void RealFaultEnv::resume(const std::string& node) {
  if (ClientState* c = client(node)) {
    if (c->helper) c->helper->child().signal(SIGCONT);
    if (const int pid = c->program_pid.load(); pid > 0) ::kill(-pid, SIGCONT);
    c->gate.open();
  } else if (RedisProc* p = find_proc(run_, node)) {
    p->child->signal(SIGCONT);
  } else if (node == "resource") {
    run_.pg->signal(SIGCONT);
  }
}

bool RealFaultEnv::crash(const std::string& node, bool power_loss, std::string& why) {
  if (power_loss) {
    // unsupported_reason refuses it first; the reason is there.
    why = "a power-loss crash cannot be made real: the servers share the runner's kernel and its page cache";
    return false;
  }
  if (ClientState* c = client(node)) {
    if (!c->gate.down()) c->crash();
    return true;
  }
  if (RedisProc* p = find_proc(run_, node)) {
    p->child->kill_now();
    return true;
  }
  why = node == "resource" ? "a crash of the resource" : "no real process is node " + node;
  return false;
}

bool RealFaultEnv::restart(const std::string& node, std::string& why) {
  if (ClientState* c = client(node)) {
    if (c->gate.down()) {
      c->lock->restart();
      c->gate.restart();
      run_.say("restarted client " + c->spec.name);
    }
    return true;
  }
  RedisProc* p = find_proc(run_, node);
  if (!p) {
    why = "no real process is node " + node;
    return false;
  }
  ChildOptions o;
  o.err = p->dir / "stderr.log";
  o.env = p->env;
  p->child = std::make_unique<Child>(p->argv, o);
  run_.say("restarted " + p->name);
  return true;
}

bool RealFaultEnv::clock_jump(const std::string& node, Duration by, ClockSelect clock, std::string& why) {
  if (ClientState* c = client(node)) {
    c->clock.jump(clock, by);
    c->gate.wake();
    if (c->lock) c->lock->clock_changed();
    return true;
  }
  const auto it = run_.server_clocks.find(node);
  if (it == run_.server_clocks.end()) {
    why = "no clock shim on " + node;
    return false;
  }
  it->second->jump(clock, std::chrono::duration_cast<std::chrono::nanoseconds>(run_.tb.real(by)));
  return true;
}

bool RealFaultEnv::set_drift(const std::string& node, std::int64_t ppm, std::string& why) {
  if (ClientState* c = client(node)) {
    c->clock.set_drift(ppm);
    c->gate.wake();
    if (c->lock) c->lock->clock_changed();
    return true;
  }
  const auto it = run_.server_clocks.find(node);
  if (it == run_.server_clocks.end()) {
    why = "no clock shim on " + node;
    return false;
  }
  it->second->set_drift(ppm);
  if (ppm == 0) run_.say(fmt::format("clock_drift of {} ended", node));
  return true;
}

std::optional<std::uint64_t> RealFaultEnv::partition(const std::vector<std::vector<std::string>>& groups,
                                                     const std::vector<std::string>& isolate, bool one_way,
                                                     std::string&) {
  // The proxies keep the nodes the roles resolved to now.
  const bool isolating = !isolate.empty();
  return run_.links.add_partition(isolating ? std::vector<std::vector<std::string>>{isolate} : groups, isolating,
                                  one_way);
}

std::optional<std::uint64_t> RealFaultEnv::slow(const std::string& node, Duration delay, std::string&) {
  return run_.links.add_slow(node, run_.tb.real(delay));
}

bool RealFaultEnv::apply_service_fault(const FaultSpec& f, std::string& why) {
  if (f.kind == FaultKind::kFailover) {
    for (auto& sp : run_.sentinels) {
      RedisConn c;
      if (!c.connect(sp.port, 500ms)) continue;
      auto rep = wrap(c.cmd({"SENTINEL", "FAILOVER", kSentinelName}));
      if (rep && rep->type == REDIS_REPLY_STATUS) return true;
    }
    why = "SENTINEL FAILOVER was refused by every sentinel";
    return false;
  }
  // counter_reset of the service's counter: SET on the primary.
  RedisConn c;
  const auto port = run_.primary_port();
  if (!port || !c.connect(*port, 500ms)) {
    why = "the Redis primary did not answer";
    return false;
  }
  wrap(c.cmd({"SET", redis_counter_key(run_.s.lock), std::to_string(f.value)}));
  return true;
}

void RealFaultEnv::reset_resource_marks(std::int64_t value) {
  PgConn c;
  c.c = PQconnectdb(run_.pg_conninfo.c_str());
  const std::string sql = fmt::format("UPDATE reg SET last_written = {0}, last_seen = {0} WHERE id = 1", value);
  PQclear(PQexec(c.c, sql.c_str()));
}

}  // namespace fencesim::real
