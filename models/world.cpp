#include "models/world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/client/client.hpp"
#include "models/etcd/etcd.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/fingerprint.hpp"
#include "models/nemesis.hpp"
#include "models/redis/redis.hpp"
#include "models/resource/resource.hpp"
#include "sim/simulation.hpp"

namespace fencesim {

namespace {

std::optional<Time> fault_end(const FaultSpec& f, const std::vector<FaultSpec>& all) {
  switch (f.kind) {
    case FaultKind::kPause:
    case FaultKind::kSlow: return f.at + f.duration.value_or(Duration{0});
    case FaultKind::kClockJump:
    case FaultKind::kCounterReset:
    case FaultKind::kFailover:
    case FaultKind::kHeal: return f.at;
    case FaultKind::kClockDrift:
      if (f.duration) return f.at + *f.duration;
      return std::nullopt;
    case FaultKind::kPartition: {
      if (f.duration) return f.at + *f.duration;
      std::optional<Time> heal;
      for (const FaultSpec& h : all) {
        if (h.kind == FaultKind::kHeal && h.at >= f.at && (!heal || h.at < *heal)) heal = h.at;
      }
      return heal;
    }
    case FaultKind::kCrash:
      if (f.restart_after) return f.at + *f.restart_after;
      return std::nullopt;
  }
  return std::nullopt;
}

std::string fault_detail(const FaultSpec& f) {
  std::vector<std::string> parts;
  if (f.duration) parts.push_back("for " + sim::format_duration(*f.duration));
  switch (f.kind) {
    case FaultKind::kClockJump:
      parts.push_back(fmt::format("{} clock by {}",
                                  f.clock == ClockSelect::kWall        ? "wall"
                                  : f.clock == ClockSelect::kMonotonic ? "monotonic"
                                                                       : "wall and monotonic",
                                  sim::format_duration(f.by)));
      break;
    case FaultKind::kClockDrift: parts.push_back(fmt::format("{} ppm", f.ppm)); break;
    case FaultKind::kPartition: {
      std::string text;
      if (!f.isolate.empty()) {
        text = "isolate [" + fmt::format("{}", fmt::join(f.isolate, ", ")) + "]";
      } else {
        std::vector<std::string> groups;
        for (const auto& g : f.groups) groups.push_back("[" + fmt::format("{}", fmt::join(g, ", ")) + "]");
        text = "groups " + fmt::format("{}", fmt::join(groups, " | "));
      }
      if (f.one_way) text += " one-way";
      parts.push_back(text);
      break;
    }
    case FaultKind::kCrash:
      parts.push_back(f.restart_after ? "restart after " + sim::format_duration(*f.restart_after) : "no restart");
      break;
    case FaultKind::kCounterReset: parts.push_back(fmt::format("to {}", f.value)); break;
    case FaultKind::kSlow: parts.push_back("+" + sim::format_duration(f.delay) + " per message"); break;
    default: break;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// Everything a run owns; destroyed in reverse order (clients, services,
/// then the simulation with its fibers).
struct World {
  explicit World(std::uint64_t seed) : sim(seed) {}
  sim::Simulation sim;
  History history;
  std::unique_ptr<redis::RedisService> redis;
  std::unique_ptr<etcd::EtcdService> etcd;
  std::unique_ptr<resource::ResourceService> resource;
  std::vector<std::unique_ptr<client::ClientNode>> clients;
};

std::vector<sim::NodeId> ids_of(sim::Simulation& s, const std::vector<std::string>& names) {
  std::vector<sim::NodeId> out;
  for (const std::string& n : names) out.push_back(*s.find_node(n));
  return out;
}

void apply_fault(World& w, const FaultSpec& f, const std::vector<FaultSpec>& all) {
  sim::Simulation& s = w.sim;
  FaultRecord rec;
  rec.start = s.now();
  rec.end = fault_end(f, all);
  rec.kind = to_string(f.kind);
  rec.target = f.target;
  rec.detail = fault_detail(f);
  rec.origin = f.origin;
  auto skip = [&](const std::string& why) {
    rec.skipped = true;
    rec.skip_reason = why;
    w.history.faults.push_back(rec);
  };
  // Resolve a single-node target; role aliases resolve now.
  auto resolve = [&](const std::string& name) -> std::optional<sim::NodeId> {
    if (name == "redis-primary") {
      if (!w.redis) return std::nullopt;
      return w.redis->current_primary();
    }
    if (name == "etcd-leader") return w.etcd ? w.etcd->leader() : std::nullopt;
    return s.find_node(name);
  };
  switch (f.kind) {
    case FaultKind::kHeal: s.heal(); break;
    case FaultKind::kPartition: {
      sim::Partition p;
      for (const auto& g : f.groups) {
        std::vector<sim::NodeId> ids;
        for (const std::string& n : g) {
          if (auto id = resolve(n)) ids.push_back(*id);
        }
        p.groups.push_back(ids);
      }
      for (const std::string& n : f.isolate) {
        if (auto id = resolve(n)) p.isolate.push_back(*id);
      }
      p.one_way = f.one_way;
      const std::uint64_t id = s.add_partition(std::move(p));
      if (f.duration)
        s.at(
            s.now() + *f.duration, [&s, id] { s.remove_partition(id); }, sim::EventClass::kFault);
      break;
    }
    case FaultKind::kFailover: {
      std::string why;
      if (!w.redis || !w.redis->failover_now(why)) {
        skip(w.redis ? why : "no Redis service");
        return;
      }
      break;
    }
    case FaultKind::kCounterReset:
      if (f.target == "resource" || f.target == "resources") {
        w.resource->reset_marks(f.value);
      } else {
        std::string why;
        if (!w.redis || !w.redis->reset_counter(f.value, why)) {
          skip(w.redis ? why : "no Redis service");
          return;
        }
      }
      break;
    default: {
      const auto target = resolve(f.target);
      if (!target) {
        skip(f.target == "etcd-leader" ? "there is no etcd leader" : "unknown target " + f.target);
        return;
      }
      rec.target = s.node(*target).name();
      const sim::NodeId n = *target;
      switch (f.kind) {
        case FaultKind::kPause: s.pause(n, f.duration.value_or(Duration{0})); break;
        case FaultKind::kClockJump:
          if (f.clock != ClockSelect::kMonotonic) s.clock_jump(n, sim::ClockKind::kWall, f.by);
          if (f.clock != ClockSelect::kWall) s.clock_jump(n, sim::ClockKind::kMonotonic, f.by);
          break;
        case FaultKind::kClockDrift:
          s.set_drift(n, f.ppm);
          if (f.duration)
            s.at(
                s.now() + *f.duration, [&s, n] { s.set_drift(n, 0); }, sim::EventClass::kFault);
          break;
        case FaultKind::kCrash:
          s.crash(n);
          if (f.restart_after)
            s.at(
                s.now() + *f.restart_after, [&s, n] { s.restart(n); }, sim::EventClass::kFault);
          break;
        case FaultKind::kSlow: {
          const Duration d = f.delay;
          s.add_slow(n, d);
          s.at(
              s.now() + f.duration.value_or(Duration{0}), [&s, n, d] { s.add_slow(n, -d); }, sim::EventClass::kFault);
          break;
        }
        default: break;
      }
    }
  }
  w.history.faults.push_back(rec);
}

std::optional<std::int64_t> tok(const std::optional<std::int64_t>& t) { return t; }

/// The trace: every History record as an event, in true-time order.
void build_trace(const History& h, sim::Trace& trace) {
  std::vector<std::pair<std::pair<Time, int>, sim::TraceEvent>> ev;
  auto add = [&](Time t, int order, std::string node, std::string kind, std::vector<sim::TraceField> fields) {
    ev.push_back({{t, order}, sim::TraceEvent{t, std::move(node), std::move(kind), std::move(fields)}});
  };
  int order = 0;
  for (const FaultRecord& f : h.faults) {
    std::vector<sim::TraceField> fields{{"fault", f.kind}, {"detail", f.detail}, {"origin", f.origin}};
    if (f.skipped) fields.emplace_back("skipped", f.skip_reason);
    add(f.start, order++, f.target, "fault", std::move(fields));
  }
  for (const GrantRecord& g : h.grants) {
    std::vector<sim::TraceField> fields{{"client", g.client}, {"value", g.value}};
    if (g.token) fields.emplace_back("token", *g.token);
    add(g.at, order++, g.server, "grant", std::move(fields));
  }
  for (const BeliefRecord& b : h.beliefs) {
    std::vector<sim::TraceField> fields{{"value", b.value}};
    if (b.token) fields.emplace_back("token", *tok(b.token));
    add(b.start, order++, b.client, "belief_start", fields);
    if (b.end) {
      fields.emplace_back("reason", b.end_reason);
      add(*b.end, order++, b.client, "belief_end", std::move(fields));
    }
  }
  for (const auto& [value, e] : h.lease_ends) {
    add(e.at, order++, "service", "lease_end", {{"value", value}, {"reason", e.reason}});
  }
  for (const ResourceOpRecord& op : h.resource_ops) {
    std::vector<sim::TraceField> fields{{"client", op.client}, {"accepted", op.accepted}, {"value", op.value}};
    if (op.token) fields.emplace_back("token", *op.token);
    if (op.write) fields.emplace_back("read_value", op.read_value);
    fields.emplace_back("last_written", op.last_written);
    fields.emplace_back("last_seen", op.last_seen);
    if (!op.accepted) fields.emplace_back("reason", op.reason);
    add(op.at, order++, op.copy, op.write ? "write" : "read", std::move(fields));
  }
  for (const IterationRecord& it : h.iterations) {
    add(it.start, order++, it.client, "iteration", {{"index", it.index}, {"outcome", it.outcome}});
  }
  for (const RenewalRecord& r : h.renewals) {
    add(r.replied, order++, r.client, "renewal",
        {{"success", r.success}, {"latency_ns", (r.replied - r.first_sent).count()}});
  }
  for (const NoteRecord& n : h.notes) add(n.at, order++, n.node, n.kind, {{"text", n.text}});
  std::stable_sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, e] : ev) trace.add(std::move(e));
}

}  // namespace

std::optional<Time> last_fault_end(const std::vector<FaultSpec>& faults, Time run_end, bool& any_fault) {
  std::optional<Time> last = Time{-1};
  any_fault = false;
  for (const FaultSpec& f : faults) {
    if (f.at > run_end) continue;
    any_fault = true;
    const auto end = fault_end(f, faults);
    if (!end) return std::nullopt;
    if (*end > *last) last = *end;
  }
  return any_fault ? last : std::nullopt;
}

namespace {
/// Room in the history for what the workloads will likely record, so its
/// vectors do not regrow (and move every record) as the run goes: each
/// client's iterations, as many as fit in the run, a grant and a belief
/// each, a read and a write at the resource, and its renewals. Only a
/// guess; capped.
void reserve_history(History& h, const Scenario& s) {
  constexpr std::size_t kCap = std::size_t{1} << 15;
  const Duration ms{1'000'000};
  std::size_t iterations = 0, renewals = 0;
  for (const ClientSpec& c : s.clients) {
    const Duration round = std::max(c.workload.work + c.workload.think, ms);
    const auto fit = static_cast<std::size_t>(s.duration / round) + 1;
    iterations += std::min(static_cast<std::size_t>(std::max(c.workload.iterations, 0)), fit);
    if (c.renew) renewals += static_cast<std::size_t>(s.duration / std::max(c.renew_interval, ms)) + 1;
  }
  iterations = std::min(iterations, kCap);
  h.iterations.reserve(iterations);
  h.grants.reserve(iterations);
  h.beliefs.reserve(iterations);
  h.resource_ops.reserve(2 * iterations);
  h.renewals.reserve(std::min(renewals, kCap));
}
}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& opt) {
  RunResult out;
  Scenario s = sc;
  if (opt.seed) s.seed = *opt.seed;
  out.seed = s.seed;
  out.drawn = draw_nemesis(s);
  out.faults = s.faults;
  out.faults.insert(out.faults.end(), out.drawn.begin(), out.drawn.end());
  std::stable_sort(out.faults.begin(), out.faults.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });

  auto w = std::make_unique<World>(s.seed);
  reserve_history(w->history, s);
  sim::Simulation& simu = w->sim;
  simu.set_network(sim::NetworkConfig{s.network.latency_min, s.network.latency_max, s.network.loss_ppb});
  const NodeDirectory dir = directory(s);
  for (const std::string& n : dir.all()) simu.add_node(n);

  const auto client_ids = ids_of(simu, dir.clients);
  if (s.lock.service == ServiceKind::kRedis) {
    w->redis = std::make_unique<redis::RedisService>(simu, w->history, s, ids_of(simu, dir.redis),
                                                     ids_of(simu, dir.sentinels), client_ids);
  }
  if (s.lock.service == ServiceKind::kEtcd) {
    w->etcd = std::make_unique<etcd::EtcdService>(simu, w->history, s, ids_of(simu, dir.etcd));
  }
  w->resource = std::make_unique<resource::ResourceService>(simu, w->history, s.resource, ids_of(simu, dir.resources));
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const ClientSpec& c = s.clients[i];
    sim::Node& node = simu.node(client_ids[i]);
    std::unique_ptr<client::LockClient> lock;
    if (s.lock.service == ServiceKind::kRedis) {
      lock =
          client::make_redis_client(node, w->history, c, s.lock, ids_of(simu, dir.redis), ids_of(simu, dir.sentinels));
    } else if (s.lock.service == ServiceKind::kEtcd) {
      lock = client::make_etcd_client(node, w->history, c, s.lock, ids_of(simu, dir.etcd), i);
    }
    const auto copy = simu.find_node(c.resource);
    if (!copy) throw UnsupportedScenario("client " + c.name + " is routed to an unknown resource copy " + c.resource);
    w->clients.push_back(std::make_unique<client::ClientNode>(node, w->history, s, c, *copy, std::move(lock)));
  }

  // Faults take effect before any other event of the same instant.
  for (const FaultSpec& f : out.faults) {
    World* wp = w.get();
    const std::vector<FaultSpec>* all = &out.faults;
    simu.at(
        f.at, [wp, f, all] { apply_fault(*wp, f, *all); }, sim::EventClass::kFault);
  }
  if (w->redis) w->redis->start();
  if (w->etcd) w->etcd->start();
  for (auto& c : w->clients) c->start();

  const sim::RunStatus status = simu.run_until(s.duration, opt.event_budget, opt.pending_budget);
  out.budget_exceeded = status == sim::RunStatus::kEventBudgetExceeded;
  out.events = simu.events_processed();

  out.context.run_end = s.duration;
  out.context.last_fault_end = last_fault_end(out.faults, s.duration, out.context.any_fault);
  std::optional<raft::SafetyVerdict> raft_verdict;
  std::optional<std::uint64_t> raft_fp;  // the Raft events go with the world: hashed first
  if (w->etcd) {
    raft_verdict = raft::check_raft_safety(w->etcd->raft_history());
    raft_fp = raft_fingerprint(w->etcd->raft_history());
  }
  const std::uint64_t engine_fp = simu.event_fingerprint();
  out.history = std::move(w->history);  // nothing writes history while the world is torn down
  w.reset();

  out.verdicts = check_all(s, out.history, out.context);
  for (Verdict& v : out.verdicts) {
    if (v.property != Property::kRaftSafety || !raft_verdict) continue;
    v.status = raft_verdict->holds ? Status::kHolds : Status::kViolated;
    v.checked = static_cast<std::int64_t>(raft_verdict->checked);
    v.at = raft_verdict->at;
    v.summary = raft_verdict->holds ? fmt::format(
                                          "{} Raft events checked: one leader per term, logs and applied "
                                          "commands agree, no committed entry lost",
                                          raft_verdict->checked)
                                    : raft_verdict->rule + ": " + raft_verdict->summary;
    v.story = raft_verdict->story;
    if (v.expected) {
      v.met = (*v.expected == Expectation::kHolds) == (v.status == Status::kHolds);
    }
  }
  out.metrics = compute_metrics(s, out.history, out.context);
  out.all_met = !out.budget_exceeded;
  for (const Verdict& v : out.verdicts) out.all_met = out.all_met && v.met;
  out.trace.set_enabled(opt.trace);
  if (opt.trace) build_trace(out.history, out.trace);
  out.fingerprint = run_fingerprint(history_fingerprint(out.history), engine_fp, raft_fp);
  return out;
}

}  // namespace fencesim
