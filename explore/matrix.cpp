// `fencesim matrix`: lock designs × fault kinds, measured over seeds.
//
// Every cell builds the same small story — two clients incrementing a
// counter under the lock, with one fault aimed at the first holder or at the
// lock service — for one design (lock service × resource policy) and one
// fault kind, runs it over N seeds (the fault's start time and the network
// latency vary with the seed), and counts the runs in which each safety
// property broke and the runs in which `progress` held. A cell that cannot be
// expressed says N/A and why. It is the seed article's comparison table,
// measured instead of asserted.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fencesim/matrix.hpp"
#include "models/validate.hpp"
#include "sim/rng.hpp"

namespace fencesim {

using namespace std::chrono_literals;

namespace {

enum class Service { kRedisSingle, kRedisSentinel, kRedlock, kEtcd, kNoLock };
enum class Policy { kUnfenced, kStrict, kMonotonic, kReadsWrites, kLaggingCopy, kCas };
enum class Fault {
  kGcPause,
  kServerClockJump,
  kClientClockStep,
  kHolderPartition,
  kFailover,
  kCounterReset,
  kResourceReset
};

struct Design {
  Service service;
  Policy policy;
  std::string name;
};

const char* service_name(Service s) {
  switch (s) {
    case Service::kRedisSingle: return "Redis single primary";
    case Service::kRedisSentinel: return "Redis + replicas + Sentinel";
    case Service::kRedlock: return "Redlock (3 primaries)";
    case Service::kEtcd: return "etcd (3 members)";
    case Service::kNoLock: return "no lock";
  }
  return "?";
}
const char* policy_name(Policy p) {
  switch (p) {
    case Policy::kUnfenced: return "unfenced";
    case Policy::kStrict: return "fenced strict";
    case Policy::kMonotonic: return "fenced monotonic";
    case Policy::kReadsWrites: return "fenced reads+writes";
    case Policy::kLaggingCopy: return "fenced, check on a lagging copy";
    case Policy::kCas: return "CAS";
  }
  return "?";
}
const char* fault_name(Fault f) {
  switch (f) {
    case Fault::kGcPause: return "holder GC pause past TTL";
    case Fault::kServerClockJump: return "server clock jump";
    case Fault::kClientClockStep: return "client clock step, wall-clock renewal";
    case Fault::kHolderPartition: return "holder partition";
    case Fault::kFailover: return "failover / leader crash";
    case Fault::kCounterReset: return "token counter reset (+ holder pause)";
    case Fault::kResourceReset: return "resource token reset (+ holder pause)";
  }
  return "?";
}
const char* fault_key(Fault f) {
  switch (f) {
    case Fault::kGcPause: return "gc_pause";
    case Fault::kServerClockJump: return "server_clock_jump";
    case Fault::kClientClockStep: return "client_clock_step";
    case Fault::kHolderPartition: return "holder_partition";
    case Fault::kFailover: return "failover";
    case Fault::kCounterReset: return "counter_reset";
    case Fault::kResourceReset: return "resource_reset";
  }
  return "?";
}

std::vector<Design> designs() {
  std::vector<Design> out;
  for (Service s : {Service::kRedisSingle, Service::kRedisSentinel, Service::kRedlock, Service::kEtcd}) {
    for (Policy p :
         {Policy::kUnfenced, Policy::kStrict, Policy::kMonotonic, Policy::kReadsWrites, Policy::kLaggingCopy}) {
      out.push_back(Design{s, p, fmt::format("{} · {}", service_name(s), policy_name(p))});
    }
  }
  out.push_back(Design{Service::kNoLock, Policy::kCas, "CAS without a lock"});
  return out;
}

const std::vector<Fault>& faults() {
  static const std::vector<Fault> kAll = {Fault::kGcPause,         Fault::kServerClockJump, Fault::kClientClockStep,
                                          Fault::kHolderPartition, Fault::kFailover,        Fault::kCounterReset,
                                          Fault::kResourceReset};
  return kAll;
}

/// Why a cell cannot be expressed, or "".
std::string not_applicable(const Design& d, Fault f) {
  const bool fenced = d.policy != Policy::kUnfenced && d.policy != Policy::kCas;
  if (d.service == Service::kRedlock && fenced)
    return "Redlock hands out no token, and a fenced resource rejects tokenless writes";
  if (d.service == Service::kNoLock) {
    if (f == Fault::kGcPause || f == Fault::kHolderPartition || f == Fault::kClientClockStep) return "";
    return f == Fault::kResourceReset ? "a CAS resource keeps no token" : "there is no lock service";
  }
  switch (f) {
    case Fault::kFailover:
      if (d.service == Service::kRedisSingle) return "no replica to fail over to";
      return "";
    case Fault::kCounterReset:
      if (d.service == Service::kRedlock) return "Redlock has no token counter";
      if (d.service == Service::kEtcd) return "etcd's revision is not a counter that can be reset";
      return "";
    case Fault::kResourceReset:
      if (!fenced) return "the resource keeps no token";
      return "";
    default: return "";
  }
}

FaultSpec fault(FaultKind k, Duration at, const std::string& target) {
  FaultSpec f;
  f.kind = k;
  f.at = at;
  f.target = target;
  f.origin = "matrix";
  return f;
}

/// The lock service of a design: requested TTL 4 s (etcd 3 s), resolved later.
void set_service(Scenario& s, Service service) {
  switch (service) {
    case Service::kRedisSingle:
      s.lock.service = ServiceKind::kRedis;
      s.lock.requested_ttl = 4s;
      s.lock.redis.replicas = 0;
      s.lock.redis.sentinels = 0;
      break;
    case Service::kRedisSentinel:
      s.lock.service = ServiceKind::kRedis;
      s.lock.requested_ttl = 4s;
      s.lock.redis.replicas = 2;
      s.lock.redis.sentinels = 3;
      s.lock.redis.down_after = 2s;
      s.lock.redis.replication_delay = 200ms;
      break;
    case Service::kRedlock:
      s.lock.service = ServiceKind::kRedis;
      s.lock.requested_ttl = 4s;
      s.lock.redis = RedisSpec{};
      s.lock.redis.redlock = 3;
      s.lock.redis.replicas = 0;
      s.lock.redis.sentinels = 0;
      s.lock.redis.token = RedisToken::kNone;
      break;
    case Service::kEtcd:
      s.lock.service = ServiceKind::kEtcd;
      s.lock.requested_ttl = 3s;
      break;
    case Service::kNoLock:
      s.lock.service = ServiceKind::kNone;
      s.lock.requested_ttl = 4s;
      break;
  }
  s.lock.ttl = s.lock.requested_ttl;  // etcd's minimum for the default election timeout is 2 s: kept
}

void set_policy(Scenario& s, Policy policy) {
  switch (policy) {
    case Policy::kUnfenced: s.resource.kind = ResourceKind::kUnfenced; break;
    case Policy::kStrict: s.resource.kind = ResourceKind::kFenced; break;
    case Policy::kMonotonic:
      s.resource.kind = ResourceKind::kFenced;
      s.resource.check = FenceCheck::kMonotonic;
      break;
    case Policy::kReadsWrites:
      s.resource.kind = ResourceKind::kFenced;
      s.resource.fence_reads = true;
      break;
    case Policy::kLaggingCopy:
      s.resource.kind = ResourceKind::kFenced;
      s.resource.replicas = 1;
      s.resource.replication_delay = 3s;
      break;
    case Policy::kCas: s.resource.kind = ResourceKind::kCas; break;
  }
}

/// Two clients incrementing the counter, B half a second after A.
void add_clients(Scenario& s, const Design& d, Fault f) {
  for (const char* name : {"A", "B"}) {
    ClientSpec c;
    c.name = name;
    c.start = std::string(name) == "A" ? 0s : 500ms;
    c.renew_interval = kResolveRenewInterval;  // a third of the TTL
    c.workload.kind = WorkloadKind::kCounter;
    // Work longer than the TTL: the holder depends on its renewals.
    c.workload.work = s.lock.ttl * 3 / 2;
    c.workload.iterations = 5;
    c.workload.think = 300ms;
    if (d.policy == Policy::kLaggingCopy && c.name == "B") c.resource = "resource-replica-0";
    if (f == Fault::kClientClockStep && c.name == "A") c.renew_clock = sim::ClockKind::kWall;
    s.clients.push_back(c);
  }
}

/// The column's fault, starting at `at`.
void add_fault(Scenario& s, Service service, Fault f, Duration at) {
  const Duration long_pause = s.lock.ttl * 5 / 2;
  auto pause_a = [&] {
    FaultSpec p = fault(FaultKind::kPause, at, "A");
    p.duration = long_pause;
    s.faults.push_back(p);
  };
  const std::string server = service == Service::kEtcd      ? "etcd-leader"
                             : service == Service::kRedlock ? "redis-0"
                                                            : "redis-primary";
  switch (f) {
    case Fault::kGcPause: pause_a(); break;
    case Fault::kServerClockJump: {
      FaultSpec j = fault(FaultKind::kClockJump, at, server);
      j.by = s.lock.ttl * 3;
      s.faults.push_back(j);
      break;
    }
    case Fault::kClientClockStep: {
      FaultSpec j = fault(FaultKind::kClockJump, at, "A");
      j.by = -s.lock.ttl * 3;
      s.faults.push_back(j);
      break;
    }
    case Fault::kHolderPartition: {
      FaultSpec p = fault(FaultKind::kPartition, at, "");
      p.isolate = {"A"};
      p.duration = long_pause;
      s.faults.push_back(p);
      break;
    }
    case Fault::kFailover: {
      FaultSpec c = fault(FaultKind::kCrash, at, server);
      c.restart_after = 10s;
      s.faults.push_back(c);
      break;
    }
    case Fault::kCounterReset:
    case Fault::kResourceReset:
      pause_a();
      s.faults.push_back(
          fault(FaultKind::kCounterReset, at + long_pause / 2, f == Fault::kCounterReset ? "redis" : "resource"));
      break;
  }
}

/// One cell's scenario for one seed, resolved as a file would be
/// (models/validate.hpp); run_scenario checks it.
Scenario build(const Design& d, Fault f, std::uint64_t seed) {
  Scenario s;
  s.name = "matrix";
  s.seed = seed;
  s.duration = 60s;
  s.settle = 20s;
  sim::Rng rng = sim::Rng::stream(seed, "matrix");
  const Duration at = rng.uniform(Duration{3s}, Duration{6s});
  s.network.latency_min = 1ms;
  s.network.latency_max = 5ms;
  set_service(s, d.service);
  set_policy(s, d.policy);
  add_clients(s, d, f);
  add_fault(s, d.service, f, at);
  resolve_scenario(s);
  return s;
}

const std::vector<Property> kSafety = {Property::kMutualExclusion, Property::kNoStaleWrite, Property::kNoLostUpdate,
                                       Property::kTokenMonotonic};
const char* short_name(Property p) {
  switch (p) {
    case Property::kMutualExclusion: return "ME";
    case Property::kNoStaleWrite: return "SW";
    case Property::kNoLostUpdate: return "LU";
    case Property::kTokenMonotonic: return "TM";
    default: return "?";
  }
}

}  // namespace

Matrix run_matrix(const MatrixOptions& opt) {
  Matrix m;
  m.seeds = opt.seeds;
  for (Fault f : faults()) m.columns.push_back(fault_name(f));
  const std::vector<Design> all = designs();
  for (const Design& d : all) {
    MatrixRow row;
    row.design = d.name;
    for (Fault f : faults()) {
      MatrixCell cell;
      cell.fault = fault_key(f);
      cell.not_applicable = not_applicable(d, f);
      if (cell.not_applicable.empty()) {
        for (std::uint64_t i = 0; i < opt.seeds; ++i) {
          const Scenario s = build(d, f, opt.first_seed + i);
          RunOptions ro;
          ro.trace = false;
          const RunResult r = run_scenario(s, ro);
          ++cell.runs;
          for (const Verdict& v : r.verdicts) {
            if (v.status == Status::kViolated) ++cell.violated[to_string(v.property)];
            if (v.status == Status::kNotApplicable) cell.not_applicable_properties.insert(to_string(v.property));
            if (v.property == Property::kProgress && v.status == Status::kHolds) ++cell.progress_held;
          }
        }
      }
      row.cells.push_back(cell);
    }
    m.rows.push_back(row);
    if (opt.on_row_done) opt.on_row_done(d.name, m.rows.size(), all.size());
  }
  return m;
}

std::string render_matrix_markdown(const Matrix& m) {
  std::string o = "# Lock designs × faults, measured\n\n";
  o += fmt::format(
      "Generated by `fencesim matrix --seeds {}` (fencesim {}). Each cell ran {} seeds of the same story: two "
      "clients incrementing a counter under the lock, each holding it 1.5 × TTL per iteration so that renewals matter "
      "(TTL 4 s for Redis, 3 s for etcd; 60 s simulated), one fault "
      "starting between 3 s and 6 s, network latency 1–5 ms. A cell lists the safety properties that broke and in "
      "how many runs: **ME** mutual_exclusion, **SW** no_stale_write, **LU** no_lost_update, **TM** token_monotonic "
      "(`safe`: none broke); then `P` = runs in which `progress` held. N/A cells say why.\n\n",
      m.seeds, version(), m.seeds);
  o += "| design |";
  for (const std::string& c : m.columns) o += " " + c + " |";
  o += "\n|---|";
  for (std::size_t i = 0; i < m.columns.size(); ++i) o += "---|";
  o += "\n";
  for (const MatrixRow& row : m.rows) {
    o += "| " + row.design + " |";
    for (const MatrixCell& c : row.cells) {
      if (!c.not_applicable.empty()) {
        o += " N/A: " + c.not_applicable + " |";
        continue;
      }
      std::vector<std::string> broken;
      for (Property p : kSafety) {
        auto it = c.violated.find(to_string(p));
        if (it != c.violated.end() && it->second > 0)
          broken.push_back(fmt::format("**{}** {}/{}", short_name(p), it->second, c.runs));
      }
      o += " " + (broken.empty() ? std::string("safe") : fmt::format("{}", fmt::join(broken, ", "))) +
           fmt::format(" · P {}/{} |", c.progress_held, c.runs);
    }
    o += "\n";
  }
  o += "\nRe-run with more seeds: `fencesim matrix --seeds 100` (`--out DIR` writes elsewhere). The JSON beside "
       "this file has every count.\n";
  return o;
}

std::string render_matrix_json(const Matrix& m) {
  nlohmann::ordered_json j;
  j["fencesim_version"] = version();
  j["seeds"] = m.seeds;
  j["columns"] = m.columns;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MatrixRow& row : m.rows) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (const MatrixCell& c : row.cells) {
      nlohmann::ordered_json cj{{"fault", c.fault}};
      if (!c.not_applicable.empty()) {
        cj["not_applicable"] = c.not_applicable;
      } else {
        cj["runs"] = c.runs;
        nlohmann::ordered_json v;
        for (Property p : kSafety) {
          if (c.not_applicable_properties.count(to_string(p))) {
            v[to_string(p)] = nullptr;
          } else {
            auto it = c.violated.find(to_string(p));
            v[to_string(p)] = it == c.violated.end() ? 0 : it->second;
          }
        }
        cj["violated_runs"] = v;
        cj["progress_held_runs"] = c.progress_held;
      }
      cells.push_back(cj);
    }
    rows.push_back(nlohmann::ordered_json{{"design", row.design}, {"cells", cells}});
  }
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

}  // namespace fencesim
