#include "models/world.hpp"
#include "models/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "models/client/client.hpp"
#include "models/faults.hpp"
#include "models/fingerprint.hpp"
#include "models/lock_service.hpp"
#include "models/nemesis.hpp"
#include "models/policy_runtime.hpp"
#include "models/program/program_check.hpp"
#include "models/program/program_client.hpp"
#include "models/resource/resource.hpp"
#include "models/sim_fault_env.hpp"
#include "sim/simulation.hpp"
#include "sim/text.hpp"

namespace fencesim {

namespace {

struct World;

/// What a fault may do (models/faults.hpp), for this World: the verbs on its
/// simulation (models/sim_fault_env.hpp); role aliases resolve through the
/// lock service at this instant, the service's own faults (failover,
/// counter_reset of its counter) go to it.
class WorldFaultEnv final : public SimFaultEnv {
 public:
  explicit WorldFaultEnv(World& w);
  std::optional<std::string> resolve(const std::string& name, std::string& why) override;
  bool apply_service_fault(const FaultSpec& f, std::string& why) override;
  void reset_resource_marks(std::int64_t value) override;

 private:
  World& w_;
};

/// Everything a run owns; destroyed in reverse order (clients, resource,
/// the lock service, the fault env, then the simulation with its fibers).
struct World {
  explicit World(std::uint64_t seed) : sim(seed) {}
  sim::Simulation sim;
  History history;
  WorldFaultEnv fault_env{*this};  ///< lives as long as the simulation: a fault's end calls back into it
  std::vector<std::string> roles;  ///< the service's role aliases (NodeDirectory::roles)
  std::unique_ptr<LockService> service;
  std::unique_ptr<resource::ResourceService> resource;
  std::vector<std::unique_ptr<client::ClientNode>> clients;
  std::vector<std::unique_ptr<program::ProgramClient>> programs;  ///< clients[].program, in client order
  std::shared_ptr<program::ProgramCheck> check;                   ///< resource.program; also the resource's
};

std::vector<sim::NodeId> ids_of(sim::Simulation& s, const std::vector<std::string>& names) {
  std::vector<sim::NodeId> out;
  for (const std::string& n : names) out.push_back(*s.find_node(n));
  return out;
}

WorldFaultEnv::WorldFaultEnv(World& w) : SimFaultEnv(w.sim, w.history), w_(w) {}

std::optional<std::string> WorldFaultEnv::resolve(const std::string& name, std::string& why) {
  std::optional<sim::NodeId> id;
  if (std::find(w_.roles.begin(), w_.roles.end(), name) != w_.roles.end()) {
    id = w_.service->resolve_role(name, why);
  } else {
    id = id_of(name, why);
  }
  if (!id) return std::nullopt;
  return w_.sim.node(*id).name();
}
bool WorldFaultEnv::apply_service_fault(const FaultSpec& f, std::string& why) {
  return w_.service->apply_fault(f, why);
}
void WorldFaultEnv::reset_resource_marks(std::int64_t value) { w_.resource->reset_marks(value); }

std::optional<std::int64_t> tok(const std::optional<std::int64_t>& t) { return t; }

}  // namespace

/// The trace: every History record as an event, in true-time order.
void build_trace(const History& h, sim::Trace& trace) {
  std::vector<std::pair<std::pair<Time, int>, sim::TraceEvent>> ev;
  auto add = [&](Time t, int order, std::string node, std::string kind, std::vector<sim::TraceField> fields) {
    ev.push_back({{t, order}, sim::TraceEvent{t, std::move(node), std::move(kind), std::move(fields)}});
  };
  int order = 0;
  for (const FaultRecord& f : h.faults) {
    std::vector<sim::TraceField> fields{{"fault", to_string(f.kind)}, {"detail", f.detail}, {"origin", f.origin}};
    if (f.skipped) fields.emplace_back("skipped", f.skip_reason);
    add(f.start, order++, f.target, "fault", std::move(fields));
  }
  for (const GrantRecord& g : h.grants) {
    std::vector<sim::TraceField> fields{{"client", g.client}, {"value", g.value}};
    if (g.token) fields.emplace_back("token", *g.token);
    if (!g.lock.empty()) fields.emplace_back("lock", g.lock);
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
    if (!op.marks.empty()) fields.emplace_back("marks", named_marks_text(op.marks));
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

std::optional<Time> last_fault_end(const std::vector<FaultSpec>& faults, Time run_end, bool& any_fault) {
  std::optional<Time> last = Time{-1};
  any_fault = false;
  for (const FaultSpec& f : faults) {
    if (f.at >= run_end) continue;  // never happens (not scheduled)
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

namespace {

/// The scripted faults (their ranged starts drawn) and the nemesis draws, in
/// start order.
void collect_faults(const Scenario& s, RunResult& out) {
  out.swarm = draw_swarm(s);
  out.drawn = draw_nemesis(s);
  out.faults = draw_fault_times(s);
  out.faults.insert(out.faults.end(), out.drawn.begin(), out.drawn.end());
  std::stable_sort(out.faults.begin(), out.faults.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
}

/// The descriptor of the scenario's lock service.
const ServiceDescriptor& service_kind(const Scenario& s) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->kind() == s.lock.service()) return *d;
  }
  throw UnsupportedScenario("no lock service is registered for lock.service " +
                            std::to_string(static_cast<int>(s.lock.service())));
}

/// Where program clients may send: the service's nodes and the copies.
program::ProgramTargets program_targets(const NodeDirectory& dir) {
  program::ProgramTargets t{dir.service_nodes(), dir.resources(), {}};
  for (const NodeGroup& g : dir.groups) {
    if (g.name != "clients" && !g.nodes.empty()) t.groups.push_back(g);
  }
  return t;
}

/// The nodes (in directory order, which fixes their ids), the lock service,
/// the resource copies and the client nodes with their lock clients.
std::unique_ptr<World> build_world(const Scenario& s) {
  const ServiceDescriptor& kind = service_kind(s);
  auto w = std::make_unique<World>(s.seed);
  reserve_history(w->history, s);
  sim::Simulation& simu = w->sim;
  simu.set_network(sim::NetworkConfig{s.network.latency_min, s.network.latency_max, s.network.loss_ppb});
  const NodeDirectory dir = directory(s);
  for (const std::string& n : dir.all()) simu.add_node(n);
  w->roles = dir.roles();

  const auto client_ids = ids_of(simu, dir.clients());
  ServiceContext ctx{simu, w->history, s, {}, client_ids};
  for (const NodeGroup& g : kind.groups(s)) ctx.groups.push_back(ids_of(simu, g.nodes));
  w->service = kind.build(ctx);
  if (s.resource.program) {
    w->check = std::make_shared<program::ProgramCheck>(simu, s, dir.resources(), program_targets(dir).groups);
  }
  w->resource = std::make_unique<resource::ResourceService>(simu, w->history, s.resource, ids_of(simu, dir.resources()),
                                                            w->check);
  if (w->check) w->check->start();
  {
    std::map<std::string, std::string> rows;
    if (multiple_locks(s.lock)) {
      for (const ClientSpec& c : s.clients) rows.emplace(c.name, lock_of(s.lock, c));
    }
    w->history.client_locks = rows;  // labels grants and beliefs as they are recorded
    w->resource->set_locks(kind.takes_lock() ? s.lock.key : std::string(), std::move(rows));
  }
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const ClientSpec& c = s.clients[i];
    sim::Node& node = simu.node(client_ids[i]);
    const auto copy = simu.find_node(c.resource);
    if (!copy) throw UnsupportedScenario("client " + c.name + " is routed to an unknown resource copy " + c.resource);
    if (c.program) {
      w->programs.push_back(std::make_unique<program::ProgramClient>(node, w->history, s, c, i, "client " + c.name,
                                                                     *copy, program_targets(dir)));
      continue;
    }
    std::unique_ptr<client::LockClient> lock = w->service->make_client(node, w->history, c, i);
    w->clients.push_back(std::make_unique<client::ClientNode>(node, w->history, s, c, *copy, std::move(lock)));
  }
  return w;
}

/// More than one lock (lock.keys): each grant and belief names its client's
/// lock (a client takes one lock for the whole run, so its name decides).
void label_locks(const Scenario& s, History& h) {
  if (!multiple_locks(s.lock)) return;
  std::map<std::string, std::string> lock;
  for (const ClientSpec& c : s.clients) lock.emplace(c.name, lock_of(s.lock, c));
  for (GrantRecord& g : h.grants) {
    if (auto it = lock.find(g.client); it != lock.end()) g.lock = it->second;
  }
  for (BeliefRecord& b : h.beliefs) {
    if (auto it = lock.find(b.client); it != lock.end()) b.lock = it->second;
  }
}

/// Schedules every fault (before any other event of its instant), then
/// starts the service and the clients.
void schedule_and_start(World& w, const std::vector<FaultSpec>& faults, Time run_end) {
  for (const FaultSpec& f : faults) {
    // A fault at or after the end of the run never happens (docs/FORMAT.md
    // "Notes"): not even at the last instant, where it could only make
    // `progress` vacuous.
    if (f.at >= run_end) continue;
    World* wp = &w;
    const std::vector<FaultSpec>* all = &faults;
    w.sim.at(
        f.at, [wp, f, all] { apply_fault(wp->fault_env, f, *all); }, sim::EventClass::kFault);
  }
  w.service->start();
  for (auto& c : w.clients) c->start();
  for (auto& p : w.programs) p->start();
}

/// Verdicts, metrics, whether every expectation is met, and the trace.
void judge(const Scenario& s, const RunOptions& opt, const std::vector<Verdict>& service_verdicts, RunResult& out) {
  out.verdicts = check_all(s, out.history, out.context, service_verdicts);
  out.metrics = compute_metrics(s, out.history, out.context);
  out.metric_verdicts = check_metric_expectations(s, out.metrics);
  out.all_met = !out.budget_exceeded;
  for (const Verdict& v : out.verdicts) out.all_met = out.all_met && v.met;
  for (const MetricVerdict& v : out.metric_verdicts) out.all_met = out.all_met && v.met;
  out.trace.set_enabled(opt.trace);
  if (opt.trace) build_trace(out.history, out.trace);
}

}  // namespace

namespace {

RunResult run_once(const Scenario& s, const RunOptions& opt) {
  RunResult out;
  out.seed = s.seed;
  collect_faults(s, out);

  auto w = build_world(s);
  schedule_and_start(*w, out.faults, s.duration);
  const sim::RunStatus status = w->sim.run_until(s.duration, opt.event_budget, opt.pending_budget);
  out.budget_exceeded = status == sim::RunStatus::kEventBudgetExceeded;
  out.events = w->sim.events_processed();
  for (auto& p : w->programs) {
    p->finish();
    out.program_output.emplace_back(p->name(), sim::valid_utf8(p->output()));  // stderr is any bytes
  }
  if (w->check) {
    w->check->finish();
    out.program_output.emplace_back("resource", sim::valid_utf8(w->check->output()));
  }

  out.context.run_end = s.duration;
  out.context.last_fault_end = last_fault_end(out.faults, s.duration, out.context.any_fault);
  const std::vector<Verdict> service_verdicts = w->service->own_verdicts();
  // The service's own events (Raft's) go with the world: hashed first.
  const std::optional<std::uint64_t> service_fp = w->service->fingerprint();
  const std::uint64_t engine_fp = w->sim.event_fingerprint();
  out.history = std::move(w->history);  // nothing writes history while the world is torn down
  label_locks(s, out.history);
  w.reset();

  judge(s, opt, service_verdicts, out);
  out.fingerprint = run_fingerprint(history_fingerprint(out.history), engine_fp, service_fp);
  return out;
}

/// One run inside a RunScope: a misuse the debug checks caught comes out as
/// PolicyMisuse even when it was thrown inside a process (a sim::ModelBug then).
RunResult run_scoped(const Scenario& s, const RunOptions& opt, bool record,
                     std::vector<policy_detail::CallRecord>* calls) {
  policy_detail::RunScope scope(record);
  try {
    RunResult r = run_once(s, opt);
    if (calls != nullptr) *calls = std::move(scope.state().calls);
    return r;
  } catch (const sim::ModelBug&) {
    if (!scope.state().misuse.empty()) throw PolicyMisuse(scope.state().misuse);
    throw;
  }
}

std::string call_text(const policy_detail::CallRecord& c, std::size_t i) {
  return fmt::format("call #{} to policy \"{}\" ({}) for {} at {}", i + 1, c.policy, c.what, c.node, format_time(c.at));
}

/// The self-check: the same run again, every policy call compared.
void self_check(const Scenario& s, const RunOptions& opt, const RunResult& first,
                const std::vector<policy_detail::CallRecord>& a) {
  std::vector<policy_detail::CallRecord> b;
  const RunResult second = run_scoped(s, opt, true, &b);
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& x = a[i];
    const auto& y = b[i];
    if (x.policy != y.policy || x.what != std::string_view(y.what) || x.node != y.node || x.at != y.at ||
        x.in != y.in) {
      throw PolicyMisuse(fmt::format(
          "self-check: two runs of scenario \"{}\" seed {} parted before {} (the second run made {}): a policy "
          "changed the run through something other than its answers (a draw from a stream other than its "
          "PolicyContext::rng, shared state)",
          s.name, first.seed, call_text(x, i), call_text(y, i)));
    }
    if (x.out != y.out) {
      throw PolicyMisuse(fmt::format(
          "self-check: {} got the same arguments in two runs of scenario \"{}\" seed {} and answered "
          "differently: the policy depends on something outside its arguments (a member it changes, a global, a "
          "real clock, OS randomness, a thread); see models/policy.hpp \"Determinism\"",
          call_text(x, i), s.name, first.seed));
    }
  }
  if (a.size() != b.size() || first.fingerprint != second.fingerprint) {
    throw PolicyMisuse(fmt::format(
        "self-check: two runs of scenario \"{}\" seed {} differed ({} and {} policy calls, fingerprints {:016x} and "
        "{:016x}) although every policy call compared answered the same",
        s.name, first.seed, a.size(), b.size(), first.fingerprint, second.fingerprint));
  }
}

}  // namespace

bool has_custom_policy(const Scenario& s) {
  if (s.resource.custom_check) return true;
  return std::any_of(s.clients.begin(), s.clients.end(), [](const ClientSpec& c) { return c.policy != nullptr; });
}

RunResult run_scenario(const Scenario& sc, const RunOptions& opt) {
  Scenario s = sc;
  // A client that names no renewal interval (a hand-built ClientSpec{})
  // gets the default here as resolve_scenario gives it; a resolved scenario
  // is unchanged.
  for (ClientSpec& c : s.clients) {
    if (c.renew_interval == kResolveRenewInterval) c.renew_interval = default_renew_interval(s.lock, c);
  }
  // A scenario that breaks a rule of the format is refused, with the words
  // and JSON path a file would get (models/validate.hpp).
  if (auto problem = validate_scenario(s)) throw InvalidScenario(std::move(*problem));
  if (opt.seed) s.seed = *opt.seed;
#ifdef NDEBUG
  constexpr bool kDebugBuild = false;
#else
  constexpr bool kDebugBuild = true;
#endif
  const bool check = has_custom_policy(s) && opt.self_check.value_or(kDebugBuild);
  if (!check) return run_scoped(s, opt, false, nullptr);
  std::vector<policy_detail::CallRecord> calls;
  RunResult out = run_scoped(s, opt, true, &calls);
  self_check(s, opt, out, calls);
  return out;
}

}  // namespace fencesim
