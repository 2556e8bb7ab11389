// real/services.cpp — the Redis, etcd and ZooKeeper real stacks (real/services.hpp).
#include "real/services.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <thread>

#include "models/lock_service.hpp"
#include "real/locks.hpp"
#include "real/process.hpp"
#include "real/stacks.hpp"

namespace fencesim::real {

namespace {

// ------------------------------------------------------------------ Redis --

std::string redis_unsupported(const Scenario& s) {
  // A library first: it is the reason a real run cannot exist at all.
  for (const ClientSpec& c : s.clients) {
    if (library_of(s, c) != ClientLibrary::kGeneric && !c.program) {
      return "client " + c.name + "'s library is " + quote_text(word(library_of(s, c))) +
             (library_of(s, c) == ClientLibrary::kRedsync        ? ": go-redsync/redsync is not packaged in Debian 12"
              : library_of(s, c) == ClientLibrary::kBsmRedislock ? ": bsm/redislock is not packaged in Debian 12"
                                                                 : ": Redisson is a Java library, not available here") +
             "; fencesim-real runs the generic Redis client";
    }
  }
  if (s.lock.redis().redlock > 0) return "Redlock (lock.redlock) is not supported";
  if (s.lock.redis().cluster) {
    return "Redis Cluster (lock.cluster): the runner starts a primary with replicas and Sentinels, not a cluster";
  }
  if (s.lock.redis().expiry_clock == sim::ClockKind::kMonotonic) {
    return "lock.expiry_clock \"monotonic\": redis-server 7.0 has no such setting; it stores a key's expiry as an "
           "absolute wall-clock time and compares it with its wall clock (db.c keyIsExpired, mstime() = "
           "gettimeofday), so the real stack can only run \"expiry_clock\": \"wall\"";
  }
  return "";
}

std::string redis_program_unsupported(const Scenario& s, const ClientSpec& c) {
  if (s.lock.redis().replicas > 0 && s.lock.redis().sentinels == 0) {
    return "client " + c.name +
           " is a program: fencesim-real runs program clients against one Redis primary, alone or with Sentinel "
           "(a program finds the primary among replicas only through Sentinel), or an etcd cluster";
  }
  return "";
}

std::string redis_clock_fault(const std::string&) { return ""; }  // fencesim-clock.so moves Redis's clocks

void redis_helpers(Run&, const RealOptions&) {}

void redis_start(Run& r, const RealOptions&, RealResult& out) {
  r.say("starting Redis");
  start_redis(r, out.versions);
}

// ------------------------------------------------------------------- etcd --

std::string etcd_unsupported(const Scenario&) { return ""; }

std::string etcd_program_unsupported(const Scenario&, const ClientSpec&) { return ""; }

std::string etcd_clock_fault(const std::string& what) {
  return what +
         ": etcd and the etcd client helper are Go programs, and Go reads the clock through the vDSO, not "
         "libc, so no LD_PRELOAD clock library (libfaketime, fencesim-clock.so) reaches them (etcd 3.4.23 "
         "under libfaketime FAKETIME=+1h logs the real time)";
}

void etcd_helpers(Run& r, const RealOptions& opt) {
  const fs::path helper = beside_program(opt, "etcd-lock");
  if (::access(helper.c_str(), X_OK) != 0) {
    throw MissingProgram("the etcd client helper " + helper.string() +
                         " is missing; it is built with fencesim-real when golang-go and golang-etcd-server-dev "
                         "are installed (tools/deps.sh --test)");
  }
  r.helper = helper.string();
}

void etcd_start(Run& r, const RealOptions& opt, RealResult& out) {
  r.say("starting etcd");
  start_etcd(r, out.versions);
  const double scaled = r.s.lock.ttl.count() * opt.scale / 1e9;
  const int ttl = etcd_ttl_seconds(r);
  if (std::abs(ttl - scaled) > 1e-6) {
    out.remarks.push_back(
        fmt::format("etcd lease TTL {} s (the scaled TTL {:.3f} s rounded up to whole seconds)", ttl, scaled));
  }
}

// -------------------------------------------------------------- ZooKeeper --

std::string zk_unsupported(const Scenario& s) {
  for (const ClientSpec& c : s.clients) {
    if (library_of(s, c) != ClientLibrary::kKazoo) {
      return "client " + c.name +
             "'s library is Curator, a Java library: the real ZooKeeper clients are kazoo's Lock (python3-kazoo); "
             "set \"library\": \"kazoo\"";
    }
  }
  return "";
}

std::string zk_program_unsupported(const Scenario&, const ClientSpec&) {
  return "program clients cannot talk to ZooKeeper (docs/PROTOCOL.md has no ZooKeeper requests)";
}

std::string zk_clock_fault(const std::string& what) {
  return what +
         ": ZooKeeper runs on the JVM, which reads its clocks through the vDSO (clock_gettime), so no LD_PRELOAD "
         "clock library reaches it";
}

void zk_helpers(Run& r, const RealOptions& opt) {
  const fs::path helper = beside_program(opt, "zk_lock.py");
  if (::access(helper.c_str(), R_OK) != 0) {
    throw MissingProgram("the ZooKeeper client helper " + helper.string() +
                         " is missing; it is copied beside fencesim-real by the build (real/zk-lock)");
  }
  (void)require_program("/usr/bin/python3", "python3");
  const CommandResult k = run_command({"/usr/bin/python3", "-c", "import kazoo"}, 10000ms);
  if (k.status != 0) throw MissingProgram("fencesim-real: python3-kazoo is missing (Debian package python3-kazoo)");
  r.helper = helper.string();
}

void zk_start(Run& r, const RealOptions&, RealResult& out) {
  r.say("starting ZooKeeper");
  start_zookeeper(r, out.versions);
}

const RealService kRedis{redis_unsupported, redis_program_unsupported, redis_clock_fault, redis_helpers,
                         redis_start,       make_redis_lock,           watch_redis_leases};
const RealService kEtcd{etcd_unsupported, etcd_program_unsupported, etcd_clock_fault, etcd_helpers,
                        etcd_start,       make_etcd_lock,           nullptr};  // start_etcd began its watch
const RealService kZooKeeper{zk_unsupported, zk_program_unsupported, zk_clock_fault, zk_helpers,
                             zk_start,       make_zk_lock,           nullptr};  // start_zookeeper began its watch

}  // namespace

const RealService* real_service(ServiceKind kind) {
  if (kind == ServiceKind::kRedis) return &kRedis;
  if (kind == ServiceKind::kEtcd) return &kEtcd;
  if (kind == ServiceKind::kZooKeeper) return &kZooKeeper;
  return nullptr;
}

}  // namespace fencesim::real
