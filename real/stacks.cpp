// real/stacks.cpp — the servers of a real run (real/stacks.hpp). Sources:
//   Redis 7.0 (Debian redis-server 7.0.15): sentinel.conf directives
//     monitor / down-after-milliseconds / failover-timeout, SENTINEL
//     get-master-addr-by-name (redis.io "Redis Sentinel").
//   etcd 3.4.23: its command-line flags; the observer is real/etcd-lock -observe.
//   PostgreSQL 15: initdb and postgres as the Debian package installs them.
#include "real/stacks.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "models/redis/redis.hpp"
#include "models/zookeeper/zookeeper.hpp"
#include "real/clocks.hpp"

namespace fencesim::real {

namespace {

void wait_for_redis(Run& run, const RedisProc& p, std::chrono::milliseconds timeout, const fs::path& log) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    RedisConn c;
    if (c.connect(p.port, 200ms)) {
      auto r = wrap(c.cmd({"PING"}));
      if (r && r->type == REDIS_REPLY_STATUS) return;
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(20ms);
  }
  (void)run;
  throw std::runtime_error("fencesim-real: " + p.name + " did not answer PING within " +
                           std::to_string(timeout.count()) + " ms; its log:\n" + tail_of(log));
}

std::string first_line_of(const std::string& s) { return s.substr(0, s.find('\n')); }

/// A server that a clock fault reaches starts with the clock shim and its
/// own control file (real/clocks.hpp).
void with_clock_shim(Run& run, RedisProc& p) {
  if (!needs_clock_shim(run.s, p.name)) return;
  auto& clock = run.server_clocks[p.name];
  clock = std::make_unique<ServerClock>(p.dir / "clock");
  p.env = clock->env(run.clock_shim);
  run.say(p.name + " runs with fencesim-clock.so (" + clock->file().string() + ")");
}

/// Sentinel's failover-timeout: twice down_after (at least 3 s, the model's rule); with
/// replicas (whose replication link goes through a proxy, so that their
/// `master_port` is the proxy's, not the one Sentinel monitors) at least the
/// run's real length plus 30 s, because Sentinel re-points a replica whose
/// master address differs from its own view once failover-timeout has passed
/// since the replica's configuration last changed (sentinel.c,
/// sentinelRefreshInstanceInfo, "+fix-slave-config"), which would take the
/// replication link off its proxy. The timeout also spaces failover
/// attempts (2 x failover-timeout): a failover that fails (a split vote) is
/// not retried within such a run (docs/CONFORMANCE.md). Without replicas it
/// is the model's own (redis::failover_timeout_of).
std::int64_t failover_timeout_ms(const Run& run) {
  std::int64_t ms = run.tb.ms(redis::failover_timeout_of(run.s.lock.redis())).count();
  if (run.s.lock.redis().replicas > 0) ms = std::max<std::int64_t>(ms, run.tb.ms(run.s.duration).count() + 30000);
  return ms;
}
}  // namespace

namespace {

/// redis-N's process: its folder, arguments (persistence; a replica's
/// `replicaof` through its replication link's proxy) and the clock shim.
RedisProc redis_server(Run& run, const std::string& server, int i) {
  const Scenario& s = run.s;
  RedisProc p;
  p.name = "redis-" + std::to_string(i);
  p.port = free_port();
  p.dir = run.dir.path() / p.name;
  fs::create_directories(p.dir);
  p.argv = {server,
            "--port",
            std::to_string(p.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            p.dir.string(),
            "--save",
            "",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            (p.dir / "redis.log").string()};
  if (s.lock.redis().persistence == RedisPersistence::kAofAlways) {
    p.argv.insert(p.argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
  } else if (s.lock.redis().persistence == RedisPersistence::kAofEverysec) {
    p.argv.insert(p.argv.end(), {"--appendonly", "yes", "--appendfsync", "everysec"});
  } else {
    p.argv.insert(p.argv.end(), {"--appendonly", "no"});
  }
  if (i > 0) {
    // The replication link goes through a proxy (partitions between
    // replica and primary; replication_delay holds the stream).
    const Duration rd = s.lock.redis().replication_delay;
    const int via = run.net.add_link(p.name, run.redis[0].name, run.redis[0].port, rd > Duration::zero());
    if (rd > Duration::zero()) run.links.set_base(p.name, run.redis[0].name, {}, {false, run.tb.real(rd)});
    p.argv.insert(p.argv.end(), {"--replicaof", "127.0.0.1", std::to_string(via)});
  }
  with_clock_shim(run, p);
  return p;
}

/// Waits until every replica's link to the primary is up.
void wait_replicas_in_sync(Run& run) {
  for (std::size_t i = 1; i < run.redis.size(); ++i) {
    const auto until = Clock::now() + 10s;
    for (;;) {
      RedisConn c;
      std::string info;
      if (c.connect(run.redis[i].port, 300ms)) {
        auto r = wrap(c.cmd({"INFO", "replication"}));
        if (r && r->type == REDIS_REPLY_STRING) info = std::string(r->str, r->len);
      }
      if (info.find("master_link_status:up") != std::string::npos) break;
      if (Clock::now() > until) throw std::runtime_error("fencesim-real: " + run.redis[i].name + " did not sync");
      std::this_thread::sleep_for(50ms);
    }
  }
}

/// sentinel-0 … monitoring redis-0 with the scenario's quorum,
/// down-after and failover-timeout.
void start_sentinels(Run& run, const std::string& server) {
  const Scenario& s = run.s;
  const int m = s.lock.redis().sentinels;
  const int quorum = m / 2 + 1;
  for (int i = 0; i < m; ++i) {
    RedisProc p;
    p.name = "sentinel-" + std::to_string(i);
    p.port = free_port();
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir);
    const fs::path conf = p.dir / "sentinel.conf";
    std::ofstream out(conf);
    out << "port " << p.port << "\nbind 127.0.0.1\nprotected-mode no\ndir " << p.dir.string() << "\nlogfile "
        << (p.dir / "sentinel.log").string() << "\nsentinel monitor " << kSentinelName << " 127.0.0.1 "
        << run.redis[0].port << " " << quorum << "\nsentinel down-after-milliseconds " << kSentinelName << " "
        << run.tb.ms(s.lock.redis().down_after).count() << "\nsentinel failover-timeout " << kSentinelName << " "
        << failover_timeout_ms(run) << "\nsentinel parallel-syncs " << kSentinelName << " 1\n";
    out.close();
    p.argv = {server, conf.string(), "--sentinel"};
    with_clock_shim(run, p);
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    opt.env = p.env;
    p.child = std::make_unique<Child>(p.argv, opt);
    run.sentinels.push_back(std::move(p));
  }
  for (auto& p : run.sentinels) wait_for_redis(run, p, 10000ms, p.dir / "sentinel.log");
}

/// Every sentinel knows the others and the replicas (hello messages every 2 s).
void wait_sentinels_know_each_other(Run& run) {
  const int m = static_cast<int>(run.sentinels.size());
  const int n = static_cast<int>(run.redis.size());
  if (m > 0) {
    const auto until = Clock::now() + 30s;
    for (auto& p : run.sentinels) {
      for (;;) {
        RedisConn c;
        bool ok = false;
        if (c.connect(p.port, 300ms)) {
          auto a = wrap(c.cmd({"SENTINEL", "sentinels", kSentinelName}));
          auto b = wrap(c.cmd({"SENTINEL", "replicas", kSentinelName}));
          ok = a && b && a->type == REDIS_REPLY_ARRAY && b->type == REDIS_REPLY_ARRAY &&
               static_cast<int>(a->elements) == m - 1 && static_cast<int>(b->elements) == n - 1;
        }
        if (ok) break;
        if (Clock::now() > until) {
          throw std::runtime_error("fencesim-real: " + p.name + " did not discover the other sentinels and replicas; " +
                                   "its log:\n" + tail_of(p.dir / "sentinel.log"));
        }
        if (g_interrupted) throw std::runtime_error("interrupted");
        std::this_thread::sleep_for(100ms);
      }
    }
  }
}

}  // namespace

void start_redis(Run& run, std::vector<std::string>& versions) {
  const std::string server = require_program("redis-server", "redis-server");
  const auto v = run_command({server, "--version"}, 5000ms);
  versions.push_back(first_line_of(v.out));
  const int n = 1 + run.s.lock.redis().replicas;
  for (int i = 0; i < n; ++i) {
    RedisProc p = redis_server(run, server, i);
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    opt.env = p.env;
    p.child = std::make_unique<Child>(p.argv, opt);
    run.redis.push_back(std::move(p));
  }
  for (auto& p : run.redis) wait_for_redis(run, p, 10000ms, p.dir / "redis.log");
  wait_replicas_in_sync(run);
  start_sentinels(run, server);
  wait_sentinels_know_each_other(run);
}

namespace {
void start_etcd_observer(Run& run);
void wait_etcd_put(Run& run);
}  // namespace

void start_etcd(Run& run, std::vector<std::string>& versions) {
  const std::string etcd = require_program("etcd", "etcd-server");
  const auto v = run_command({etcd, "--version"}, 5000ms);
  versions.push_back(first_line_of(v.out));
  const Scenario& s = run.s;
  const int n = s.lock.etcd().nodes;
  std::string cluster;
  for (int i = 0; i < n; ++i) {
    RedisProc p;
    p.name = "etcd-" + std::to_string(i);
    p.port = free_port();
    run.etcd_peer_ports.push_back(free_port());
    cluster += fmt::format("{}{}=http://127.0.0.1:{}", cluster.empty() ? "" : ",", p.name, run.etcd_peer_ports.back());
    run.etcd.push_back(std::move(p));
  }
  const auto heartbeat = std::max<std::int64_t>(run.tb.ms(s.lock.etcd().heartbeat).count(), 20);
  const auto election = std::max<std::int64_t>(run.tb.ms(s.lock.etcd().election_timeout).count(), 5 * heartbeat);
  for (int i = 0; i < n; ++i) {
    RedisProc& p = run.etcd[i];
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir);
    const std::string client = fmt::format("http://127.0.0.1:{}", p.port);
    const std::string peer = fmt::format("http://127.0.0.1:{}", run.etcd_peer_ports[i]);
    p.argv = {etcd,
              "--name",
              p.name,
              "--data-dir",
              (p.dir / "data").string(),
              "--listen-client-urls",
              client,
              "--advertise-client-urls",
              client,
              "--listen-peer-urls",
              peer,
              "--initial-advertise-peer-urls",
              peer,
              "--initial-cluster",
              cluster,
              "--initial-cluster-state",
              "new",
              "--initial-cluster-token",
              "fencesim-real",
              "--heartbeat-interval",
              std::to_string(heartbeat),
              "--election-timeout",
              std::to_string(election),
              "--logger",
              "zap",
              "--log-outputs",
              (p.dir / "etcd.log").string()};
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    p.child = std::make_unique<Child>(p.argv, opt);
    run.etcd_endpoints += (run.etcd_endpoints.empty() ? "" : ",") + client;
  }
  start_etcd_observer(run);
  wait_etcd_put(run);
}

namespace {

/// The lease observer: real/etcd-lock -observe watches the lock's prefix and
/// says when a key is deleted (a lease's end: a release or its expiry).
void start_etcd_observer(Run& run) {
  const Scenario& s = run.s;
  ChildOptions opt;
  opt.pipes = true;
  opt.err = run.dir.path() / "etcd-observer.log";
  run.etcd_observer = std::make_unique<LineChild>(
      std::vector<std::string>{run.helper, "-endpoints", run.etcd_endpoints, "-prefix", s.lock.key, "-observe"}, opt,
      [&run](const std::string& line) {
        std::istringstream in(line);
        std::string word, key;
        std::int64_t create = 0;
        in >> word >> key >> create;
        if (word != "deleted") return word == "put";
        const Time at = run.tb.now();
        const std::string value = key + "@" + std::to_string(create);
        std::lock_guard<std::mutex> g(run.hmu);
        if (!run.in_run(at)) return true;
        if (run.released.count(value)) {
          run.h.lease_end(at, value, "deleted", LeaseEndCause::kDeleted);
        } else {
          run.h.lease_end(at, value, "lease expired (key deleted by etcd)", LeaseEndCause::kExpired);
        }
        run.live.erase(value);
        return true;
      });
  auto ready = run.etcd_observer->next(run.stop);
  if (!ready || *ready != "ready") {
    throw std::runtime_error("fencesim-real: the etcd observer did not start:\n" + tail_of(opt.err));
  }
}

/// The cluster has a leader: a put through etcdctl works.
void wait_etcd_put(Run& run) {
  const std::string etcdctl = require_program("etcdctl", "etcd-client");
  const auto until = Clock::now() + 30s;
  for (;;) {
    ChildOptions e;
    e.env = {"ETCDCTL_API=3"};
    const auto r = run_command(
        {etcdctl, "--endpoints", run.etcd_endpoints, "--command-timeout=2s", "put", "fencesim-real/ready", "1"}, 5000ms,
        e);
    if (r.status == 0) break;
    if (Clock::now() > until) {
      throw std::runtime_error("fencesim-real: the etcd cluster did not accept a put within 30 s; etcd-0's log:\n" +
                               tail_of(run.etcd[0].dir / "etcd.log"));
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(200ms);
  }
}

}  // namespace

namespace {

/// A server that answers ZooKeeper's four-letter `ruok` with `imok`.
bool zk_ok(int port) {
  const CommandResult r = run_command({"/usr/bin/python3", "-c",
                                       fmt::format("import socket;s=socket.create_connection(('127.0.0.1',{}),2);"
                                                   "s.sendall(b'ruok');print(s.recv(8).decode())",
                                                   port)},
                                      5000ms);
  return r.status == 0 && r.out.find("imok") != std::string::npos;
}

/// The lease observer: zk_lock.py --observe says when a lock node goes (a
/// lease's end: a release, or its session's expiry).
void start_zk_observer(Run& run, const std::string& hosts) {
  ChildOptions opt;
  opt.pipes = true;
  opt.err = run.dir.path() / "zk-observer.log";
  run.zk_observer = std::make_unique<LineChild>(
      std::vector<std::string>{"/usr/bin/python3", run.helper, "--hosts", hosts, "--path",
                               zookeeper::lock_path(run.s.lock.key), "--observe"},
      opt, [&run](const std::string& line) {
        std::istringstream in(line);
        std::string word, path;
        in >> word >> path;
        if (word != "deleted") return false;
        const Time at = run.tb.now();
        std::lock_guard<std::mutex> g(run.hmu);
        if (!run.in_run(at) || run.live.count(path) == 0) return true;  // a waiter's node: never held
        if (run.released.count(path)) {
          run.h.lease_end(at, path, "released: its lock node was deleted", LeaseEndCause::kReleased);
        } else {
          run.h.lease_end(at, path, "session expired: its ephemeral node was deleted", LeaseEndCause::kExpired);
        }
        run.live.erase(path);
        return true;
      });
  auto ready = run.zk_observer->next(run.stop);
  if (!ready || *ready != "ready") {
    throw std::runtime_error("fencesim-real: the ZooKeeper observer did not start:\n" + tail_of(opt.err));
  }
}

}  // namespace

namespace {

/// One attempt at the ensemble on fresh ports; false when a server exited
/// or did not answer within 30 s. The ports were free when chosen, but
/// a JVM's outgoing quorum connection may take one as its ephemeral source
/// port before the server it was meant for binds it: then that server
/// exits, and the whole ensemble starts again on other ports.
bool try_start_zookeeper(Run& run, const std::string& server) {
  const Scenario& s = run.s;
  const ZooKeeperSpec& z = s.lock.zookeeper();
  const int n = z.nodes;
  // tickTime scaled to real time, whole milliseconds; the session bounds
  // are given as the model resolves them, scaled.
  const auto tick = std::max<std::int64_t>(run.tb.ms(z.tick_time).count(), 2);
  std::vector<int> peer(n), election(n);
  std::string servers;
  for (int i = 0; i < n; ++i) {
    RedisProc p;
    p.name = "zk-" + std::to_string(i);
    p.port = free_port();
    peer[i] = free_port();
    election[i] = free_port();
    servers += fmt::format("server.{}=127.0.0.1:{}:{}\n", i + 1, peer[i], election[i]);
    run.zk.push_back(std::move(p));
  }
  std::string hosts;
  for (int i = 0; i < n; ++i) {
    RedisProc& p = run.zk[i];
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir / "data");
    std::ofstream(p.dir / "data" / "myid") << (i + 1) << "\n";
    const fs::path cfg = p.dir / "zoo.cfg";
    std::ofstream(cfg) << fmt::format(
        "tickTime={}\ninitLimit=10\nsyncLimit={}\ndataDir={}\nclientPort={}\nclientPortAddress=127.0.0.1\n"
        "minSessionTimeout={}\nmaxSessionTimeout={}\nadmin.enableServer=false\n"
        "4lw.commands.whitelist=ruok,srvr\nznode.container.checkIntervalMs={}\n{}",
        tick, z.sync_limit, (p.dir / "data").string(), p.port, run.tb.ms(zookeeper::min_session_timeout(z)).count(),
        run.tb.ms(zookeeper::max_session_timeout(z)).count(),
        std::max<std::int64_t>(run.tb.ms(z.container_check_interval).count(), 1), n > 1 ? servers : "");
    p.argv = {server, "start-foreground", cfg.string()};
    p.env = {"ZOO_LOG_DIR=" + p.dir.string(), "JVMFLAGS=-Xmx256m"};
    ChildOptions opt;
    opt.out = p.dir / "stdout.log";
    opt.err = p.dir / "stderr.log";
    opt.env = p.env;
    p.child = std::make_unique<Child>(p.argv, opt);
    hosts += fmt::format("{}127.0.0.1:{}", hosts.empty() ? "" : ",", p.port);
  }
  const auto until = Clock::now() + 30s;
  for (RedisProc& p : run.zk) {
    while (!zk_ok(p.port)) {
      if (Clock::now() > until || !p.child->running()) {
        run.say(p.name + " did not start; starting the ensemble again on other ports. Its log:\n" +
                tail_of(p.dir / "stdout.log", 5));
        return false;
      }
      if (g_interrupted) throw std::runtime_error("interrupted");
      std::this_thread::sleep_for(200ms);
    }
  }
  start_zk_observer(run, hosts);
  return true;
}

}  // namespace

void start_zookeeper(Run& run, std::vector<std::string>& versions) {
  const std::string server = "/usr/share/zookeeper/bin/zkServer.sh";
  if (::access(server.c_str(), X_OK) != 0) {
    throw MissingProgram("fencesim-real: " + server + " is missing; install the Debian package zookeeper");
  }
  versions.push_back("ZooKeeper 3.8 (Debian 12's zookeeper), kazoo (python3-kazoo)");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    if (try_start_zookeeper(run, server)) return;
    for (RedisProc& p : run.zk) p.child.reset();  // stopped
    const fs::path failed = run.dir.path() / ("zookeeper-attempt-" + std::to_string(attempt));
    fs::create_directories(failed);
    for (const RedisProc& p : run.zk) fs::rename(p.dir, failed / p.name);
    run.zk.clear();
  }
  throw std::runtime_error("fencesim-real: the ZooKeeper ensemble did not start in 3 attempts (their logs: " +
                           run.dir.path().string() + "/zookeeper-attempt-*, kept with --keep-dir)");
}

namespace {

/// PostgreSQL refuses to run as root: as root, its programs run as the
/// `postgres` user the Debian package creates.
ChildOptions postgres_user() {
  ChildOptions as;
  if (::geteuid() != 0) return as;
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) {
    throw MissingProgram(
        "fencesim-real: running as root, PostgreSQL needs the `postgres` user (created by the Debian package "
        "postgresql); install it or run fencesim-real as an ordinary user");
  }
  as.uid = pw->pw_uid;
  as.gid = pw->pw_gid;
  return as;
}

/// A connection to database `db` of `pg` once it accepts one (30 s at most).
PGconn* connect_when_up(const Postgres& pg, const std::string& db) {
  const std::string conninfo =
      fmt::format("host=127.0.0.1 port={} user=fencesim dbname={} connect_timeout=5", pg.port, db);
  const auto until = Clock::now() + 30s;
  for (;;) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    if (PQstatus(c) == CONNECTION_OK) return c;
    PQfinish(c);
    if (Clock::now() > until || (pg.child && !pg.child->running())) {
      throw std::runtime_error("fencesim-real: PostgreSQL did not start; its log:\n" +
                               tail_of(pg.dir / "postgres.log"));
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(100ms);
  }
}

/// Runs `sql` on `c`; false when it fails.
bool exec_ok(PGconn* c, const std::string& sql) {
  PGresult* res = PQexec(c, sql.c_str());
  const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  PQclear(res);
  return ok;
}

const std::vector<std::string>& postgres_bin_dirs() {
  static const std::vector<std::string> kDirs = {"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin",
                                                 "/usr/lib/postgresql/17/bin"};
  return kDirs;
}

/// A Postgres in `dir` with its version, its folder made (owned by the
/// user it runs as) and its cluster initialized (initdb) unless `dir/data`
/// has one; `as` is how its programs run.
std::unique_ptr<Postgres> init_postgres(const fs::path& dir, ChildOptions& as) {
  const std::string initdb = require_program("initdb", "postgresql", postgres_bin_dirs());
  const std::string postgres = require_program("postgres", "postgresql", postgres_bin_dirs());
  auto pg = std::make_unique<Postgres>();
  pg->version = first_line_of(run_command({postgres, "--version"}, 5000ms).out);
  as = postgres_user();
  pg->dir = dir;
  fs::create_directories(pg->dir);
  if (as.uid) (void)!::chown(pg->dir.c_str(), *as.uid, *as.gid);
  if (fs::exists(pg->dir / "data" / "PG_VERSION")) return pg;
  ChildOptions log = as;
  log.err = pg->dir / "initdb.log";
  log.out = pg->dir / "initdb.log";
  const auto r = run_command(
      {initdb, "-D", (pg->dir / "data").string(), "-U", "fencesim", "--auth=trust", "-E", "UTF8", "--no-sync"}, 60000ms,
      log);
  if (r.status != 0) {
    throw std::runtime_error("fencesim-real: initdb failed; its log:\n" + r.out + tail_of(pg->dir / "initdb.log"));
  }
  return pg;
}

/// The server's settings: loopback only, no fsync (the runs need no durability).
std::vector<std::string> postgres_settings(const Postgres& pg) {
  return {
      "-p", std::to_string(pg.port), "-k", pg.dir.string(),      "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
      "-c", "shared_buffers=16MB",   "-c", "max_connections=40", "-c", "synchronous_commit=off"};
}

}  // namespace

std::unique_ptr<Postgres> start_postgres_server(const fs::path& dir) {
  ChildOptions as;
  auto pg = init_postgres(dir, as);
  const std::string postgres = require_program("postgres", "postgresql", postgres_bin_dirs());
  pg->port = free_port();
  pg->argv = {postgres, "-D", (pg->dir / "data").string()};
  for (const std::string& a : postgres_settings(*pg)) pg->argv.push_back(a);
  pg->opt = as;
  pg->opt.out = pg->dir / "postgres.log";
  pg->opt.err = pg->dir / "postgres.log";
  pg->opt.stop_signal = SIGQUIT;
  pg->child = std::make_unique<Child>(pg->argv, pg->opt);
  PQfinish(connect_when_up(*pg, "postgres"));
  return pg;
}

std::unique_ptr<Postgres> attach_postgres_server(const fs::path& dir) {
  // Processes that attach at the same time (the first RealStack tests of a
  // `ctest -j2`) take turns: one starts the server, the others find it.
  fs::create_directories(dir.parent_path());
  const int lock_fd = ::open((dir.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock_fd < 0) throw std::runtime_error("fencesim-real: cannot open " + dir.string() + ".lock");
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // closing the file releases its flock
  } unlock{lock_fd};
  while (::flock(lock_fd, LOCK_EX) != 0) {
    if (errno != EINTR) throw std::runtime_error("fencesim-real: cannot lock " + dir.string() + ".lock");
  }
  ChildOptions as;
  auto pg = init_postgres(dir, as);
  const fs::path port_file = pg->dir / "port";
  const fs::path pid_file = pg->dir / "data" / "postmaster.pid";
  std::ifstream(port_file) >> pg->port;
  std::ifstream(pid_file) >> pg->pid;
  if (pg->port > 0 && pg->pid > 0 && ::kill(pg->pid, 0) == 0) {
    ::kill(pg->pid, SIGCONT);  // a pause of an earlier run may have outlasted it
    PQfinish(connect_when_up(*pg, "postgres"));
    return pg;
  }
  // Not running: start it detached (pg_ctl's postmaster is not our child,
  // so it outlives this process), on a new port.
  pg->port = free_port();
  std::ofstream(port_file) << pg->port << "\n";
  std::string options;
  for (const std::string& a : postgres_settings(*pg)) options += (options.empty() ? "" : " ") + a;
  const std::string pg_ctl = require_program("pg_ctl", "postgresql", postgres_bin_dirs());
  ChildOptions log = as;
  log.out = pg->dir / "pg_ctl.log";
  log.err = pg->dir / "pg_ctl.log";
  const auto r = run_command({pg_ctl, "-D", (pg->dir / "data").string(), "-l", (pg->dir / "postgres.log").string(),
                              "-o", options, "-w", "-t", "60", "start"},
                             90000ms, log);
  if (r.status != 0) {
    throw std::runtime_error("fencesim-real: pg_ctl start failed; its log:\n" + tail_of(pg->dir / "pg_ctl.log") +
                             tail_of(pg->dir / "postgres.log"));
  }
  std::ifstream(pid_file) >> pg->pid;
  PQfinish(connect_when_up(*pg, "postgres"));
  return pg;
}

void stop_postgres_server(const fs::path& dir) {
  if (!fs::exists(dir / "data" / "postmaster.pid")) return;
  pid_t pid = 0;
  std::ifstream(dir / "data" / "postmaster.pid") >> pid;
  if (pid > 0) ::kill(pid, SIGCONT);
  ChildOptions as = postgres_user();
  const std::string pg_ctl = require_program("pg_ctl", "postgresql", postgres_bin_dirs());
  run_command({pg_ctl, "-D", (dir / "data").string(), "-m", "immediate", "-w", "stop"}, 60000ms, as);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

void create_resource_database(Run& run) {
  Postgres& pg = *run.pg;
  // A paused resource whose pause outlasted an earlier run on this server
  // must answer again.
  pg.signal(SIGCONT);
  // A name of this process's, so that runs side by side on a shared server
  // (the RealStack tests under `ctest -j2`) have a database each; one left
  // by an earlier process of the same pid goes first, with any session of it.
  run.pg_db = fmt::format("fencesim_run_{}", ::getpid());
  PGconn* admin = connect_when_up(pg, "postgres");
  const bool created = exec_ok(admin, "DROP DATABASE IF EXISTS " + run.pg_db + " WITH (FORCE)") &&
                       exec_ok(admin, "CREATE DATABASE " + run.pg_db);
  PQfinish(admin);
  if (!created) throw std::runtime_error("fencesim-real: could not create the database " + run.pg_db);
  run.pg_conninfo = fmt::format("host=127.0.0.1 port={} user=fencesim dbname={} connect_timeout=5", pg.port, run.pg_db);
  PGconn* c = connect_when_up(pg, run.pg_db);
  const bool ok = exec_ok(
      c, fmt::format("CREATE TABLE reg (id int PRIMARY KEY, value bigint NOT NULL, version bigint NOT NULL, tag text "
                     "NOT NULL, last_written bigint NOT NULL, last_seen bigint NOT NULL, prev_value bigint NOT NULL, "
                     "prev_tag text NOT NULL);"
                     "INSERT INTO reg VALUES (1, {}, 0, '', 0, 0, 0, '')",
                     run.s.resource.initial));
  PQfinish(c);
  if (!ok) throw std::runtime_error("fencesim-real: could not create the resource table");
}

void drop_resource_database(Run& run) {
  if (!run.pg || run.pg_db.empty()) return;
  run.pg->signal(SIGCONT);
  PGconn* admin = connect_when_up(*run.pg, "postgres");
  (void)exec_ok(admin, "DROP DATABASE IF EXISTS " + run.pg_db + " WITH (FORCE)");
  PQfinish(admin);
}

namespace {

/// Why the observer's poll no longer sees a lease on the primary `node`:
/// the holder's DEL, its TTL (the key is gone with no new value), or a
/// primary that never had it (`cur` is another value: a failover).
LeaseEndRecord redis_lease_end(bool released, bool no_current_value, const std::string& node) {
  LeaseEndRecord why;
  if (released) {
    why.reason = "deleted";
    why.cause = LeaseEndCause::kDeleted;
  } else if (no_current_value) {
    why.reason = fmt::format("expired on {} wall clock", node);
    why.cause = LeaseEndCause::kExpired;
  } else {
    why.reason = fmt::format("{}, the current primary, does not hold it", node);
    why.cause = LeaseEndCause::kNotOnPrimary;
    why.who = node;
  }
  return why;
}

}  // namespace

/// The Redis lease observer (a thread of the runner): polls the key on the
/// primary every 5 ms and records a lease's end (History::lease_end) once the
/// key no longer holds its value — deleted, expired on the primary's wall
/// clock, or not on a newly promoted primary. Returns when the run stops.
void watch_redis_leases(Run& r) {
  RedisConn conn;
  auto resolved = Clock::now();
  while (!r.stop) {
    std::this_thread::sleep_for(5ms);
    if (!conn.ok()) {
      const auto port = r.primary_port();
      if (!port || !conn.connect(*port, 200ms)) {
        // The primary is down: a lease ends unless a live replica or
        // its AOF (lock.persistence) holds it.
        if (r.sentinels.empty() && r.redis.size() == 1 && r.s.lock.redis().persistence == RedisPersistence::kNone) {
          const Time at = r.tb.now();
          std::lock_guard<std::mutex> g(r.hmu);
          for (auto it = r.live.begin(); it != r.live.end();) {
            if (r.in_run(at)) {
              r.h.lease_end(at, it->first, "redis-0 is down and no live replica holds it", LeaseEndCause::kServiceDown);
            }
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
        LeaseEndRecord why = redis_lease_end(r.released.count(it->first) != 0, cur.empty(), node);
        if (r.in_run(at)) r.h.lease_end(at, it->first, std::move(why.reason), why.cause, std::move(why.who));
        it = r.live.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace fencesim::real
