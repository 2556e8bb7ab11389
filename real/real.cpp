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

#include <algorithm>
#include <atomic>
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
#include "real/clocks.hpp"
#include "real/fault_env.hpp"
#include "real/locks.hpp"
#include "real/run.hpp"
#include "real/services.hpp"
#include "real/stacks.hpp"

namespace fencesim::real {

namespace {
/// Why client `c` of `s` cannot run against real servers ("" when it can).
std::string client_unsupported_reason(const Scenario& s, const ClientSpec& c) {
  // unsupported_reason has refused services without a real stack, Cluster and Redlock.
  if (c.program) return real_service(s.lock.service())->program_unsupported(s, c);
  if (c.workload.kind != WorkloadKind::kCounter && c.workload.kind != WorkloadKind::kSequenceAllocator &&
      c.workload.kind != WorkloadKind::kWriter) {
    return fmt::format("clients[{}].workload.kind \"{}\"", c.name, to_string(c.workload.kind));
  }
  if (c.check_lease_before_write || c.on_lease_loss != LeaseLossPolicy::kContinue || c.lease_loss_after) {
    return "client policies (check_lease_before_write, on_lease_loss, lease_loss_after) of client " + c.name;
  }
  if (c.resource != "resource") return "client " + c.name + " routed to a resource replica";
  if (c.ttl) return "a client's own ttl (clients[].ttl) of client " + c.name + ": every real client uses lock.ttl";
  if (c.library == ClientLibrary::kJetcd) {
    return "client " + c.name + "'s \"library\": \"jetcd\": the real etcd clients are etcd's Go client";
  }
  if (c.policy) return "a custom ClientPolicy (C++ only) of client " + c.name;
  return "";
}
}  // namespace

fs::path beside_program(const RealOptions& opt, const std::string& name) {
  const fs::path dir =
      opt.helper_dir.empty() ? fs::read_symlink("/proc/self/exe").parent_path() : fs::path(opt.helper_dir);
  return dir / name;
}

std::string unsupported_reason(const Scenario& s) {
  const RealService* svc = real_service(s.lock.service());
  if (svc == nullptr) {
    return fmt::format("lock.service \"{}\": only redis, etcd and zookeeper run against real servers",
                       to_string(s.lock.service()));
  }
  if (std::string why = svc->unsupported(s); !why.empty()) return why;
  if (multiple_locks(s.lock)) return "more than one lock (lock.keys): the runner takes lock.key only";
  if (s.network.loss_ppb > 0) {
    return "network.loss: the real links are TCP connections, which retransmit a lost segment (a delay, not a lost "
           "message); the proxy has no per-message loss";
  }
  if (std::string why = clock_unsupported_reason(s); !why.empty()) return why;
  if (s.resource.custom_check) return "a custom ResourceCheck (C++ only; the real resource is SQL)";
  if (s.resource.program) {
    return "a resource program (resource.program; the real resource is one PostgreSQL row with the built-in checks)";
  }
  if (s.resource.replicas > 0) return "resource.replicas: the real resource is one PostgreSQL row";
  if (s.resource.idempotent || s.resource.kind == ResourceKind::kIdempotent) return "an idempotent ledger";
  if (s.nemesis) return "a nemesis (materialize it first: fencesim write FILE --materialize-nemesis)";
  for (const ClientSpec& c : s.clients) {
    if (std::string why = client_unsupported_reason(s, c); !why.empty()) return why;
  }
  for (const FaultSpec& f : s.faults) {
    if (f.at_max) return "a fault with a ranged start (" + f.origin + ")";
    const FaultKindInfo& info = fault_info(f.kind);
    if (!info.in_real_stack) {
      return fmt::format("fault kind \"{}\" ({}) is not implemented in fencesim-real", info.name, f.origin);
    }
    // Clock faults: clock_unsupported_reason above; service faults: the runner's.
    if (info.family == FaultFamily::kLink) {
      if (std::string why = link_fault_reason(s, f); !why.empty()) return why;
    }
    if (info.kills && f.power_loss) {
      return "a power-loss crash (" + f.origin +
             "): a machine crash cannot be made real on this box: the servers share the runner's kernel, "
             "whose page cache keeps every write a killed process made (lock.persistence aof_always / "
             "aof_everysec with a plain crash runs)";
    }
    if (info.kills && f.target == "resource") return "a crash of the resource (" + f.origin + ")";
  }
  return "";
}

namespace {

/// SIGINT and SIGTERM stop the run (every server is stopped); SIGPIPE is
/// ignored: a line to a Go helper that a client crash has just killed must
/// not kill the runner (children get the default back: real/process.cpp).
/// The old handlers come back at the end of the run.
class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_pipe_);
    g_interrupted = false;
  }
  ~SignalGuard() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
};

/// The service's helpers (etcd's Go client) and, when a clock fault reaches
/// a server, the clock shim (with a remark per server clock_jump: its step
/// in real time).
void find_helpers(Run& r, const RealOptions& opt, RealResult& out) {
  const Scenario& s = r.s;
  real_service(s.lock.service())->find_helpers(r, opt);
  auto server_clock = [&s](const FaultSpec& f) {
    return fault_info(f.kind).family == FaultFamily::kClock && f.at < s.duration && !is_client(s, f.target);
  };
  if (std::none_of(s.faults.begin(), s.faults.end(), server_clock)) return;
  const fs::path shim = beside_program(opt, "fencesim-clock.so");
  if (::access(shim.c_str(), R_OK) != 0) {
    throw MissingProgram("fencesim-real: the clock shim " + shim.string() +
                         " is missing; it is built with fencesim-real (target fencesim_clock_shim)");
  }
  r.clock_shim = shim.string();
  for (const FaultSpec& f : s.faults) {
    if (f.kind != FaultKind::kClockJump || !server_clock(f)) continue;
    const char* which = f.clock == ClockSelect::kWall        ? "wall clock"
                        : f.clock == ClockSelect::kMonotonic ? "monotonic clock"
                                                             : "wall and monotonic clocks";
    out.remarks.push_back(
        fmt::format("{}: the {} of {} stepped by {:+.3f} s of real time ({} x scale {}) "
                    "through fencesim-clock.so",
                    f.origin, which, f.target, f.by.count() * opt.scale / 1e9, sim::format_duration(f.by), opt.scale));
  }
}

/// PostgreSQL, then the lock service; then every client's proxy to every
/// server and to the resource (real/proxy.hpp), so that link faults can
/// cut or slow it.
void start_stack(Run& r, const RealOptions& opt, RealResult& out) {
  const Scenario& s = r.s;
  // A pause of the resource (the one process fault it takes; a crash is
  // refused) stops its postmaster: a shared server would stop under every
  // other run on it, so such a run starts its own.
  const bool pauses_resource = std::any_of(s.faults.begin(), s.faults.end(), [](const FaultSpec& f) {
    return fault_info(f.kind).family == FaultFamily::kProcess && f.target == "resource";
  });
  if (opt.postgres && !pauses_resource) {
    r.pg = &opt.postgres->server();
  } else {
    r.say("starting PostgreSQL");
    r.own_pg = start_postgres_server(r.dir.path() / "postgres");
    r.pg = r.own_pg.get();
  }
  out.versions.push_back(r.pg->version);
  create_resource_database(r);
  real_service(s.lock.service())->start(r, opt, out);
  for (const ClientSpec& c : s.clients) {
    for (auto* v : {&r.redis, &r.sentinels, &r.etcd, &r.zk}) {
      for (const RedisProc& p : *v) r.net.add_link(c.name, p.name, p.port);
    }
    r.net.add_link(c.name, "resource", r.pg->port);
  }
}

/// The clients of a run and the threads that run them.
struct Crew {
  std::vector<std::unique_ptr<ClientState>> clients;
  std::vector<std::thread> threads;
  std::thread observer;
  /// Every client is done: its thread has returned (a crashed client waits
  /// for its restart on its thread) or its program said its main returned.
  bool all_done() const {
    return std::all_of(clients.begin(), clients.end(), [](const auto& c) { return c->thread_done || c->program_done; });
  }

  /// Every client with its lock (connections and helpers set up before time
  /// 0), each on its own thread, waiting at the start barrier.
  void start(Run& r) {
    for (std::size_t i = 0; i < r.s.clients.size(); ++i) {
      clients.push_back(std::make_unique<ClientState>(r, r.s.clients[i], i));
      // A program client brings its own lock client (docs/PROTOCOL.md "The real stack").
      if (!r.s.clients[i].program) clients.back()->lock = real_service(r.s.lock.service())->make_lock(*clients.back());
    }
    for (auto& c : clients) {
      ClientState* cp = c.get();
      threads.emplace_back([cp] {
        if (cp->spec.program) {
          program_main(*cp);
        } else {
          client_main(*cp);
        }
        cp->thread_done = true;
      });
    }
    std::unique_lock<std::mutex> l(r.start_mu);
    if (!r.start_cv.wait_for(l, 60s, [&] { return r.ready == clients.size(); })) {
      throw std::runtime_error("fencesim-real: the clients did not connect within 60 s");
    }
  }
  /// Time 0: the clients go, and the Redis lease observer starts (etcd's is
  /// the watch start_etcd began).
  void go(Run& r) {
    r.say("running");
    {
      std::lock_guard<std::mutex> l(r.start_mu);
      r.tb.t0 = Clock::now();
      r.running = true;
      r.go = true;
    }
    r.start_cv.notify_all();
    if (auto* observe = real_service(r.s.lock.service())->observe)
      observer = std::thread([&r, observe] { observe(r); });
  }
  /// Stops every thread: wakes whatever a client waits on and joins.
  void stop(Run& r) {
    r.stop = true;
    r.net.close_all();  // wakes a client that waits on a held connection
    {
      std::lock_guard<std::mutex> l(r.start_mu);  // wakes a client still at the start barrier
    }
    r.start_cv.notify_all();
    for (auto& c : clients) c->gate.wake();
    for (auto& c : clients) c->gate.open();
    // A client waiting for an answer that will not come (its request was
    // in a proxy at the end) gets EOF now instead.
    for (auto& c : clients) c->sockets.shutdown_all();
    // The Go helpers answer nothing more once killed: their readers see EOF.
    for (auto& c : clients) {
      if (c->helper) c->helper->child().signal(SIGCONT);
    }
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    if (observer.joinable()) observer.join();
    clients.clear();
    // A pause of the resource that outlasts the run ends with it (a shared
    // server serves the next run).
    if (r.pg) r.pg->signal(SIGCONT);
  }
};

/// The faults, on this thread, at their scaled instants through the model's
/// fault table (real/fault_env.hpp), until the run's end (or, with
/// `stop_when_done`, 1 s after the clients and the faults are all done).
void run_faults(Run& r, Crew& crew, bool stop_when_done) {
  const std::vector<FaultSpec> faults = draw_fault_times(r.s);
  Actions actions;
  RealFaultEnv env(r, crew.clients, actions);
  env.schedule(faults);
  auto end = r.tb.at(r.s.duration);
  bool done = false;
  while (Clock::now() < end) {
    if (g_interrupted) throw std::runtime_error("interrupted (SIGINT/SIGTERM): every server was stopped");
    actions.run_due();
    if (stop_when_done && !done && actions.empty() && crew.all_done()) {
      done = true;
      end = std::min(end, Clock::now() + 1s);
      r.say(fmt::format("every client and fault is done at {}: stopping in 1 s", format_time(r.tb.now())));
    }
    std::this_thread::sleep_for(2ms);
  }
}

/// Judges the History exactly as run_scenario does (raft_safety is not
/// checked: etcd's Raft log is not observed).
void judge(const Scenario& s, History h, RunResult& res) {
  res.seed = s.seed;
  res.faults = draw_fault_times(s);
  res.history = std::move(h);
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
}

}  // namespace

RealResult run_real(const Scenario& s, const RealOptions& opt) {
  if (std::string why = unsupported_reason(s); !why.empty()) throw NotSupported(why);
  if (!(opt.scale > 0 && opt.scale <= 10)) throw NotSupported("--scale must be in (0, 10]");
  if (opt.scale != 1 &&
      std::any_of(s.clients.begin(), s.clients.end(), [](const ClientSpec& c) { return c.program; })) {
    // A program's sleeps and its library's TTLs are in seconds of the
    // machine's time: they cannot be scaled from outside.
    throw NotSupported("program clients run on real time: use --scale 1");
  }
  const auto wall0 = Clock::now();
  RealResult out;
  TempDir dir(s.name, opt.keep_dir);
  out.temp_dir = dir.path().string();
  SignalGuard signals;
  auto run = std::make_unique<Run>(s, Timebase{opt.scale, Clock::now()}, dir, opt.log);
  Run& r = *run;
  Crew crew;
  try {
    find_helpers(r, opt, out);
    start_stack(r, opt, out);
    crew.start(r);
    crew.go(r);
    run_faults(r, crew, opt.stop_when_done);
    r.say("run ended; stopping");
    crew.stop(r);
    if (!r.own_pg) drop_resource_database(r);
  } catch (...) {
    // The servers stop in order as `run` goes (PostgreSQL with an immediate
    // shutdown, so that its backends exit before the folder is removed).
    crew.stop(r);
    if (!r.own_pg) {
      try {
        drop_resource_database(r);
      } catch (...) {  // the shared server's cleanup drops it in the end
      }
    }
    r.etcd_observer.reset();
    r.zk_observer.reset();
    throw;
  }
  r.etcd_observer.reset();
  r.zk_observer.reset();
  judge(s, std::move(r.h), out.run);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  return out;
}

PostgresServer::PostgresServer(bool keep_dir)
    : dir_(std::make_unique<TempDir>("postgres", keep_dir)), pg_(start_postgres_server(dir_->path() / "postgres")) {}

PostgresServer::PostgresServer(const std::string& shared_dir) : pg_(attach_postgres_server(shared_dir)) {}

void PostgresServer::stop_shared(const std::string& shared_dir) { stop_postgres_server(shared_dir); }

PostgresServer::~PostgresServer() = default;

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
