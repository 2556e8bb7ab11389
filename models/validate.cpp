// models/validate.cpp — resolution, semantic rules and notes of a scenario
// (see validate.hpp and docs/FORMAT.md). The messages are the loader's: a
// file and a Scenario built in code get the same words at the same path.
#include "models/validate.hpp"

#include "models/policy.hpp"

#include "models/checkers/metric_expect.hpp"
#include "models/checkers/registry.hpp"
#include "models/etcd/versions.hpp"

#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/redis/cluster.hpp"
#include "models/rules.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sim/text.hpp"

namespace fencesim {

using namespace rules;  // problem, key, positive, fmt_d, … (models/rules.hpp)

static_assert(Limits::kMaxServiceNodes == 25 && Limits::kMaxResourceCopies == 25 && Limits::kMaxClients == 200 &&
                  Limits::kMaxIterations == 100'000,
              "the range words of Ranges (validate.hpp) spell these limits out");

std::string IntRange::message(std::string_view got) const {
  return "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + extra + ", got " +
         std::string(got);
}

std::string ScenarioProblem::to_string() const {
  std::string out = path.empty() ? message : "at " + path + ": " + message;
  if (!suggestion.empty()) out += " (" + suggestion + ")";
  return out;
}

InvalidScenario::InvalidScenario(ScenarioProblem p) : std::invalid_argument(p.to_string()), problem(std::move(p)) {}

std::string ScenarioSource::client_path(std::size_t i) const {
  return "clients[" + std::to_string(client(i).index) + "]";
}

// ---------------------------------------------------------------------------
// Text helpers.

std::string quote_text(std::string_view s, std::size_t max) {
  std::string out = "\"";
  std::size_t n = 0;
  for (unsigned char c : s) {
    if (n++ >= max) {
      out += "…";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (sim::is_control(c)) {
      sim::append_escaped_control(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

/// Optimal-string-alignment distance (Levenshtein plus adjacent
/// transpositions, so "puase" is one edit from "pause"), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto low = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string suggest_nearest(std::string_view got, const std::vector<std::string>& candidates) {
  if (got.empty() || got.size() > 64) return "";
  // Short words get few edits, so "C" is not "corrected" to "A".
  const std::size_t limit = got.size() <= 2 ? 0 : got.size() <= 4 ? 1 : got.size() <= 7 ? 2 : 3;
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::string_view cv(c);
    if (cv.size() > 64) continue;
    std::size_t dist = edit_distance(got, cv);
    // "maximum" for "max", "iter" for "iterations": one word the prefix of the other.
    if (dist > limit && std::min(got.size(), cv.size()) >= 3 &&
        (got.substr(0, cv.size()) == cv || cv.substr(0, got.size()) == got)) {
      dist = limit;
    }
    if (dist < best_d) {
      best_d = dist;
      best = std::string(cv);
    }
  }
  return best.empty() ? "" : "did you mean " + quote_text(best) + "?";
}

std::string join_names(const std::vector<std::string>& items, std::size_t max_items) {
  std::string out;
  std::size_t n = 0;
  for (const auto& it : items) {
    if (n == max_items) {
      out += ", …";
      break;
    }
    if (n++ > 0) out += ", ";
    out += it;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Resolution.

Duration etcd_min_ttl(Duration election_timeout) {
  const std::int64_t et_ns = election_timeout.count();
  return std::chrono::seconds((3 * et_ns + 2'000'000'000 - 1) / 2'000'000'000);  // ceil(1.5 × et / 1 s)
}

namespace {

/// The descriptor of `l`'s service, or nullptr for a kind nobody registered
/// (validate_scenario lets such a Scenario through; run_scenario refuses it).
const ServiceDescriptor* registered(const LockSpec& l) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->kind() == l.service()) return d;
  }
  return nullptr;
}

}  // namespace

std::string jetcd_keepalive_setting_message(const std::string& field) {
  return "\"" + field +
         "\" does not apply to \"library\": \"jetcd\": jetcd schedules its own keepalives (a 500 ms tick, each "
         "lease a third of its TTL after the last answer)";
}

std::optional<std::pair<std::string, std::string>> library_problem(const Scenario& s, ClientLibrary lib) {
  const std::vector<ClientLibrary> all = client_libraries_of(s);
  if (std::find(all.begin(), all.end(), lib) != all.end()) return std::nullopt;
  const std::string service = quote_text(to_string(s.lock.service()));
  if (all.empty()) {
    std::string with;  // the services that have a choice, in registry order
    for (const ServiceDescriptor* d : service_registry()) {
      if (!d->client_libraries().empty()) with += (with.empty() ? "" : " or ") + quote_text(d->name());
    }
    return std::make_pair(
        "\"library\" chooses the client library of lock.service " + with + ", and lock.service is " + service,
        std::string("remove it"));
  }
  std::string words;
  for (ClientLibrary l : all) words += (words.empty() ? "" : " or ") + quote_text(word(l));
  const ClientLibrary def = default_library_of(s);
  return std::make_pair(quote_text(word(lib)) + " is not a client library of lock.service " + service + "; expected " +
                            words +
                            (def == all.front() ? std::string(" (the first is the default)")
                                                : " (the default here is " + quote_text(word(def)) + ")"),
                        "use " + quote_text(word(def)) + ", or leave \"library\" out");
}

Duration client_ttl(const LockSpec& l, const ClientSpec& c) {
  if (!c.ttl) return l.ttl;
  const ServiceDescriptor* d = registered(l);
  return d != nullptr ? d->granted_ttl(l, *c.ttl) : *c.ttl;
}

namespace {

void add_note(Scenario& s, std::string note) {
  if (std::find(s.notes.begin(), s.notes.end(), note) == s.notes.end()) s.notes.push_back(std::move(note));
}

}  // namespace

namespace {
/// Group names in node lists (partition groups and isolate, nemesis
/// targets) become their nodes, once each, as the loader expands a file's;
/// a nemesis without targets targets the clients. Names that are no group
/// with nodes stay for validate_scenario to judge.
void expand_node_lists(Scenario& s) {
  const NodeDirectory dir = directory(s);
  auto expand = [&dir](std::vector<std::string>& names) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& n : names) {
      const auto group = dir.is_node(n) ? std::nullopt : dir.group(n);
      if (group && !group->empty()) {
        for (const std::string& m : *group) {
          if (seen.insert(m).second) out.push_back(m);
        }
      } else if (seen.insert(n).second) {
        out.push_back(n);
      }
    }
    names = std::move(out);
  };
  for (FaultSpec& f : s.faults) {
    for (auto& g : f.groups) expand(g);
    expand(f.isolate);
  }
  if (s.nemesis) {
    for (auto& g : s.nemesis->groups) expand(g);
    if (!s.nemesis->groups.empty()) {
      // groups instead of targets
    } else if (s.nemesis->targets.empty()) {
      s.nemesis->targets = dir.clients();
    } else {
      expand(s.nemesis->targets);
    }
  }
}
}  // namespace

void resolve_defaults(Scenario& s) {
  LockSpec& l = s.lock;
  const ServiceDescriptor* d = registered(l);
  if (l.requested_ttl == Duration{0} && d != nullptr && !s.clients.empty()) {
    // lock.ttl left out: the first client's library's default, and each
    // client whose library asks another its own (ServiceDescriptor::default_ttl).
    if (const auto first = d->default_ttl(library_of(s, s.clients.front()))) {
      l.requested_ttl = *first;
      for (ClientSpec& c : s.clients) {
        const auto own = d->default_ttl(library_of(s, c));
        if (!c.ttl && own && *own != *first) c.ttl = *own;
      }
    }
  }
  l.ttl = l.requested_ttl;
  if (l.ttl == Duration{0}) return;  // no TTL yet: the clients are not loaded
  // The service may grant more than was asked (etcd's minimum lease TTL).
  if (const Duration granted = d != nullptr ? d->granted_ttl(l, l.ttl) : l.ttl; granted != l.ttl) {
    add_note(s, std::string("lock.ttl ") + (granted > l.ttl ? "raised" : "lowered") + " from " +
                    sim::format_duration(l.ttl) + " to " + sim::format_duration(granted) + ": " +
                    d->why_ttl_raised(granted));
    l.ttl = granted;
  }
  for (ClientSpec& c : s.clients) {
    const Duration ttl = client_ttl(l, c);
    if (c.renew_interval == kResolveRenewInterval) c.renew_interval = default_renew_interval(l, c);
    if (c.ttl && ttl != *c.ttl) {
      add_note(s, "clients[].ttl of " + c.name + (ttl > *c.ttl ? " raised" : " lowered") + " from " +
                      sim::format_duration(*c.ttl) + " to " + sim::format_duration(ttl) + ": " +
                      d->why_ttl_raised(ttl));
    }
  }
  expand_node_lists(s);
}

Duration default_renew_interval(const LockSpec& l, const ClientSpec& c) {
  return std::max(client_ttl(l, c) / 3, Duration{1});
}

std::optional<ScenarioProblem> self_renewing_client_problem(const ClientSpec& c, const std::string& path,
                                                            const std::string& service, const std::string& suggestion,
                                                            const std::string& why_renew) {
  if (c.program) {
    return problem(key(path, "program"),
                   "a program client cannot talk to the simulated " + service + " yet: the protocol has no " + service +
                       " requests (docs/PROTOCOL.md)",
                   suggestion);
  }
  if (!c.renew) {
    return problem(key(path, "renew"), "\"renew\": false does not apply to a " + service + " client: " + why_renew,
                   "remove it; to stop a holder, pause it (a \"pause\" fault)");
  }
  return std::nullopt;
}

void self_renewing_notes(const Scenario& s, const std::string& clock_why, const std::string& interval_why,
                         std::vector<std::string>& out) {
  for (const ClientSpec& c : s.clients) {
    if (c.program) continue;
    if (c.renew_clock != sim::ClockKind::kMonotonic) {
      out.push_back("clients[].renew_clock of " + c.name + " has no effect: " + clock_why);
    }
    if (c.renew_interval != default_renew_interval(s.lock, c)) {
      out.push_back("clients[].renew_interval of " + c.name + " has no effect: " + interval_why);
    }
  }
}

void resolve_scenario(Scenario& s) {
  resolve_defaults(s);
  for (std::string& n : scenario_notes(s)) add_note(s, std::move(n));
}

// ---------------------------------------------------------------------------
// Notes.

namespace {

/// Faults and clients that start after the end of the run never happen.
void note_after_the_end(const Scenario& s, std::vector<std::string>& out) {
  const std::string end = fmt_d(s.duration);
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const FaultSpec& f = s.faults[i];
    if (f.at < s.duration) continue;
    const std::string origin = f.origin.empty() ? "faults[" + std::to_string(i) + "]" : f.origin;
    out.push_back(origin + " at " + fmt_d(f.at) + " is not before the end of the run (duration " + end +
                  "): it never happens");
  }
  for (const ClientSpec& c : s.clients) {
    if (c.start < s.duration) continue;
    out.push_back("client " + c.name + " starts at " + fmt_d(c.start) + ", not before the end of the run (duration " +
                  end + "): it never runs");
  }
}

/// Client settings that cannot do what they seem to: one note per finding,
/// naming every client it applies to (`count` copies make one note).
void note_client_timing(const Scenario& s, std::vector<std::string>& out) {
  const ServiceDescriptor& d = service_descriptor(s.lock.service());
  const bool lock = d.takes_lock();
  std::vector<std::pair<std::string, std::vector<std::string>>> found;  // finding -> clients, first-seen order
  auto add = [&](const std::string& finding, const std::string& client) {
    auto it = std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == finding; });
    if (it == found.end()) it = found.insert(found.end(), {finding, {}});
    it->second.push_back(client);
  };
  for (const ClientSpec& c : s.clients) {
    const Duration ttl_d = client_ttl(s.lock, c);
    const std::string ttl = fmt_d(ttl_d);
    const auto own = d.own_renewal(s, c);  // the service's own pings or heartbeats
    if (lock && c.renew && !c.policy && !own && c.renew_interval >= ttl_d) {
      add("renew_interval " + fmt_d(c.renew_interval) + " is not shorter than the lease TTL " + ttl +
              ": the lease can expire before each renewal is sent",
          c.name);
    }
    if (lock && c.command_timeout >= ttl_d) {
      add("command_timeout " + fmt_d(c.command_timeout) + " is not shorter than the lease TTL " + ttl +
              ": a client can still be waiting for a reply after the lease it asked for has expired",
          c.name);
    }
    if (lock && c.check_lease_before_write && *c.check_lease_before_write >= ttl_d) {
      add("check_lease_before_write margin " + fmt_d(*c.check_lease_before_write) + " is not below the lease TTL " +
              ttl + ": the check fails before every write, so no write goes out",
          c.name);
    }
    const Duration every = own ? own->first : c.renew_interval;
    if (lock && c.lease_loss_after && c.renew && *c.lease_loss_after <= every) {
      add("lease_loss_after " + fmt_d(*c.lease_loss_after) + " is not longer than " +
              (own ? own->second : "renew_interval " + fmt_d(c.renew_interval)) +
              ": the client gives the lease up before its first renewal can succeed",
          c.name);
    }
    if (c.workload.work > s.settle) {
      add("workload.work " + fmt_d(c.workload.work) + " is longer than settle " + fmt_d(s.settle) +
              ": an iteration cannot finish within the settle time, so progress fails if it counts one (one that "
              "starts after the last fault ends)",
          c.name);
    }
  }
  for (const auto& [finding, clients] : found) {
    out.push_back((clients.size() == 1 ? "client " : "clients ") + join_names(clients) + ": " + finding);
  }
}

/// Each fault kind's notes (models/faults.hpp, FaultKindInfo::notes: a heal
/// that heals nothing), in table order.
void note_faults(const Scenario& s, std::vector<std::string>& out) {
  for (const FaultKindInfo& k : fault_kinds()) {
    if (k.notes) k.notes(s, out);
  }
}

/// A fenced resource rejects every write that carries no token.
void note_fencing(const Scenario& s, std::vector<std::string>& out) {
  if (s.resource.kind != ResourceKind::kFenced) return;
  const ServiceDescriptor& d = service_descriptor(s.lock.service());
  // The queue's receive counts fence its ledger per message (no one token sequence).
  if (!d.takes_lock() || (!d.hands_out_tokens(s) && !d.per_message())) {
    out.push_back("resource.kind is \"fenced\", but " + d.why_no_token(s) +
                  ": no write carries a token, and a fenced copy rejects every write without one");
    return;
  }
  std::vector<std::string> unfenced;
  for (const ClientSpec& c : s.clients) {
    if (!c.fencing) unfenced.push_back(c.name);
  }
  if (unfenced.empty()) return;
  out.push_back((unfenced.size() == 1 ? "client " : "clients ") + join_names(unfenced) +
                ": fencing is false, so the writes carry no token, and the fenced resource rejects every write "
                "without one");
}

void note_nemesis(const Scenario& s, std::vector<std::string>& out) {
  if (!s.nemesis) return;
  const NemesisSpec& n = *s.nemesis;
  // No fault starts later than duration - settle - max_duration, and the
  // first starts after one interval (models/nemesis.hpp).
  const Duration last = s.duration - s.settle - n.max_duration;
  if (n.interval_min > Duration::zero() && last < n.interval_min) {
    out.push_back("the nemesis draws no fault: none may start later than duration − settle − max_duration (" +
                  (last < Duration::zero() ? std::string("before the start") : fmt_d(last)) +
                  "), and the first would start after one interval (" + fmt_d(n.interval_min) + ")");
  }
  // The drawn kinds' own notes (FaultKindInfo::nemesis_notes), once each.
  for (const FaultKindInfo& k : fault_kinds()) {
    if (k.nemesis_notes && std::find(n.kinds.begin(), n.kinds.end(), k.kind) != n.kinds.end()) {
      k.nemesis_notes(s, out);
    }
  }
}

}  // namespace

std::vector<std::string> scenario_notes(const Scenario& s) {
  std::vector<std::string> out;
  note_after_the_end(s, out);
  service_descriptor(s.lock.service()).notes(s, out);
  note_client_timing(s, out);
  note_faults(s, out);
  note_fencing(s, out);
  note_nemesis(s, out);
  // One note per text (count copies of a client), in first-seen order.
  std::vector<std::string> unique;
  for (std::string& n : out) {
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(std::move(n));
  }
  return unique;
}

// ---------------------------------------------------------------------------
// Rules.

namespace {

bool listed(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
// Group and role names come from the lock services (models/lock_service.hpp).
bool is_group_name(const std::string& name) { return listed(all_group_names(), name); }
bool is_role_name(const std::string& name) { return role_owner(name) != nullptr; }

Problem scenario_name(const std::string& name) {
  constexpr std::size_t kMax = NameLimits::kScenario;
  bool good = !name.empty() && name.size() <= kMax;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) good = false;
  }
  if (good) return std::nullopt;
  std::string fixed;
  for (char c : name.substr(0, kMax)) {
    if (c >= 'A' && c <= 'Z')
      fixed += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
      fixed += c;
    else if (c == ' ' || c == '.')
      fixed += '-';
  }
  const bool too_long = name.size() > kMax;
  return problem("scenario",
                 "invalid scenario name " + quote_text(name) + ": " +
                     (too_long ? "too long (" + std::to_string(name.size()) + " characters); " : std::string()) +
                     "use 1 to " + std::to_string(kMax) +
                     " characters from a-z, 0-9, '_' and '-' (it names the report folder)",
                 // (A suggestion for a name that is only too long would look like the name itself.)
                 fixed.empty() || fixed == name || too_long ? "" : "did you mean " + quote_text(fixed) + "?");
}

std::string service_word(const Scenario& s) { return to_string(s.lock.service()); }

}  // namespace

std::optional<ScenarioProblem> validate_top(const Scenario& s) {
  FENCESIM_CHECK(scenario_name(s.name));
  if (s.version != 1) {
    return problem("version",
                   "unsupported format version " + std::to_string(s.version) + "; this fencesim reads version 1");
  }
  FENCESIM_CHECK(positive("duration", s.duration));
  FENCESIM_CHECK(non_negative("settle", s.settle));
  return std::nullopt;
}

std::optional<ScenarioProblem> validate_network(const Scenario& s) {
  FENCESIM_CHECK(non_negative("network.latency.min", s.network.latency_min));
  FENCESIM_CHECK(not_too_long("network.latency.max", s.network.latency_max));
  if (s.network.latency_max < s.network.latency_min) {
    return problem("network.latency.max",
                   "max (" + fmt_d(s.network.latency_max) + ") is below min (" + fmt_d(s.network.latency_min) + ")");
  }
  if (s.network.loss_ppb >= 1'000'000'000) {
    return problem("network.loss", "expected a number in [0, 1) (a probability), got " +
                                       std::to_string(s.network.loss_ppb) + " parts per billion");
  }
  return std::nullopt;
}

namespace {}  // namespace

std::optional<ScenarioProblem> validate_lock(const Scenario& s, const ScenarioSource& src) {
  // What every lock with a key has; the service's own rules are its
  // descriptor's (models/<service>/).
  const ServiceDescriptor& d = service_descriptor(s.lock.service());
  if (d.has_lock_key()) {
    // 0: left out for a service whose clients' libraries choose it (resolve_defaults).
    if (s.lock.requested_ttl != Duration{0} || !d.default_ttl(ClientLibrary::kGo)) {
      FENCESIM_CHECK(positive("lock.ttl", s.lock.requested_ttl));
    }
    if (s.lock.key.empty()) return problem("lock.key", "the lock key must not be empty");
    FENCESIM_CHECK(key_without_controls("lock.key", s.lock.key, "the lock key"));
  }
  return d.validate(s, src);
}

namespace {

/// The queue design's ledger and the register designs' resource do not mix.
Problem queue_resource(const Scenario& s) {
  const ResourceSpec& r = s.resource;
  const bool queue = service_descriptor(s.lock.service()).per_message();
  if (queue && r.kind == ResourceKind::kCas) {
    return problem("resource.kind",
                   "the queue design's resource is a ledger of effects: \"unfenced\", \"fenced\" or "
                   "\"idempotent\", not \"cas\"");
  }
  if (!queue && r.kind == ResourceKind::kIdempotent) {
    return problem("resource.kind", "\"idempotent\" is the queue design's ledger; it needs \"service\": \"queue\"");
  }
  if (r.idempotent && (!queue || r.kind != ResourceKind::kFenced)) {
    return problem("resource.idempotent",
                   queue ? "\"idempotent\": true applies only to \"kind\": \"fenced\" (a fenced ledger that also "
                           "applies each effect once); for the once-only ledger alone use \"kind\": \"idempotent\""
                         : "\"idempotent\" applies only to the queue design's fenced ledger (\"service\": \"queue\")");
  }
  if (queue && r.fence_reads) {
    return problem("resource.fence_reads", "the queue design's ledger has no reads to fence");
  }
  if (queue && r.replicas != 0) {
    return problem("resource.replicas", "the queue design's ledger has no replicas: must be 0 (or left out)");
  }
  if (queue && r.kind == ResourceKind::kProgram) {
    return problem("resource.kind",
                   "a resource program decides reads and writes of the register; the queue "
                   "design's ledger has its own rules: use lock.service \"redis\", \"etcd\", "
                   "\"table\" or \"none\"");
  }
  return std::nullopt;
}

/// `"kind": "program"` (docs/PROTOCOL.md "Resource programs").
Problem program_resource(const ResourceSpec& r) {
  if ((r.kind == ResourceKind::kProgram) != r.program.has_value()) {
    return problem(r.program ? "resource.program" : "resource.kind",
                   r.program ? "\"program\" belongs to a resource of kind \"program\""
                             : "a resource of kind \"program\" needs its \"program\"");
  }
  if (r.compare_versions && r.kind != ResourceKind::kProgram) {
    return problem("resource.compare_versions", "\"compare_versions\" belongs to a resource of kind \"program\"");
  }
  if (r.program && r.custom_check) {
    return problem("resource.kind", "a resource has one check: a program or a custom ResourceCheck, not both");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ScenarioProblem> validate_resource(const Scenario& s) {
  const ResourceSpec& r = s.resource;
  FENCESIM_CHECK(queue_resource(s));
  FENCESIM_CHECK(program_resource(r));
  const bool reads_fenceable = r.kind == ResourceKind::kFenced || r.kind == ResourceKind::kProgram;
  if ((r.kind != ResourceKind::kFenced && r.check != FenceCheck::kStrict) || (!reads_fenceable && r.fence_reads)) {
    const char* k = r.check != FenceCheck::kStrict ? "check" : "fence_reads";
    return problem(std::string("resource.") + k,
                   quote_text(k) + " applies only to a fenced resource (\"kind\": \"fenced\"), not to " +
                       quote_text(to_string(r.kind)));
  }
  if (r.custom_check) {
    if (service_descriptor(s.lock.service()).per_message()) {
      return problem("resource.custom_check",
                     "a custom ResourceCheck (\"" + r.custom_check->name() +
                         "\") decides reads and writes of the register; the queue design's ledger has its own "
                         "rules: use lock.service \"redis\" or \"etcd\" or \"none\"");
    }
    if (r.kind != ResourceKind::kFenced && r.kind != ResourceKind::kUnfenced) {
      return problem("resource.kind", "a custom ResourceCheck (\"" + r.custom_check->name() +
                                          "\") replaces the built-in check: leave kind \"unfenced\" or \"fenced\"");
    }
    if (r.check != FenceCheck::kStrict || r.fence_reads) {
      const char* k = r.check != FenceCheck::kStrict ? "check" : "fence_reads";
      return problem(std::string("resource.") + k, "a custom ResourceCheck (\"" + r.custom_check->name() +
                                                       "\") replaces the built-in check: leave " + quote_text(k) +
                                                       " out (fences_reads() says whether reads carry the token)");
    }
  }
  FENCESIM_CHECK(in_range("resource.initial", r.initial, Ranges::kInitial));
  FENCESIM_CHECK(in_range("resource.replicas", r.replicas, Ranges::kResourceReplicas));
  FENCESIM_CHECK(non_negative("resource.replication_delay", r.replication_delay));
  return std::nullopt;
}

namespace {

/// The file's name of client i: without the "-k" of a `count` expansion.
std::string base_name(const ClientSpec& c, const ScenarioSource::Client& from) {
  if (!from.expanded) return c.name;
  const auto dash = c.name.rfind('-');
  return dash == std::string::npos ? c.name : c.name.substr(0, dash);
}

Problem client_name(const std::string& name, const std::string& path) {
  constexpr std::size_t kMax = NameLimits::kClient;
  if (name.empty()) return problem(path, "a client name must not be empty");
  bool good = name.size() <= kMax;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
          c == '.')) {
      good = false;
    }
  }
  if (!good) {
    return problem(path, "invalid client name " + quote_text(name) + ": use 1 to " + std::to_string(kMax) +
                             " characters from A-Z, a-z, 0-9, '_', '-' and '.'");
  }
  if (is_group_name(name) || is_role_name(name)) {
    return problem(path, "the client name " + quote_text(name) + " is reserved: it is a " +
                             (is_group_name(name) ? "group name" : "role name") + " in node lists");
  }
  return std::nullopt;
}

Problem client_settings(const ClientSpec& c, const std::string& path) {
  FENCESIM_CHECK(non_negative(key(path, "start"), c.start));
  if (c.retry_strategy && c.library != ClientLibrary::kBsmRedislock) {
    return problem(key(path, "retry_strategy"),
                   "is bsm/redislock's Obtain retry strategy; this client's library has its own retries "
                   "(retry_interval)",
                   c.program ? "remove it: a client program retries as its own code does"
                             : "remove it, or set \"library\": \"bsm-redislock\"");
  }
  if (c.program && (c.library || !c.library_version.empty())) {
    const char* k = c.library ? "library" : "library_version";
    return problem(key(path, k),
                   "a client program is its own client library: \"" + std::string(k) +
                       "\" chooses the behaviour of a built-in client",
                   "remove it");
  }
  if (c.tries) {
    const std::string k = key(path, "tries");
    FENCESIM_CHECK(in_range(k, *c.tries, Ranges::kTries));
    if (c.library != ClientLibrary::kRedsync && c.library != ClientLibrary::kBsmRedislock) {
      return problem(k,
                     "is the most attempts one acquire of redsync (WithTries) or bsm/redislock (LimitRetry) makes; "
                     "no other client has such a limit",
                     c.program ? "remove it: a client program retries as its own code does"
                               : "remove it (a Redis client may set \"library\": \"redsync\" with lock.redlock, or "
                                 "\"bsm-redislock\" on one primary)");
    }
    if (c.library == ClientLibrary::kBsmRedislock && *c.tries > 1 &&
        c.retry_strategy.value_or(RetryStrategy::kNone) == RetryStrategy::kNone) {
      return problem(k, "bsm/redislock's default NoRetry makes one attempt: LimitRetry limits a retry strategy",
                     "add \"retry_strategy\": \"linear\" or \"exponential\", or remove \"tries\"");
    }
  }
  if (c.renew_interval == kResolveRenewInterval) {
    return problem(key(path, "renew_interval"), "not resolved: set it, or call resolve_scenario (a third of the TTL)");
  }
  FENCESIM_CHECK(positive(key(path, "renew_interval"), c.renew_interval));
  FENCESIM_CHECK(positive(key(path, "retry_interval"), c.retry_interval));
  FENCESIM_CHECK(positive(key(path, "command_timeout"), c.command_timeout));
  const std::string w = key(path, "workload");
  if (c.workload.kind == WorkloadKind::kSequenceAllocator) {
    FENCESIM_CHECK(in_range(key(w, "block"), c.workload.block, Ranges::kBlock));
  }
  FENCESIM_CHECK(non_negative(key(w, "work"), c.workload.work));
  FENCESIM_CHECK(in_range(key(w, "iterations"), c.workload.iterations, Ranges::kIterations));
  FENCESIM_CHECK(non_negative(key(w, "think"), c.workload.think));
  for (const auto& [name, lo, hi] : {std::tuple{"work", c.workload.work, c.workload.work_max},
                                     std::tuple{"think", c.workload.think, c.workload.think_max}}) {
    if (hi && *hi < lo) {
      return problem(key(key(w, name), "max"), "max (" + fmt_d(*hi) + ") is below min (" + fmt_d(lo) + ")");
    }
  }
  return std::nullopt;
}

/// clients[].ttl and clients[].library (docs/FORMAT.md "Clients", "etcd
/// client libraries").
Problem client_ttl_and_library(const Scenario& s, const ClientSpec& c, const std::string& path) {
  if (c.ttl) {
    const std::string k = key(path, "ttl");
    const ServiceDescriptor& d = service_descriptor(s.lock.service());
    if (!d.takes_lock()) {
      return problem(k, "\"ttl\" is the TTL of a client's lease, and lock.service is \"none\": remove it");
    }
    if (d.per_message()) {
      return problem(k,
                     "a queue worker has no lease TTL of its own: every received message stays invisible for the "
                     "queue's lock.visibility_timeout",
                     "remove clients[].ttl and set lock.visibility_timeout");
    }
    FENCESIM_CHECK(positive(k, *c.ttl));
    if (*c.ttl > Limits::kMaxDuration) return problem(k, "at most 24h, got " + fmt_d(*c.ttl));
    FENCESIM_CHECK(d.client_ttl_problem(k, *c.ttl));
  }
  if (c.library == ClientLibrary::kJetcd) {
    if (!c.renew) {
      return problem(key(path, "renew"),
                     "\"renew\": false does not apply to \"library\": \"jetcd\": jetcd keeps every lease it "
                     "grants alive with its own keepalive ticks",
                     "remove it, or use \"library\": \"go\"");
    }
    if (c.renew_clock != sim::ClockKind::kMonotonic || c.renew_interval != default_renew_interval(s.lock, c)) {
      const char* field = c.renew_clock != sim::ClockKind::kMonotonic ? "renew_clock" : "renew_interval";
      return problem(key(path, field), jetcd_keepalive_setting_message(field), "remove it, or use \"library\": \"go\"");
    }
  }
  if (c.library) {
    if (auto why = library_problem(s, *c.library)) return problem(key(path, "library"), why->first, why->second);
  }
  // A policy of the ZooKeeper client libraries' connection states.
  const ClientLibrary lib = library_of(s, c);
  if (!c.library_version.empty()) {
    const auto versions = service_descriptor(s.lock.service()).library_versions(lib);
    if (versions.empty()) {
      return problem(key(path, "library_version"),
                     "client library " + quote_text(word(lib)) + " has no versions to choose from in fencesim",
                     "remove it");
    }
    if (std::find(versions.begin(), versions.end(), c.library_version) == versions.end()) {
      std::string words;
      for (const std::string& v : versions) words += (words.empty() ? "" : ", ") + quote_text(v);
      return problem(
          key(path, "library_version"),
          "unknown " + std::string(word(lib)) + " version " + quote_text(c.library_version) + "; expected one of " +
              words + " (the last is the default)",
          lib == ClientLibrary::kClientGo ? "see docs/FORMAT.md \"Lock table\"" : "see docs/FORMAT.md \"Redisson\"");
    }
  }
  if (c.connection_policy && lib != ClientLibrary::kCurator && lib != ClientLibrary::kKazoo) {
    return problem(key(path, "connection_policy"),
                   "\"connection_policy\" says which ZooKeeper connection state ends a holder's belief, and "
                   "lock.service is " +
                       quote_text(to_string(s.lock.service())),
                   "remove it");
  }
  return std::nullopt;
}

/// workload.retries and the client policies (docs/FORMAT.md "Client policies").
Problem client_policies(const Scenario& s, const ClientSpec& c, const std::string& path) {
  const std::string w = key(path, "workload");
  FENCESIM_CHECK(in_range(key(w, "retries"), c.workload.retries, Ranges::kRetries));
  const bool versions = s.resource.custom_check ? s.resource.custom_check->compares_versions()
                                                : s.resource.kind == ResourceKind::kCas || s.resource.compare_versions;
  const auto needs_versions = [&](const char* k, const char* why) {
    return problem(key(w, k), std::string("\"") + k + "\" applies only to a resource that compares versions (" + why +
                                  "): a cas resource, or a program resource with \"compare_versions\": true; "
                                  "resource.kind is " +
                                  quote_text(to_string(s.resource.kind)));
  };
  if (c.workload.retries != WorkloadSpec{}.retries && !versions) {
    return needs_versions("retries", "a version conflict is what is retried");
  }
  if (c.workload.retry_backoff != WorkloadSpec{}.retry_backoff && !versions) {
    return needs_versions("retry_backoff", "it times the retry of a version conflict");
  }
  const bool lock = service_descriptor(s.lock.service()).takes_lock();
  const auto needs_lock = [&](const char* k) {
    return problem(key(path, k), std::string("\"") + k +
                                     "\" is a policy for the lease of a lock, and lock.service is \"none\": remove it");
  };
  if (c.policy) {
    if (!lock) return needs_lock("policy");
    const auto replaced = [&](const char* k) {
      return problem(key(path, k), "the custom ClientPolicy \"" + c.policy->name() + "\" replaces " + quote_text(k) +
                                       ": leave it out (the policy decides it)");
    };
    if (!c.renew) return replaced("renew");
    if (c.renew_clock != sim::ClockKind::kMonotonic) return replaced("renew_clock");
    if (c.check_lease_before_write) return replaced("check_lease_before_write");
    if (c.on_lease_loss != LeaseLossPolicy::kContinue) return replaced("on_lease_loss");
    if (c.lease_loss_after) return replaced("lease_loss_after");
  }
  if (c.check_lease_before_write) {
    if (!lock) return needs_lock("check_lease_before_write");
    FENCESIM_CHECK(non_negative(key(path, "check_lease_before_write"), *c.check_lease_before_write));
  }
  if (c.on_lease_loss != LeaseLossPolicy::kContinue && !lock) return needs_lock("on_lease_loss");
  if (c.lease_loss_after) {
    if (!lock) return needs_lock("lease_loss_after");
    FENCESIM_CHECK(positive(key(path, "lease_loss_after"), *c.lease_loss_after));
  }
  FENCESIM_CHECK(client_ttl_and_library(s, c, path));
  FENCESIM_CHECK(service_descriptor(s.lock.service()).validate_client(s, c, path));
  return std::nullopt;
}

/// Names unique and distinct from the service's nodes; resource copies exist.
Problem client_names_and_resources(const Scenario& s, const ScenarioSource& src) {
  const NodeDirectory dir = directory(s);
  std::set<std::string> service_nodes;
  for (const auto& n : dir.service_nodes()) service_nodes.insert(n);
  for (const auto& n : dir.resources()) service_nodes.insert(n);
  const std::vector<std::string> service_list(service_nodes.begin(), service_nodes.end());
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const std::string& n = s.clients[i].name;
    const ScenarioSource::Client from = src.client(i);
    const std::string path = src.client_path(i) + ".name";
    const std::string what =
        from.expanded ? "the expanded client name " + quote_text(n) : "the client name " + quote_text(n);
    if (service_nodes.count(n) != 0) {
      return problem(
          path, what + " is already the name of a service node (" + join_names(service_list) + "); choose another");
    }
    for (const NodeGroup& g : dir.groups) {
      // A group that only this scenario has (Redis Cluster's "redis-s0" …).
      if (g.alias && g.name == n) {
        return problem(path, what + " is reserved: it is a group name in node lists (a Redis Cluster shard)");
      }
    }
    auto [it, fresh] = seen.emplace(n, from.index);
    if (!fresh) {
      return problem(path, "duplicate client name: " + what + " is also used by clients[" + std::to_string(it->second) +
                               "]" +
                               (it->second == from.index ? "" : "; client names must be unique after count expansion"));
    }
  }
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const std::string& r = s.clients[i].resource;
    if (!listed(dir.resources(), r)) {
      return problem(src.client_path(i) + ".resource",
                     "no resource copy named " + quote_text(r) + "; copies are " + join_names(dir.resources()),
                     suggest_nearest(r, dir.resources()));
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {
Problem validate_locks(const Scenario& s, const ScenarioSource& src);

/// clients[].program (docs/FORMAT.md "Program clients"): what the loader
/// checks of a file, for a hand-built Scenario too.
Problem client_program(const ClientSpec& c, const std::string& path) {
  if (!c.program) return std::nullopt;
  const ProgramSpec& p = *c.program;
  if (p.command.empty() || p.command.front().empty()) {
    return problem(path + ".program.command", "the program's command must have at least one non-empty word",
                   "e.g. [\"python3\", \"-m\", \"fencesim\", \"client.py\"]");
  }
  if (p.yield_timeout <= Duration{0}) {
    return problem(path + ".program.yield_timeout", "must be positive, got " + fmt_d(p.yield_timeout));
  }
  if (c.policy != nullptr) {
    return problem(path + ".program", "a program client has no built-in lock client for a ClientPolicy to drive",
                   "drop the policy: the program's own code decides when it renews");
  }
  return std::nullopt;
}
}  // namespace

std::optional<ScenarioProblem> validate_clients(const Scenario& s, const ScenarioSource& src) {
  if (s.clients.empty()) return problem("clients", "at least one client is required");
  if (s.clients.size() > static_cast<std::size_t>(Limits::kMaxClients)) {
    return problem("clients",
                   "too many clients: at most " + std::to_string(Limits::kMaxClients) + " after count expansion");
  }
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const ScenarioSource::Client from = src.client(i);
    const std::string path = src.client_path(i);
    FENCESIM_CHECK(client_name(base_name(s.clients[i], from), path + ".name"));
    FENCESIM_CHECK(client_settings(s.clients[i], path));
    const bool worker = s.clients[i].workload.kind == WorkloadKind::kQueueWorker;
    // A program client has no workload: what it does is the program's.
    if (!s.clients[i].program && worker != service_descriptor(s.lock.service()).per_message()) {
      return problem(path + ".workload.kind",
                     worker ? "the queue_worker workload needs \"service\": \"queue\" (it receives messages)"
                            : "the queue design runs only the queue_worker workload, got " +
                                  quote_text(to_string(s.clients[i].workload.kind)),
                     worker ? "" : "did you mean \"queue_worker\"?");
    }
    FENCESIM_CHECK(client_policies(s, s.clients[i], path));
    FENCESIM_CHECK(client_program(s.clients[i], path));
  }
  FENCESIM_CHECK(client_names_and_resources(s, src));
  return validate_locks(s, src);
}

// -- faults -------------------------------------------------------------------

namespace {

struct Nodes final : FaultContext {
  explicit Nodes(const Scenario& sc) : s(sc), dir(directory(sc)) {
    for (const auto& n : dir.all()) names.insert(n);
  }
  const Scenario& scenario() const override { return s; }
  const Scenario& s;
  NodeDirectory dir;
  std::set<std::string> names;

  /// Why a role alias is not valid here, or "" if it is.
  std::string role_problem(const std::string& name) const {
    if (listed(dir.roles(), name)) return "";
    const ServiceDescriptor* owner = role_owner(name);
    return "the role " + quote_text(name) + " needs the " + (owner ? owner->display_name() : std::string("?")) +
           " service; this scenario's lock service is " + service_word(s);
  }
  ScenarioProblem unknown(const std::string& name, const std::string& path, bool groups_ok) const {
    std::vector<std::string> cands = dir.all();
    for (const auto& r : dir.roles()) cands.push_back(r);
    // Only the groups with nodes here (a registered service's groups are
    // empty unless it is this scenario's): a suggestion never names an
    // empty group.
    std::vector<std::string> groups;
    for (const NodeGroup& g : dir.groups) {
      if (!g.nodes.empty()) groups.push_back(g.name);
    }
    if (groups_ok) cands.insert(cands.end(), groups.begin(), groups.end());
    return problem(path,
                   "unknown node " + quote_text(name) + "; nodes in this scenario are " + join_names(dir.all(), 16) +
                       (dir.roles().empty() ? "" : ", roles " + join_names(dir.roles())) +
                       (groups_ok ? ", groups " + join_names(groups) : ""),
                   suggest_nearest(name, cands));
  }
  /// A single node or a role alias.
  Problem target(const std::string& name, const std::string& path) const override {
    if (names.count(name) != 0) return std::nullopt;
    if (is_role_name(name)) {
      if (auto why = role_problem(name); !why.empty()) return problem(path, why);
      return std::nullopt;
    }
    if (is_group_name(name)) {
      return problem(path,
                     quote_text(name) + " is a group; a target is a single node or a role (" +
                         join_names(all_role_names(), 100) + ")",
                     "write one fault per node, or use the node list of a partition");
    }
    return unknown(name, path, false);
  }
  /// An expanded node list: nodes and role aliases.
  Problem nodes(const std::vector<std::string>& v, const std::string& path) const override {
    if (v.empty()) return problem(path, "the node list is empty; name at least one node or group");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (names.count(v[i]) != 0) continue;
      if (is_role_name(v[i])) {
        if (auto why = role_problem(v[i]); !why.empty()) return problem(p, why);
        continue;
      }
      if (is_group_name(v[i])) {
        return problem(p, "the group " + quote_text(v[i]) + " has no nodes in this scenario (lock service " +
                              service_word(s) + ")");
      }
      return unknown(v[i], p, true);
    }
    return std::nullopt;
  }
  /// A fault of a service's own (its target names the service): refused when
  /// the scenario runs another service, or when that service says why not.
  Problem service_fault(const FaultSpec& f, const std::string& path) const override {
    const ServiceDescriptor* owner = find_service(f.target);
    if (owner == nullptr) return problem(path, "no lock service is named " + quote_text(f.target));
    if (owner->kind() != s.lock.service()) {
      return problem(path, owner->fault_needs(f) + "; this scenario's lock service is " + service_word(s));
    }
    if (auto why = owner->fault_problem(s, f); !why.empty()) return problem(path, why);
    return std::nullopt;
  }
};

/// `at` here; the rest is the kind's own (FaultKindInfo::validate).
Problem fault(const FaultSpec& f, const std::string& path, const Nodes& nodes) {
  FENCESIM_CHECK(non_negative(path + ".at", f.at));
  if (f.at_max && *f.at_max < f.at) {
    return problem(path + ".at.max", "max (" + fmt_d(*f.at_max) + ") is below min (" + fmt_d(f.at) + ")");
  }
  return fault_info(f.kind).validate(f, path, nodes);
}

}  // namespace

std::optional<ScenarioProblem> validate_faults(const Scenario& s) {
  if (s.faults.size() > static_cast<std::size_t>(Limits::kMaxFaults)) {
    return problem("faults", "too many faults: at most " + std::to_string(Limits::kMaxFaults));
  }
  const Nodes nodes(s);
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    FENCESIM_CHECK(fault(s.faults[i], "faults[" + std::to_string(i) + "]", nodes));
  }
  return std::nullopt;
}

std::optional<ScenarioProblem> validate_nemesis(const Scenario& s, const ScenarioSource& src) {
  if (!s.nemesis) return std::nullopt;
  const NemesisSpec& n = *s.nemesis;
  // The kinds the nemesis draws: the fault table's (FaultKindInfo::nemesis).
  const std::vector<FaultKind>& drawable = nemesis_fault_kinds();
  std::vector<std::string> names;
  for (FaultKind k : drawable) names.emplace_back(to_string(k));
  if (n.kinds.empty()) return problem("nemesis.kinds", "name at least one fault kind: one of " + join_names(names));
  for (std::size_t i = 0; i < n.kinds.size(); ++i) {
    if (std::find(drawable.begin(), drawable.end(), n.kinds[i]) == drawable.end()) {
      return problem("nemesis.kinds[" + std::to_string(i) + "]",
                     quote_text(to_string(n.kinds[i])) + " cannot be drawn by the nemesis; nemesis kinds are " +
                         join_names(names));
    }
  }
  const Nodes nodes(s);
  if (n.groups.empty()) FENCESIM_CHECK(nodes.nodes(n.targets, "nemesis.targets"));
  std::size_t widest = 1;
  for (std::size_t i = 0; i < n.groups.size(); ++i) {
    const std::string p = "nemesis.groups[" + std::to_string(i) + "]";
    if (n.groups[i].empty()) return problem(p, "a group needs at least one node");
    FENCESIM_CHECK(nodes.nodes(n.groups[i], p));
    widest = std::max(widest, n.groups[i].size());
  }
  const bool range = n.interval_min != n.interval_max;
  FENCESIM_CHECK(positive(range ? "nemesis.interval.min" : "nemesis.interval", n.interval_min));
  if (range) FENCESIM_CHECK(positive("nemesis.interval.max", n.interval_max));
  if (n.interval_max < n.interval_min) {
    return problem("nemesis.interval.max",
                   "max (" + fmt_d(n.interval_max) + ") is below min (" + fmt_d(n.interval_min) + ")");
  }
  FENCESIM_CHECK(positive("nemesis.max_duration", n.max_duration, std::chrono::milliseconds(1)));
  // Bound the number of draws before anything is drawn.
  const Duration last = s.duration - s.settle - n.max_duration;
  std::int64_t most = 0;
  if (last >= n.interval_min) most = last / n.interval_min * static_cast<std::int64_t>(widest);
  if (most + static_cast<std::int64_t>(s.faults.size()) > Limits::kMaxFaults) {
    return problem(src.nemesis_interval_given ? "nemesis.interval" : "nemesis",
                   "the nemesis could draw up to " + std::to_string(most) +
                       " faults, and a scenario may have at most " + std::to_string(Limits::kMaxFaults) +
                       " in all; use a longer interval");
  }
  return std::nullopt;
}

namespace {

std::string why_not_text(const Scenario& s, Property p) {
  switch (p) {
    case Property::kMutualExclusion:
    case Property::kNoStaleWrite: return "the design takes no lock (\"service\": \"none\")";
    case Property::kTokenMonotonic:
      // The queue's receive counts are per message: why_not_applicable says so.
      if (service_descriptor(s.lock.service()).per_message()) return fencesim::why_not_applicable(s, p);
      return service_descriptor(s.lock.service()).why_no_token(s);
    case Property::kRaftSafety:
    case Property::kNoLostUpdate:
    case Property::kNoDuplicateEffect: return fencesim::why_not_applicable(s, p);
    default: return "it does not apply to this design";
  }
}

}  // namespace

std::optional<ScenarioProblem> validate_expect(const Scenario& s) {
  for (const auto& [name, b] : s.expect_metrics) {
    const std::string path = "expect.metrics." + name;
    const MetricInfo* info = find_metric(name);
    if (info == nullptr) {
      std::vector<std::string> names;
      for (const MetricInfo& i : metric_infos()) names.emplace_back(i.name);
      return problem(path, "unknown metric " + quote_text(name) + "; metrics are " + join_names(names, 20),
                     suggest_nearest(name, names));
    }
    if (!b.min && !b.max) return problem(path, "a metric bound needs \"min\", \"max\" or both, e.g. {\"min\": 1}");
    const auto text = [&](std::int64_t x) { return info->duration ? fmt_d(Duration{x}) : std::to_string(x); };
    for (const auto& side : {b.min, b.max}) {
      if (side && *side < 0) return problem(path, "a bound on " + name + " cannot be negative, got " + text(*side));
    }
    if (b.min && b.max && *b.min > *b.max) {
      return problem(path + ".max",
                     "max " + text(*b.max) + " is below min " + text(*b.min) + ": no value can meet both");
    }
  }
  for (const auto& [p, e] : s.expect) {
    if (property_applies(s, p)) continue;
    const std::string name = to_string(p);
    return problem("expect." + name, "cannot expect " + name + ": it does not apply to this design, because " +
                                         why_not_text(s, p) + " (it would be reported not_applicable)");
  }
  return std::nullopt;
}

namespace {

/// More than one lock (lock.keys) and each client's lock (clients[].lock).
Problem validate_locks(const Scenario& s, const ScenarioSource& src) {
  const LockSpec& l = s.lock;
  const ServiceDescriptor& d = service_descriptor(l.service());
  std::vector<std::string> all{l.key};
  all.insert(all.end(), l.keys.begin(), l.keys.end());
  const bool keyed = d.has_lock_key();
  if (!l.keys.empty()) {
    std::string why;
    std::string fix = "remove lock.keys (and clients[].lock), or use lock.service \"redis\" or \"etcd\"";
    if (!d.takes_more_locks(l, why, fix)) {
      return problem("lock.keys",
                     std::string("more than one lock is not supported for lock.service ") +
                         quote_text(to_string(l.service())) + ": " + why,
                     fix);
    }
    std::set<std::string> seen{l.key};
    for (std::size_t i = 0; i < l.keys.size(); ++i) {
      const std::string path = "lock.keys[" + std::to_string(i) + "]";
      if (l.keys[i].empty()) return problem(path, "a lock key must not be empty");
      FENCESIM_CHECK(key_without_controls(path, l.keys[i], "the lock key"));
      if (l.keys[i] == l.key) {
        return problem(path,
                       "lock.keys lists the further locks: " + quote_text(l.key) +
                           " is lock.key already (every client takes it unless clients[].lock names another)",
                       "remove it from lock.keys");
      }
      if (!seen.insert(l.keys[i]).second) return problem(path, "duplicate lock key " + quote_text(l.keys[i]));
    }
    // The service's own rules on its locks (etcd: no mutex prefix nests
    // another; Redis: a counter of its own each).
    FENCESIM_CHECK(d.validate_locks(s, all));
  }
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const std::string& lk = s.clients[i].lock;
    if (lk.empty()) continue;
    const std::string path = src.client_path(i) + ".lock";
    FENCESIM_CHECK(key_without_controls(path, lk, "the lock name"));
    if (!keyed) {
      return problem(path, "lock.service " + quote_text(to_string(l.service())) + " has no lock key to choose",
                     "remove clients[].lock");
    }
    if (std::find(all.begin(), all.end(), lk) == all.end()) {
      return problem(
          path,
          "unknown lock " + quote_text(lk) +
              (l.keys.empty() ? ": the scenario has one lock, " + quote_text(l.key) + " (lock.key)"
                              : ": the scenario's locks are " + join_names(all) + " (lock.key and lock.keys)"),
          l.keys.empty() ? "declare a further lock in lock.keys, e.g. \"keys\": [" + quote_text(lk) + "]"
                         : suggest_nearest(lk, all));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ScenarioProblem> validate_scenario(const Scenario& s, const ScenarioSource& src) {
  // A lock service nobody registered has no rules to check: run_scenario
  // refuses it (UnsupportedScenario); a file cannot name one.
  const auto& all = service_registry();
  if (std::none_of(all.begin(), all.end(), [&](const ServiceDescriptor* d) { return d->kind() == s.lock.service(); })) {
    return std::nullopt;
  }
  FENCESIM_CHECK(validate_top(s));
  FENCESIM_CHECK(validate_network(s));
  FENCESIM_CHECK(validate_lock(s, src));
  FENCESIM_CHECK(validate_resource(s));
  FENCESIM_CHECK(validate_clients(s, src));  // and the locks (validate_locks)
  FENCESIM_CHECK(validate_faults(s));
  FENCESIM_CHECK(validate_nemesis(s, src));
  FENCESIM_CHECK(validate_expect(s));
  return std::nullopt;
}

}  // namespace fencesim
