// real/stacks.hpp — starting the real servers of a run: redis-server
// (primary, replicas) and Redis Sentinels, an etcd cluster with its lease
// observer, and the resource's private PostgreSQL. Each appends its
// program's version line to `versions` and throws std::runtime_error (with
// the tail of the server's log) when it does not come up, MissingProgram
// (real/process.hpp) when the program is not installed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "real/run.hpp"

namespace fencesim::real {

void start_redis(Run& run, std::vector<std::string>& versions);
void start_etcd(Run& run, std::vector<std::string>& versions);
/// A ZooKeeper ensemble zk-0 … of lock.nodes servers (Debian 12's
/// zookeeper 3.8: zkServer.sh start-foreground, one zoo.cfg each, tickTime
/// scaled), and the lease observer (real/zk-lock/zk_lock.py --observe);
/// returns once a client can connect. Versions into `versions`.
void start_zookeeper(Run& run, std::vector<std::string>& versions);
/// A PostgreSQL server of its own in `dir` (initdb, then postgres on a
/// free port; as the `postgres` user when the runner is root), up and
/// accepting connections. Stopped (SIGQUIT: an immediate shutdown) when the
/// Postgres goes.
std::unique_ptr<Postgres> start_postgres_server(const fs::path& dir);
/// A PostgreSQL server in `dir` that outlives this process (several test
/// processes share it): attached to when its postmaster runs there,
/// otherwise started detached with pg_ctl (initdb first if `dir` has no
/// cluster). Not stopped when the Postgres goes: stop_postgres_server.
std::unique_ptr<Postgres> attach_postgres_server(const fs::path& dir);
/// Stops the server attach_postgres_server runs in `dir` (an immediate
/// shutdown); nothing when none runs there.
void stop_postgres_server(const fs::path& dir);
/// The run's resource on run.pg: a new database (fencesim_run_<pid>, one of
/// that name dropped first) with the one-row table `reg` holding
/// resource.initial; sets run.pg_db and run.pg_conninfo. A new database per
/// run, so that a server shared by runs (PostgresServer) starts every run
/// from the same state, and runs side by side on it do not meet.
void create_resource_database(Run& run);
/// Drops the run's database (a shared server keeps no run's data); nothing
/// when create_resource_database did not run.
void drop_resource_database(Run& run);

/// The Redis lease observer, run on a thread of its own from time 0 until
/// the run stops: records each lease's end as the primary shows it.
void watch_redis_leases(Run& r);

}  // namespace fencesim::real
