// real/locks.hpp — a client's lock against the real service: RedisLock
// (hiredis, the model's Lua scripts, a renewal thread) or EtcdLock (the Go
// helper real/etcd-lock on etcd's clientv3/concurrency).
#pragma once

#include <memory>

#include "real/run.hpp"

namespace fencesim::real {

/// The lock of client `c`: a RedisLock, or an EtcdLock, which starts its Go
/// helper now (on the calling thread, which then is the one the helper's
/// death signal follows) and waits for it to be ready; throws
/// std::runtime_error with the helper's log when it does not start.
/// real_service(…)->make_lock picks one (real/services.hpp).
std::unique_ptr<RealLock> make_redis_lock(ClientState& c);
std::unique_ptr<RealLock> make_etcd_lock(ClientState& c);
/// kazoo's Lock through real/zk-lock/zk_lock.py (started now, as EtcdLock's helper).
std::unique_ptr<RealLock> make_zk_lock(ClientState& c);

/// etcd's lease TTL for the run: the scaled lock.ttl rounded up to whole seconds (at least 1).
int etcd_ttl_seconds(const Run& r);

}  // namespace fencesim::real
