// real/stacks.hpp — starting the real servers of a run: redis-server
// (primary, replicas) and Redis Sentinels, an etcd cluster with its lease
// observer, and the resource's private PostgreSQL. Each appends its
// program's version line to `versions` and throws std::runtime_error (with
// the tail of the server's log) when it does not come up, MissingProgram
// (real/process.hpp) when the program is not installed.
#pragma once

#include <string>
#include <vector>

#include "real/run.hpp"

namespace fencesim::real {

void start_redis(Run& run, std::vector<std::string>& versions);
void start_etcd(Run& run, std::vector<std::string>& versions);
void start_postgres(Run& run, std::vector<std::string>& versions);

}  // namespace fencesim::real
