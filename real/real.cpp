// The real-stack runner (real/real.hpp). Sources of the behaviour driven:
//   Redis 7.0 (Debian redis-server 7.0.15): the lock scripts are the ones
//     tests/conformance/redis_conformance_test.cpp checks against the model
//     (SET NX PX + INCR, compare-and-PEXPIRE, compare-and-DEL; redis.io
//     "Distributed Locks with Redis"); Sentinel: sentinel.conf directives
//     monitor / down-after-milliseconds / failover-timeout, SENTINEL
//     get-master-addr-by-name and SENTINEL FAILOVER (redis.io "Redis
//     Sentinel").
//   etcd 3.4.23: clientv3/concurrency session.go and mutex.go, used as they
//     are by real/etcd-lock/main.go.
//   PostgreSQL 15: one row; the fencing check is the WHERE clause of one
//     UPDATE (read committed: a concurrent UPDATE re-evaluates the clause on
//     the newest row version, so check and write are atomic).
#include "real/real.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/checkers/checkers.hpp"
#include "models/checkers/metric_expect.hpp"
#include "models/faults.hpp"
#include "models/nemesis.hpp"
#include "models/redis/redis.hpp"
#include "real/client.hpp"
#include "real/fault_env.hpp"
#include "real/locks.hpp"
#include "real/run.hpp"
#include "real/stacks.hpp"

namespace fencesim::real {

std::string unsupported_reason(const Scenario& s) {
  if (s.lock.service != ServiceKind::kRedis && s.lock.service != ServiceKind::kEtcd) {
    return fmt::format("lock.service \"{}\": only redis and etcd run against real servers", to_string(s.lock.service));
  }
  if (s.lock.service == ServiceKind::kRedis && s.lock.redis.redlock > 0)
    return "Redlock (lock.redlock) is not supported";
  if (multiple_locks(s.lock)) return "more than one lock (lock.keys): the runner takes lock.key only";
  if (s.network.loss_ppb > 0) {
    return "network.loss: the real links are TCP connections, which retransmit a lost segment (a delay, not a lost "
           "message); the proxy has no per-message loss";
  }
  if (s.lock.service == ServiceKind::kRedis && s.lock.redis.cluster) {
    return "Redis Cluster (lock.cluster): the runner starts a primary with replicas and Sentinels, not a cluster";
  }
  if (std::string why = clock_unsupported_reason(s); !why.empty()) return why;
  if (s.resource.custom_check) return "a custom ResourceCheck (C++ only; the real resource is SQL)";
  if (s.resource.replicas > 0) return "resource.replicas: the real resource is one PostgreSQL row";
  if (s.resource.idempotent || s.resource.kind == ResourceKind::kIdempotent) return "an idempotent ledger";
  if (s.nemesis) return "a nemesis (materialize it first: fencesim write FILE --materialize-nemesis)";
  for (const ClientSpec& c : s.clients) {
    if (c.workload.kind != WorkloadKind::kCounter && c.workload.kind != WorkloadKind::kSequenceAllocator &&
        c.workload.kind != WorkloadKind::kWriter) {
      return fmt::format("clients[{}].workload.kind \"{}\"", c.name, to_string(c.workload.kind));
    }
    if (c.check_lease_before_write || c.on_lease_loss != LeaseLossPolicy::kContinue || c.lease_loss_after) {
      return "client policies (check_lease_before_write, on_lease_loss, lease_loss_after) of client " + c.name;
    }
    if (c.resource != "resource") return "client " + c.name + " routed to a resource replica";
    if (c.ttl) return "a client's own ttl (clients[].ttl) of client " + c.name + ": every real client uses lock.ttl";
    if (c.library != EtcdLibrary::kGo) {
      return "client " + c.name + "'s \"library\": \"jetcd\": the real etcd clients are etcd's Go client";
    }
    if (c.policy) return "a custom ClientPolicy (C++ only) of client " + c.name;
  }
  for (const FaultSpec& f : s.faults) {
    if (f.at_max) return "a fault with a ranged start (" + f.origin + ")";
    switch (f.kind) {
      case FaultKind::kPause:
      case FaultKind::kFailover:
      case FaultKind::kCounterReset:
      case FaultKind::kClockJump:  // clock_unsupported_reason above
      case FaultKind::kClockDrift: break;
      case FaultKind::kPartition:
      case FaultKind::kHeal:
      case FaultKind::kSlow:
        if (std::string why = link_fault_reason(s, f); !why.empty()) return why;
        break;
      case FaultKind::kCrash: {
        if (f.power_loss) {
          return "a power-loss crash (" + f.origin +
                 "): a machine crash cannot be made real on this box: the servers share the runner's kernel, "
                 "whose page cache keeps every write a killed process made (lock.persistence aof_always / "
                 "aof_everysec with a plain crash runs)";
        }
        if (f.target == "resource") return "a crash of the resource (" + f.origin + ")";
        break;
      }
      default:
        return fmt::format("fault kind \"{}\" ({}) is not implemented in fencesim-real", to_string(f.kind), f.origin);
    }
  }
  return "";
}

RealResult run_real(const Scenario& s, const RealOptions& opt) {
  if (std::string why = unsupported_reason(s); !why.empty()) throw NotSupported(why);
  if (!(opt.scale > 0 && opt.scale <= 10)) throw NotSupported("--scale must be in (0, 10]");
  const auto wall0 = Clock::now();
  RealResult out;
  TempDir dir(s.name, opt.keep_dir);
  out.temp_dir = dir.path().string();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  struct sigaction old_int {
  }, old_term{}, old_pipe{};
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  // A line to a Go helper that a client crash has just killed must not kill
  // the runner (children get the default back: real/process.cpp).
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old_pipe);
  struct Restore {
    struct sigaction i, t, p;
    ~Restore() {
      ::sigaction(SIGINT, &i, nullptr);
      ::sigaction(SIGTERM, &t, nullptr);
      ::sigaction(SIGPIPE, &p, nullptr);
    }
  } restore{old_int, old_term, old_pipe};
  g_interrupted = false;

  auto run = std::make_unique<Run>(s, Timebase{opt.scale, Clock::now()}, dir, opt.log);
  Run& r = *run;
  std::vector<std::unique_ptr<ClientState>> clients;
  std::vector<std::thread> threads;
  std::thread poller;
  auto stop_everything = [&] {
    r.stop = true;
    // Closing the proxies wakes a client that waits on a held connection.
    r.net.close_all();
    {
      std::lock_guard<std::mutex> l(r.start_mu);  // wakes a client still at the start barrier
    }
    r.start_cv.notify_all();
    for (auto& c : clients) c->gate.wake();
    for (auto& c : clients) c->gate.open();
    // The Go helpers answer nothing more once killed: their readers see EOF.
    for (auto& c : clients) {
      if (c->helper) c->helper->child().signal(SIGCONT);
    }
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    if (poller.joinable()) poller.join();
    clients.clear();
  };
  try {
    if (s.lock.service == ServiceKind::kEtcd) {
      const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
      const fs::path helper = opt.helper_dir.empty() ? self / "etcd-lock" : fs::path(opt.helper_dir) / "etcd-lock";
      if (::access(helper.c_str(), X_OK) != 0) {
        throw MissingProgram("the etcd client helper " + helper.string() +
                             " is missing; it is built with fencesim-real when golang-go and golang-etcd-server-dev "
                             "are installed (tools/deps.sh --test)");
      }
      r.helper = helper.string();
    }
    bool server_clock = false;
    for (const FaultSpec& f : s.faults) {
      bool client = false;
      for (const ClientSpec& c : s.clients) client = client || c.name == f.target;
      server_clock = server_clock || ((f.kind == FaultKind::kClockJump || f.kind == FaultKind::kClockDrift) &&
                                      f.at < s.duration && !client);
    }
    if (server_clock) {
      const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
      const fs::path shim =
          opt.helper_dir.empty() ? self / "fencesim-clock.so" : fs::path(opt.helper_dir) / "fencesim-clock.so";
      if (::access(shim.c_str(), R_OK) != 0) {
        throw MissingProgram("fencesim-real: the clock shim " + shim.string() +
                             " is missing; it is built with fencesim-real (target fencesim_clock_shim)");
      }
      r.clock_shim = shim.string();
      for (const FaultSpec& f : s.faults) {
        bool client = false;
        for (const ClientSpec& c : s.clients) client = client || c.name == f.target;
        if (f.kind != FaultKind::kClockJump || f.at >= s.duration || client) continue;
        const char* which = f.clock == ClockSelect::kWall        ? "wall clock"
                            : f.clock == ClockSelect::kMonotonic ? "monotonic clock"
                                                                 : "wall and monotonic clocks";
        out.remarks.push_back(fmt::format(
            "{}: the {} of {} stepped by {:+.3f} s of real time ({} x scale {}) "
            "through fencesim-clock.so",
            f.origin, which, f.target, f.by.count() * opt.scale / 1e9, sim::format_duration(f.by), opt.scale));
      }
    }
    r.say("starting PostgreSQL");
    start_postgres(r, out.versions);
    if (s.lock.service == ServiceKind::kRedis) {
      r.say("starting Redis");
      start_redis(r, out.versions);
    } else {
      r.say("starting etcd");
      start_etcd(r, out.versions);
      const int ttl = std::max(1, static_cast<int>(std::ceil(s.lock.ttl.count() * opt.scale / 1e9 - 1e-9)));
      if (std::abs(ttl - s.lock.ttl.count() * opt.scale / 1e9) > 1e-6) {
        out.remarks.push_back(fmt::format("etcd lease TTL {} s (the scaled TTL {:.3f} s rounded up to whole seconds)",
                                          ttl, s.lock.ttl.count() * opt.scale / 1e9));
      }
    }
    // Every client reaches every server and the resource through a proxy
    // of its own (real/proxy.hpp), so that link faults can cut or slow it.
    for (const ClientSpec& c : s.clients) {
      for (auto* v : {&r.redis, &r.sentinels, &r.etcd}) {
        for (const RedisProc& p : *v) r.net.add_link(c.name, p.name, p.port);
      }
      r.net.add_link(c.name, "resource", r.pg.port);
    }
    // Clients (their connections and helpers are set up before time 0).
    for (std::size_t i = 0; i < s.clients.size(); ++i) {
      clients.push_back(std::make_unique<ClientState>(r, s.clients[i], i));
      ClientState& c = *clients.back();
      c.lock = make_lock(c);
    }
    for (auto& c : clients) {
      ClientState* cp = c.get();
      threads.emplace_back([cp] { client_main(*cp); });
    }
    {
      std::unique_lock<std::mutex> l(r.start_mu);
      if (!r.start_cv.wait_for(l, 60s, [&] { return r.ready == clients.size(); })) {
        throw std::runtime_error("fencesim-real: the clients did not connect within 60 s");
      }
    }
    r.say("running");
    {
      std::lock_guard<std::mutex> l(r.start_mu);
      r.tb.t0 = Clock::now();
      r.running = true;
      r.go = true;
    }
    r.start_cv.notify_all();
    // The service observer: polls the primary (Redis); etcd's is the watch above.
    if (s.lock.service == ServiceKind::kRedis) {
      poller = std::thread([&r] {
        RedisConn conn;
        auto resolved = Clock::now();
        while (!r.stop) {
          std::this_thread::sleep_for(5ms);
          if (!conn.ok()) {
            const auto port = r.primary_port();
            if (!port || !conn.connect(*port, 200ms)) {
              // The primary is down: a lease ends unless a live replica or
              // its AOF (lock.persistence) holds it.
              if (r.sentinels.empty() && r.redis.size() == 1 && r.s.lock.redis.persistence == RedisPersistence::kNone) {
                const Time at = r.tb.now();
                std::lock_guard<std::mutex> g(r.hmu);
                for (auto it = r.live.begin(); it != r.live.end();) {
                  if (r.in_run(at)) r.h.lease_end(at, it->first, "redis-0 is down and no live replica holds it");
                  it = r.live.erase(it);
                }
              }
              continue;
            }
          }
          if (!r.sentinels.empty() && Clock::now() - resolved > 50ms) {
            resolved = Clock::now();
            const auto port = r.primary_port();
            if (port && *port != conn.port()) {
              conn.drop();
              continue;
            }
          }
          const auto sent = Clock::now();
          auto rep = wrap(conn.cmd({"GET", r.s.lock.key}));
          if (!rep) continue;  // paused or gone: judged on the next answer
          std::string cur = rep->type == REDIS_REPLY_STRING ? std::string(rep->str, rep->len) : "";
          if (rep->type == REDIS_REPLY_ERROR) continue;
          const int port = conn.port();
          // A primary that was demoted answers as a replica: ask Sentinel again.
          if (!r.sentinels.empty()) {
            auto role = wrap(conn.cmd({"ROLE"}));
            if (role && role->type == REDIS_REPLY_ARRAY && role->elements > 0 &&
                std::string(role->element[0]->str) != "master") {
              conn.drop();
              continue;
            }
          }
          const Time at = r.tb.now();
          std::lock_guard<std::mutex> g(r.hmu);
          for (auto it = r.live.begin(); it != r.live.end();) {
            if (it->first != cur && it->second < sent) {
              const std::string node = r.redis_name_of_port(port);
              std::string why = r.released.count(it->first) ? "deleted"
                                : cur.empty()               ? fmt::format("expired on {} wall clock", node)
                                              : fmt::format("{}, the current primary, does not hold it", node);
              if (r.in_run(at)) r.h.lease_end(at, it->first, why);
              it = r.live.erase(it);
            } else {
              ++it;
            }
          }
        }
      });
    }

    // Faults, on this thread (it started every child, so restarts keep
    // their death signal), in time order: each fault's start resolves its
    // target (a role alias names the node that has the role now), records
    // the fault and applies it; its end (pause) or restart (crash) follows.
    const std::vector<FaultSpec> faults = draw_fault_times(s);
    std::vector<std::pair<Clock::time_point, std::function<void()>>> actions;
    auto client_of = [&clients](const std::string& name) -> ClientState* {
      for (auto& c : clients) {
        if (c->spec.name == name) return c.get();
      }
      return nullptr;
    };
    for (const FaultSpec& f : faults) {
      if (f.at >= s.duration) continue;
      const auto start = r.tb.at(f.at);
      auto resolved = std::make_shared<std::string>(f.target);
      actions.emplace_back(start, [&r, f, resolved, &faults, client_of] {
        FaultRecord rec;
        rec.start = r.tb.now();
        rec.end = fault_end(f, faults);
        rec.kind = f.kind;
        rec.target = f.target;
        rec.detail = fault_detail(f);
        rec.origin = f.origin;
        try {
          *resolved = resolve_target(r, f.target);
        } catch (const std::exception& e) {
          rec.skipped = true;
          rec.skip_reason = e.what();
        }
        if (*resolved != f.target) rec.detail += (rec.detail.empty() ? "" : ", ") + ("now " + *resolved);
        r.say(fmt::format("fault {} {} {}", to_string(f.kind), *resolved, rec.detail));
        {
          std::lock_guard<std::mutex> g(r.hmu);
          r.h.faults.push_back(rec);
        }
        if (rec.skipped) return;
        switch (f.kind) {
          case FaultKind::kPause:
            if (ClientState* c = client_of(*resolved)) {
              c->gate.close();
              if (c->helper) c->helper->child().signal(SIGSTOP);
            } else if (RedisProc* p = find_proc(r, *resolved)) {
              p->child->signal(SIGSTOP);
            } else if (*resolved == "resource") {
              r.pg.child->signal(SIGSTOP);
            }
            break;
          case FaultKind::kCrash:
            if (ClientState* c = client_of(*resolved)) {
              if (!c->gate.down()) c->crash();
            } else if (RedisProc* p = find_proc(r, *resolved)) {
              p->child->kill_now();
            }
            break;
          case FaultKind::kFailover: {
            for (auto& sp : r.sentinels) {
              RedisConn c;
              if (!c.connect(sp.port, 500ms)) continue;
              auto rep = wrap(c.cmd({"SENTINEL", "FAILOVER", kSentinelName}));
              if (rep && rep->type == REDIS_REPLY_STATUS) return;
            }
            r.say("SENTINEL FAILOVER was refused by every sentinel");
            break;
          }
          case FaultKind::kPartition: {
            // Roles resolve now; the partition keeps the nodes it resolved to.
            std::vector<std::vector<std::string>> groups;
            for (const auto& g : f.isolate.empty() ? f.groups : std::vector<std::vector<std::string>>{f.isolate}) {
              std::vector<std::string> names;
              for (const std::string& n : g) {
                try {
                  names.push_back(resolve_target(r, n));
                } catch (const std::exception&) {
                  // a role with no node is left out
                }
              }
              groups.push_back(std::move(names));
            }
            *resolved = std::to_string(r.links.add_partition(std::move(groups), !f.isolate.empty(), f.one_way));
            break;
          }
          case FaultKind::kHeal: r.links.heal(); break;
          case FaultKind::kSlow:
            *resolved += "#" + std::to_string(r.links.add_slow(*resolved, r.tb.real(f.delay)));
            break;
          case FaultKind::kCounterReset:
            if (f.target == "resource") {
              PgConn c;
              c.c = PQconnectdb(r.pg_conninfo.c_str());
              const std::string sql =
                  fmt::format("UPDATE reg SET last_written = {0}, last_seen = {0} WHERE id = 1", f.value);
              PQclear(PQexec(c.c, sql.c_str()));
            } else {
              RedisConn c;
              const auto port = r.primary_port();
              if (port && c.connect(*port, 500ms)) {
                wrap(c.cmd({"SET", redis_counter_key(r.s.lock), std::to_string(f.value)}));
              }
            }
            break;
          case FaultKind::kClockJump:
          case FaultKind::kClockDrift: apply_clock_fault(r, f, *resolved, client_of(*resolved), false); break;
          default: break;
        }
      });
      if (f.kind == FaultKind::kClockDrift && f.duration) {
        actions.emplace_back(start + r.tb.real(*f.duration), [&r, f, resolved, client_of] {
          apply_clock_fault(r, f, *resolved, client_of(*resolved), true);
        });
      }
      if (f.kind == FaultKind::kPause) {
        actions.emplace_back(start + r.tb.real(f.duration.value_or(Duration{0})), [&r, resolved, client_of] {
          if (ClientState* c = client_of(*resolved)) {
            if (c->helper) c->helper->child().signal(SIGCONT);
            c->gate.open();
          } else if (RedisProc* p = find_proc(r, *resolved)) {
            p->child->signal(SIGCONT);
          } else if (*resolved == "resource") {
            r.pg.child->signal(SIGCONT);
          }
        });
      }
      if ((f.kind == FaultKind::kPartition || f.kind == FaultKind::kSlow) && f.duration) {
        // `resolved` holds the partition's id, or "node#id" for a slow fault.
        actions.emplace_back(start + r.tb.real(*f.duration), [&r, resolved, kind = f.kind] {
          const std::string& v = *resolved;
          const std::string id = kind == FaultKind::kSlow ? v.substr(v.rfind('#') + 1) : v;
          if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return;
          if (kind == FaultKind::kSlow) {
            r.links.end_slow(std::stoi(id));
          } else {
            r.links.end_partition(std::stoi(id));
          }
        });
      }
      if (f.kind == FaultKind::kCrash && f.restart_after) {
        actions.emplace_back(start + r.tb.real(*f.restart_after), [&r, resolved, client_of] {
          if (ClientState* c = client_of(*resolved)) {
            if (c->gate.down()) {
              c->lock->restart();
              c->gate.restart();
              r.say("restarted client " + c->spec.name);
            }
          } else if (RedisProc* p = find_proc(r, *resolved)) {
            ChildOptions o;
            o.err = p->dir / "stderr.log";
            o.env = p->env;
            p->child = std::make_unique<Child>(p->argv, o);
            r.say("restarted " + p->name);
          }
        });
      }
    }
    std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t next_action = 0;
    const auto end = r.tb.at(s.duration);
    while (Clock::now() < end) {
      if (g_interrupted) throw std::runtime_error("interrupted (SIGINT/SIGTERM): every server was stopped");
      const auto now = Clock::now();
      while (next_action < actions.size() && actions[next_action].first <= now) actions[next_action++].second();
      std::this_thread::sleep_for(2ms);
    }
    r.say("run ended; stopping");
    stop_everything();
  } catch (...) {
    // The servers stop in order as `run` goes (PostgreSQL with an immediate
    // shutdown, so that its backends exit before the folder is removed).
    stop_everything();
    r.etcd_observer.reset();
    throw;
  }
  r.etcd_observer.reset();

  // Judge the History exactly as run_scenario does.
  RunResult& res = out.run;
  res.seed = s.seed;
  res.faults = draw_fault_times(s);
  res.history = std::move(r.h);
  std::stable_sort(res.history.grants.begin(), res.history.grants.end(),
                   [](const GrantRecord& a, const GrantRecord& b) { return a.at < b.at; });
  for (std::size_t i = 0; i < res.history.grants.size(); ++i) res.history.grants[i].seq = i;
  std::stable_sort(res.history.resource_ops.begin(), res.history.resource_ops.end(),
                   [](const ResourceOpRecord& a, const ResourceOpRecord& b) { return a.at < b.at; });
  res.context.run_end = s.duration;
  res.context.last_fault_end = last_fault_end(res.faults, s.duration, res.context.any_fault);
  std::vector<Verdict> service;
  if (property_applies(s, Property::kRaftSafety)) {
    Verdict v;
    v.property = Property::kRaftSafety;
    v.status = Status::kNotApplicable;
    v.summary = "not checked on a real run: etcd's Raft log is not observed";
    service.push_back(v);
  }
  Scenario judged = s;
  judged.expect.erase(Property::kRaftSafety);
  res.verdicts = check_all(judged, res.history, res.context, service);
  res.metrics = compute_metrics(judged, res.history, res.context);
  res.metric_verdicts = check_metric_expectations(judged, res.metrics);
  res.all_met = true;
  for (const Verdict& v : res.verdicts) res.all_met = res.all_met && v.met;
  for (const MetricVerdict& v : res.metric_verdicts) res.all_met = res.all_met && v.met;
  res.trace.set_enabled(true);
  build_trace(res.history, res.trace);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  return out;
}

Comparison compare_verdicts(const std::vector<Verdict>& sim, const std::vector<Verdict>& real) {
  Comparison c;
  for (const Verdict& sv : sim) {
    if (sv.property == Property::kRaftSafety) continue;
    const Verdict* rv = nullptr;
    for (const Verdict& v : real) {
      if (v.property == sv.property) rv = &v;
    }
    const std::string rs = rv ? to_string(rv->status) : "missing";
    const bool same = rv && rv->status == sv.status;
    c.lines.push_back(fmt::format("{:<18} sim {:<14} real {:<14} {}", to_string(sv.property), to_string(sv.status), rs,
                                  same ? "same" : "DIFFERENT"));
    if (!same) c.differing.push_back(sv.property);
  }
  return c;
}

void mark_real_reports(const std::string& dir, const RealResult& r, double scale) {
  const fs::path md = fs::path(dir) / "report.md";
  std::string body;
  {
    std::ifstream in(md);
    std::stringstream ss;
    ss << in.rdbuf();
    body = ss.str();
  }
  std::string versions;
  for (const auto& v : r.versions) versions += (versions.empty() ? "" : "; ") + v;
  std::string head = fmt::format(
      "> **Real run** (fencesim-real): the scenario ran against real processes on 127.0.0.1 ({}), time scale {} "
      "(real seconds per scenario second), {:.1f} s of wall time. A real run is one observation, not a replay: "
      "running it again can give another History.\n",
      versions, scale, r.wall_seconds);
  for (const auto& x : r.remarks) head += "> " + x + "\n";
  std::ofstream(md) << head << "\n" << body;
  nlohmann::json j;
  j["real_run"] = true;
  j["versions"] = r.versions;
  j["scale"] = scale;
  j["wall_seconds"] = r.wall_seconds;
  j["remarks"] = r.remarks;
  std::ofstream(fs::path(dir) / "real.json") << j.dump(2) << "\n";
}

}  // namespace fencesim::real
