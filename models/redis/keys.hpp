// models/redis/keys.hpp — Redis's keys of the `lock` section: how a file
// spells them (docs/FORMAT.md "Redis"), read through a KeyReader and written
// back through a KeyWriter. Its descriptor (service.cpp) hands them on.
#pragma once

#include <string>
#include <vector>

#include "models/key_reader.hpp"
#include "models/key_writer.hpp"
#include "models/scenario.hpp"

namespace fencesim::redis {

/// lock's Redis keys, in docs/FORMAT.md's order.
const std::vector<std::string>& lock_keys();
/// lock.cluster's keys.
const std::vector<std::string>& cluster_keys();
/// Reads lock's Redis keys into `l.redis`: lock.cluster first (it forbids
/// Sentinel, Redlock and the primary's replicas beside it), then Redlock's
/// defaults (no replicas, no Sentinel, no token), then the rest.
void read_lock(KeyReader& in, LockSpec& l);
/// Writes them back: a cluster, Redlock (with its pools' replicas and
/// sentinels when any) or a primary with its replicas and sentinels; other
/// keys only where they differ from RedisSpec's defaults.
void write_lock(const LockSpec& l, KeyWriter& out);

}  // namespace fencesim::redis
