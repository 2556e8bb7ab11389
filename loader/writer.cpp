// loader/writer.cpp — Scenario -> scenario file text (see writer.hpp).
#include "loader/writer.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "loader/loader.hpp"
#include "models/checkers/metric_expect.hpp"
#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/nemesis.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/time.hpp"

namespace fencesim {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::size_t kWidth = 100;  ///< objects and arrays that fit stay on one line

std::string dur(Duration d) { return sim::format_duration(d); }

/// A duration, or {"min", "max"} when the two differ.
ojson range_json(Duration lo, Duration hi) {
  if (lo == hi) return dur(lo);
  return ojson{{"min", dur(lo)}, {"max", dur(hi)}};
}

ojson network_json(const NetworkSpec& n) {
  const NetworkSpec def;
  ojson j = ojson::object();
  if (n.latency_min != def.latency_min || n.latency_max != def.latency_max)
    j["latency"] = range_json(n.latency_min, n.latency_max);
  // The loader rounds loss × 1e9 to the nearest integer; ppb / 1e9 as a
  // double is within 1e-6 of that, and JSON keeps every digit of it.
  if (n.loss_ppb != def.loss_ppb) j["loss"] = static_cast<double>(n.loss_ppb) / 1e9;
  return j;
}

/// Collects what the fault table and the lock services write
/// (models/key_writer.hpp) as JSON, durations in the format's strings.
class JsonFaultWriter final : public KeyWriter {
 public:
  void text(std::string_view key, const std::string& value) override { j_[std::string(key)] = value; }
  void integer(std::string_view key, std::int64_t value) override { j_[std::string(key)] = value; }
  void boolean(std::string_view key, bool value) override { j_[std::string(key)] = value; }
  void duration(std::string_view key, Duration value) override { j_[std::string(key)] = dur(value); }
  void nodes(std::string_view key, const std::vector<std::string>& value) override { j_[std::string(key)] = value; }
  void node_groups(std::string_view key, const std::vector<std::vector<std::string>>& value) override {
    j_[std::string(key)] = value;
  }
  void null_value(std::string_view key) override { j_[std::string(key)] = nullptr; }
  void object(std::string_view key, const std::function<void(KeyWriter&)>& fill) override {
    JsonFaultWriter inner;
    fill(inner);
    j_[std::string(key)] = inner.take();
  }
  ojson take() { return std::move(j_); }

 private:
  ojson j_ = ojson::object();
};

ojson lock_json(const LockSpec& l) {
  // The service's own keys are its descriptor's (ServiceDescriptor::write).
  const ServiceDescriptor& d = service_descriptor(l.service());
  ojson j{{"service", d.name()}};
  if (d.has_lock_key()) {
    const LockSpec def;
    j["ttl"] = dur(l.requested_ttl);
    if (l.key != def.key) j["key"] = l.key;
    if (!l.keys.empty()) {
      ojson keys = ojson::array();
      for (const std::string& k : l.keys) keys.push_back(k);
      j["keys"] = std::move(keys);
    }
  }
  JsonFaultWriter w;
  d.write(l, w);
  ojson own = w.take();
  for (auto it = own.begin(); it != own.end(); ++it) j[it.key()] = std::move(it.value());
  return j;
}

/// clients[].program, resource.program. The folder is absolute once loaded
/// from a file, so a written file (shrink's, matrix's) runs the program
/// wherever it is saved.
ojson program_json(const ProgramSpec& prog) {
  ojson p{{"command", prog.command}};
  if (!prog.env.empty()) p["env"] = prog.env;
  if (prog.cwd != ".") p["cwd"] = prog.cwd;
  if (prog.yield_timeout != ProgramSpec{}.yield_timeout) p["yield_timeout"] = dur(prog.yield_timeout);
  return p;
}

ojson resource_json(const ResourceSpec& r) {
  const ResourceSpec def;
  ojson j{{"kind", to_string(r.kind)}};
  if (r.kind == ResourceKind::kFenced) {
    j["check"] = word(r.check);
    if (r.fence_reads != def.fence_reads) j["fence_reads"] = r.fence_reads;
    if (r.idempotent != def.idempotent) j["idempotent"] = r.idempotent;
  }
  if (r.kind == ResourceKind::kProgram && r.program) {
    j["program"] = program_json(*r.program);
    if (r.fence_reads != def.fence_reads) j["fence_reads"] = r.fence_reads;
    if (r.compare_versions != def.compare_versions) j["compare_versions"] = r.compare_versions;
  }
  if (r.initial != def.initial) j["initial"] = r.initial;
  if (r.replicas != def.replicas) j["replicas"] = r.replicas;
  if (r.replication_delay != def.replication_delay) j["replication_delay"] = dur(r.replication_delay);
  return j;
}

ojson workload_json(const WorkloadSpec& w) {
  const WorkloadSpec def;
  ojson j{{"kind", to_string(w.kind)}};
  if (w.kind == WorkloadKind::kSequenceAllocator) j["block"] = w.block;
  j["work"] = w.work_max ? range_json(w.work, *w.work_max) : ojson(dur(w.work));
  if (w.iterations != def.iterations) j["iterations"] = w.iterations;
  if (w.think_max) {
    j["think"] = range_json(w.think, *w.think_max);
  } else if (w.think != def.think) {
    j["think"] = dur(w.think);
  }
  if (w.retries != def.retries) j["retries"] = w.retries;
  if (w.retry_backoff != def.retry_backoff) j["retry_backoff"] = to_string(w.retry_backoff);
  return j;
}

ojson client_json(const ClientSpec& c, const LockSpec& lock, const std::string& name, int count) {
  const ClientSpec def;
  ojson j{{"name", name}};
  if (count > 1) j["count"] = count;
  if (c.start != def.start) j["start"] = dur(c.start);
  if (c.fencing != def.fencing) j["fencing"] = c.fencing;
  if (c.renew != def.renew) j["renew"] = c.renew;
  if (c.renew_interval != default_renew_interval(lock, c)) j["renew_interval"] = dur(c.renew_interval);
  if (c.renew_clock != def.renew_clock) j["renew_clock"] = word(c.renew_clock);
  if (c.retry_interval != def.retry_interval) j["retry_interval"] = dur(c.retry_interval);
  if (c.command_timeout != def.command_timeout) j["command_timeout"] = dur(c.command_timeout);
  if (c.resource != def.resource) j["resource"] = c.resource;
  if (!c.lock.empty()) j["lock"] = c.lock;
  if (c.program) {
    j["program"] = program_json(*c.program);
  } else {
    j["workload"] = workload_json(c.workload);
  }
  if (c.check_lease_before_write) j["check_lease_before_write"] = dur(*c.check_lease_before_write);
  if (c.on_lease_loss != def.on_lease_loss) j["on_lease_loss"] = word(c.on_lease_loss);
  if (c.lease_loss_after) j["lease_loss_after"] = dur(*c.lease_loss_after);
  if (c.ttl) j["ttl"] = dur(*c.ttl);
  if (c.library) j["library"] = word(*c.library);
  if (!c.library_version.empty()) j["library_version"] = c.library_version;
  if (c.retry_strategy) j["retry_strategy"] = word(*c.retry_strategy);
  if (c.tries) j["tries"] = *c.tries;
  if (c.connection_policy) j["connection_policy"] = word(*c.connection_policy);
  return j;
}

/// Everything but the name equal?
bool same_but_name(ClientSpec a, const ClientSpec& b) {
  a.name = b.name;
  return a == b;
}

/// Can `base` be the name of a client with `count` (the loader's rules)?
bool countable_base(const std::string& base) {
  static const std::vector<std::string_view> kReserved = {"clients",     "redis",  "sentinels", "etcd",
                                                          "resources",   "queues", "queue",     "redis-primary",
                                                          "etcd-leader", "tables"};
  // Every registered service's groups and roles are reserved too.
  const std::vector<std::string> groups = all_group_names();
  const std::vector<std::string> roles = all_role_names();
  return !base.empty() && base.size() <= LoaderLimits::kMaxNameLength &&
         std::find(kReserved.begin(), kReserved.end(), base) == kReserved.end() &&
         std::find(groups.begin(), groups.end(), base) == groups.end() &&
         std::find(roles.begin(), roles.end(), base) == roles.end();
}

ojson clients_json(const std::vector<ClientSpec>& cs, const LockSpec& lock) {
  ojson arr = ojson::array();
  for (std::size_t i = 0; i < cs.size();) {
    const std::string& n = cs[i].name;
    std::size_t run = 1;
    std::string base;
    if (n.size() > 2 && n.ends_with("-0")) {
      base = n.substr(0, n.size() - 2);
      if (countable_base(base)) {
        while (i + run < cs.size() && run < static_cast<std::size_t>(Limits::kMaxClients) &&
               cs[i + run].name == base + "-" + std::to_string(run) && same_but_name(cs[i + run], cs[i])) {
          ++run;
        }
      }
    }
    if (run > 1) {
      arr.push_back(client_json(cs[i], lock, base, static_cast<int>(run)));
    } else {
      arr.push_back(client_json(cs[i], lock, n, 1));
    }
    i += run;
  }
  return arr;
}

ojson nemesis_json(const NemesisSpec& n, const Scenario& s) {
  const NemesisSpec def;
  ojson kinds = ojson::array();
  for (FaultKind k : n.kinds) kinds.push_back(to_string(k));
  ojson j{{"kinds", kinds}};
  // Left out, the targets are the clients.
  if (!n.groups.empty()) {
    j["groups"] = n.groups;
  } else if (n.targets != directory(s).clients()) {
    j["targets"] = n.targets;
  }
  if (n.interval_min != def.interval_min || n.interval_max != def.interval_max)
    j["interval"] = range_json(n.interval_min, n.interval_max);
  if (n.max_duration != def.max_duration) j["max_duration"] = dur(n.max_duration);
  if (n.swarm) j["swarm"] = true;
  return j;
}

// -- text ----------------------------------------------------------------------

std::string scalar_text(const ojson& v) { return v.dump(-1, ' ', false, ojson::error_handler_t::replace); }

/// `v` on one line, with ", " and ": " between items.
std::string compact(const ojson& v) {
  if (v.is_object()) {
    if (v.empty()) return "{}";
    std::string out = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += scalar_text(ojson(it.key())) + ": " + compact(it.value());
    }
    return out + "}";
  }
  if (v.is_array()) {
    if (v.empty()) return "[]";
    std::string out = "[";
    bool first = true;
    for (const auto& e : v) {
      if (!first) out += ", ";
      first = false;
      out += compact(e);
    }
    return out + "]";
  }
  return scalar_text(v);
}

/// Appends `v`, which starts at `column` of a line indented by `indent`.
void emit(const ojson& v, std::size_t indent, std::size_t column, bool top, std::string& out) {
  if (!v.is_structured() || v.empty()) {
    out += compact(v);
    return;
  }
  if (!top) {
    std::string one = compact(v);
    // +1 for a following comma.
    if (column + one.size() + 1 <= kWidth) {
      out += one;
      return;
    }
  }
  const std::string pad(indent + 2, ' ');
  out += v.is_object() ? "{\n" : "[\n";
  std::size_t n = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++n) {
    out += pad;
    std::size_t col = pad.size();
    if (v.is_object()) {
      const std::string key = scalar_text(ojson(it.key())) + ": ";
      out += key;
      col += key.size();
    }
    emit(it.value(), indent + 2, col, false, out);
    if (n + 1 < v.size()) out += ",";
    out += "\n";
  }
  out += std::string(indent, ' ') + (v.is_object() ? "}" : "]");
}

}  // namespace

ojson fault_entry_json(const FaultSpec& f) {
  JsonFaultWriter w;
  write_fault(f, w);
  ojson j = w.take();
  if (f.at_max) j["at"] = range_json(f.at, *f.at_max);  // keeps its place, first
  return j;
}

Scenario written_scenario(const Scenario& in, const WriteOptions& opt) {
  Scenario s = in;
  if (opt.seed) s.seed = *opt.seed;
  if (opt.materialize_nemesis) s.faults = draw_fault_times(s);  // ranged starts fixed to this seed's draws
  if (opt.materialize_nemesis && s.nemesis) {
    std::vector<FaultSpec> drawn = draw_nemesis(s);
    for (FaultSpec& f : drawn) {
      f.origin = "faults[" + std::to_string(s.faults.size()) + "]";
      // A kind drawn as one cut (whole_group: a partition) names its nodes in
      // "isolate"; the format gives it no target (see WriteOptions).
      if (fault_info(f.kind).whole_group) f.target.clear();
      s.faults.push_back(std::move(f));
    }
    s.nemesis.reset();
  }
  return s;
}

ojson scenario_json(const Scenario& in, const WriteOptions& opt) {
  const Scenario s = written_scenario(in, opt);
  const Scenario def;
  ojson j{{"version", s.version}, {"scenario", s.name}};
  if (!s.description.empty()) j["description"] = s.description;
  j["seed"] = s.seed;
  j["duration"] = dur(s.duration);
  if (s.settle != def.settle) j["settle"] = dur(s.settle);
  if (ojson n = network_json(s.network); !n.empty()) j["network"] = n;
  j["lock"] = lock_json(s.lock);
  j["resource"] = resource_json(s.resource);
  j["clients"] = clients_json(s.clients, s.lock);
  if (!s.faults.empty()) {
    ojson faults = ojson::array();
    for (const FaultSpec& f : s.faults) faults.push_back(fault_entry_json(f));
    j["faults"] = faults;
  }
  if (s.nemesis) j["nemesis"] = nemesis_json(*s.nemesis, s);
  if (!s.expect.empty() || !s.expect_metrics.empty()) {
    ojson e = ojson::object();
    for (const auto& [p, x] : s.expect) e[to_string(p)] = to_string(x);
    if (!s.expect_metrics.empty()) {
      ojson m = ojson::object();
      for (const auto& [name, b] : s.expect_metrics) {
        const MetricInfo* info = find_metric(name);
        const bool duration = info != nullptr && info->duration;
        const auto number = [&](std::int64_t x) { return duration ? ojson(dur(Duration{x})) : ojson(x); };
        ojson bj = ojson::object();
        if (b.min) bj["min"] = number(*b.min);
        if (b.max) bj["max"] = number(*b.max);
        m[name] = bj;
      }
      e["metrics"] = m;
    }
    j["expect"] = e;
  }
  return j;
}

std::string write_scenario(const Scenario& s, const WriteOptions& opt) {
  std::string out;
  emit(scenario_json(s, opt), 0, 0, true, out);
  return out + "\n";
}

namespace {

/// The first part in which `a` and `b` differ, e.g. "clients[2]"; "" if equal.
std::string first_difference(const Scenario& a, const Scenario& b) {
  if (a.version != b.version) return "version";
  if (a.name != b.name) return "scenario";
  if (a.description != b.description) return "description";
  if (a.seed != b.seed) return "seed";
  if (a.duration != b.duration) return "duration";
  if (a.settle != b.settle) return "settle";
  if (a.network != b.network) return "network";
  if (a.lock != b.lock) return "lock";
  if (a.resource != b.resource) return "resource";
  auto list = [](const auto& x, const auto& y, const std::string& what) -> std::string {
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (!(x[i] == y[i])) return what + "[" + std::to_string(i) + "]";
    }
    if (x.size() != y.size()) return what + " (" + std::to_string(x.size()) + " vs " + std::to_string(y.size()) + ")";
    return "";
  };
  if (auto d = list(a.clients, b.clients, "clients"); !d.empty()) return d;
  if (auto d = list(a.faults, b.faults, "faults"); !d.empty()) return d;
  if (a.nemesis != b.nemesis) return "nemesis";
  if (a.expect != b.expect) return "expect";
  if (a.expect_metrics != b.expect_metrics) return "expect.metrics";
  if (a.notes != b.notes) return "notes";
  return "";
}

}  // namespace

WriteResult write_scenario_checked(const Scenario& s, const WriteOptions& opt) {
  WriteResult r;
  r.text = write_scenario(s, opt);
  const LoadResult back = load_scenario_text(r.text, s.name.empty() ? "(written scenario)" : s.name + " (written)");
  if (!back.ok()) {
    r.error = "the written scenario does not load: " + back.error->to_string();
    return r;
  }
  const std::string diff = first_difference(written_scenario(s, opt), *back.scenario);
  if (!diff.empty()) r.error = "written and loaded back, " + diff + " differs";
  return r;
}

}  // namespace fencesim
