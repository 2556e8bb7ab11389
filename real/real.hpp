// real/real.hpp — run a scenario against the real stack (fencesim-real).
//
//   fencesim::real::RealOptions opt;  opt.scale = 0.25;
//   fencesim::real::RealResult r = fencesim::real::run_real(scenario, opt);
//   r.run.verdicts   // the same checkers as `fencesim run`, over a History
//                    // recorded from real processes
//
// The lock service runs as real processes on 127.0.0.1 in a temporary
// folder, on free ports: redis-server (primary and replicas) and Redis
// Sentinels (`redis-server --sentinel`), or an etcd cluster of `nodes`
// members. The resource is a private PostgreSQL cluster (initdb + postgres,
// run as the `postgres` user when the runner is root). Each scenario client
// is a thread of the runner with its own connections: Redis through hiredis
// with the Lua scripts the model stands for (models/redis/protocol.hpp), etcd
// through a Go helper (real/etcd-lock/main.go) built against etcd 3.4.23's
// own clientv3/concurrency (Debian golang-etcd-server-dev). Faults are
// applied at their (scaled) times through the model's fault table
// (models/faults.hpp apply_fault, real/fault_env.hpp RealFaultEnv): pause = SIGSTOP/SIGCONT of a server (of
// a client: its thread stops at its next safepoint and its Go helper gets
// SIGSTOP), crash = SIGKILL and restart on the same data folder (with
// lock.persistence, an AOF: appendfsync always / everysec; of a client: its
// sockets shut down without a release, its etcd helper SIGKILLed, back as a
// new client at restart_after), failover =
// SENTINEL FAILOVER, counter_reset = SET of the counter key / UPDATE of the
// stored token, clock_jump / clock_drift = a Redis server's clocks moved
// through the fencesim-clock.so preload shim, a Redis client's through its
// thread's own clocks (real/clocks.hpp; etcd clocks cannot be moved),
// partition / heal / slow (and lock.replication_delay) = the runner's TCP
// proxies on every client link and on each replica's link to redis-0
// (real/proxy.hpp; which links, real/links.hpp). The real processes are
// always stopped (also on an error, SIGINT or SIGTERM).
//
// Time: every duration of the scenario runs `scale` times as long in real
// time (0.25: a 60 s scenario takes 15 s); the History is recorded in the
// scenario's own time (real elapsed time / scale), so the checkers, the
// progress window and the reports read it unchanged. etcd's lease TTL is
// whole seconds: the scaled TTL is rounded up (and etcd raises it to its
// minimum, 1.5 × the election timeout).
//
// Not deterministic: a real run is one observation. The simulator's core
// never includes this (threads, wall clocks and OS randomness live here).
// docs/CONFORMANCE.md "Real-stack runs" lists what is supported and every
// known difference from the model.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/world.hpp"

namespace fencesim::process {
class TempDir;  // real/process.hpp
}  // namespace fencesim::process

namespace fencesim::real {

/// The scenario uses something this runner cannot do against real
/// processes (the message says what and why).
struct NotSupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Postgres;  // real/run.hpp

/// A private PostgreSQL server that outlives runs: the RealStack tests
/// share one (a ctest fixture stops it) and hand it to every run (RealOptions::postgres)
/// instead of an initdb and a server start per run (seconds each). Each run
/// makes a new database on it (dropping the last run's), so every run
/// starts from the same row. One run at a time; runs that pause the resource pause
/// this server (it gets SIGCONT at the next run's start).
class PostgresServer {
 public:
  /// Starts it in a temporary folder (kept if `keep_dir`). Throws
  /// MissingProgram naming the Debian package, or std::runtime_error with
  /// its log when it does not come up.
  explicit PostgresServer(bool keep_dir = false);
  /// One that outlives this process, in `shared_dir` (test processes run
  /// one after another share it: ctest runs each test in its own): attached
  /// to when it runs there, else started detached. Stopped only by
  /// stop_shared(shared_dir), which also removes the folder.
  explicit PostgresServer(const std::string& shared_dir);
  static void stop_shared(const std::string& shared_dir);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;
  Postgres& server() { return *pg_; }

 private:
  std::unique_ptr<process::TempDir> dir_;
  std::unique_ptr<Postgres> pg_;  // stopped before dir_ is removed
};

struct RealOptions {
  double scale = 1.0;           ///< real seconds per scenario second, (0, 10]
  bool keep_dir = false;        ///< keep the temporary folder (logs, data) for debugging
  std::ostream* log = nullptr;  ///< progress lines (server start, faults) or nullptr
  std::string helper_dir;       ///< where etcd-lock is; empty: beside the running program
  /// A shared PostgreSQL for the resource (the run works on a database of its
  /// own on it, dropped at the end); nullptr, or a scenario that pauses the
  /// resource: the run starts its own.
  PostgresServer* postgres = nullptr;
  /// End the run once every client has finished its iterations and every
  /// fault has started and ended (then 1 s of real time more), instead of
  /// at the scenario's duration. The verdicts are judged over the same
  /// duration as without it; what is not observed is only what happens
  /// with no client left (a lease expiring, a failover nobody waits for).
  /// The RealStack tests use it (`fencesim-real --stop-when-done`).
  bool stop_when_done = false;
};

struct RealResult {
  RunResult run;                      ///< verdicts, metrics and History as run_scenario's
  std::vector<std::string> versions;  ///< "redis-server 7.0.15", "etcd 3.4.23", "PostgreSQL 15.x"
  std::vector<std::string> remarks;   ///< what differs from the file (rounded etcd TTL, …)
  std::string temp_dir;
  double wall_seconds = 0;  ///< how long the run took, setup included
};

/// Why `s` cannot run against the real stack, or "" when it can.
std::string unsupported_reason(const Scenario& s);

/// Runs `s` against real processes. Throws NotSupported, MissingProgram
/// (real/process.hpp) naming the Debian package, or std::runtime_error when
/// a server does not come up (the message has the tail of its log).
RealResult run_real(const Scenario& s, const RealOptions& opt);

/// One line per property: "mutual_exclusion: sim violated, real violated"
/// and whether all agree (properties the real run cannot check are left
/// out: raft_safety). Used by `fencesim-real --compare` and the RealStack
/// tests.
struct Comparison {
  std::vector<std::string> lines;
  std::vector<Property> differing;
};
Comparison compare_verdicts(const std::vector<Verdict>& sim, const std::vector<Verdict>& real);

/// Marks the reports written by write_reports in `dir` as a real run:
/// a header on report.md and real.json (versions, scale, remarks).
void mark_real_reports(const std::string& dir, const RealResult& r, double scale);

}  // namespace fencesim::real
