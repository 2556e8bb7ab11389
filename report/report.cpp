// Report renderers: report.json, report.md, trace.jsonl and the terminal
// summary. They read only the scenario and the RunResult (History, verdicts,
// metrics); nothing here changes the world.
//
// Stability rules: integers only (no floating point), keys in a fixed order
// (nlohmann::ordered_json), no absolute paths, no timestamps, no host names.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fencesim/run.hpp"
#include "loader/writer.hpp"
#include "models/etcd/versions.hpp"
#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/policy.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/text.hpp"

namespace fencesim {

using ojson = nlohmann::ordered_json;

namespace {

/// updates_lost as a percentage of writes_accepted, one decimal ("12.5 %").
std::string updates_lost_percent(const Metrics& m) { return fmt::format("{:.1f} %", 100 * updates_lost_fraction(m)); }
/// "1 (25.0 %)", or "n/a (a ledger of effects)" for the work queue.
std::string updates_lost_text(const Metrics& m) {
  if (!m.updates_lost_applies) return "n/a (the queue's ledger has no read-modify-write)";
  return fmt::format("{} ({})", m.updates_lost, updates_lost_percent(m));
}

/// Inline text made inert for Markdown: a `<` or `&` that could open an HTML
/// tag, comment or entity gets a backslash (CommonMark escapes), so a
/// renderer shows it rather than runs it; a control character (other than
/// a tab or newline) is written as \u00XX, never raw.
std::string inert(const std::string& text) {
  const auto letter = [](unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (sim::is_control(c) && c != '\t' && c != '\n') {
      sim::append_escaped_control(out, c);
    } else if (c == '<' && (letter(next) || next == '/' || next == '!' || next == '?')) {
      out += "\\<";
    } else if (c == '&' && (letter(next) || next == '#')) {
      out += "\\&";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Free text (a scenario's description) as a Markdown paragraph: a line that
/// would start a heading, quote, list, table or code fence gets a backslash,
/// so the text reads as written instead of restructuring the report; HTML
/// and control characters are made inert (see `inert`).
std::string markdown_text(const std::string& raw) {
  const std::string text = inert(raw);
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const std::size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) {
      const char c = line[first];
      const bool block = c == '#' || c == '>' || c == '-' || c == '*' || c == '+' || c == '|' || c == '`' || c == '=';
      const std::size_t after = line.find_first_not_of("0123456789", first);
      const bool numbered =
          c >= '0' && c <= '9' && after != std::string::npos && (line[after] == '.' || line[after] == ')');
      if (block) {
        out += line.substr(0, first) + "\\" + line.substr(first);
      } else if (numbered) {
        out += line.substr(0, after) + "\\" + line.substr(after);  // "1\." is not a list item
      } else {
        out += line;
      }
    }
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string dur(sim::Duration d) { return sim::format_duration(d); }

ojson duration_json(sim::Duration d) { return ojson{{"ns", d.count()}, {"text", dur(d)}}; }

const char* clock_text(sim::ClockKind k) { return word(k); }

/// The resource's kind as reports name it: a custom check's name(), else the built-in kind.
std::string resource_kind_name(const ResourceSpec& r) {
  return r.custom_check ? r.custom_check->name() : std::string(to_string(r.kind));
}
std::string client_policy_name(const ClientSpec& c) { return c.policy ? c.policy->name() : std::string("built-in"); }

/// A lock service's report settings (ServiceDescriptor::report_settings)
/// as report.json has them: durations as {ns, text}.
class ReportKeyWriter final : public KeyWriter {
 public:
  explicit ReportKeyWriter(ojson& j) : j_(j) {}
  void text(std::string_view key, const std::string& value) override { j_[std::string(key)] = value; }
  void integer(std::string_view key, std::int64_t value) override { j_[std::string(key)] = value; }
  void boolean(std::string_view key, bool value) override { j_[std::string(key)] = value; }
  void duration(std::string_view key, Duration value) override { j_[std::string(key)] = duration_json(value); }
  void nodes(std::string_view key, const std::vector<std::string>& value) override {
    ojson list = ojson::array();
    for (const std::string& v : value) list.push_back(v);
    j_[std::string(key)] = std::move(list);
  }
  void node_groups(std::string_view key, const std::vector<std::vector<std::string>>& value) override {
    j_[std::string(key)] = value;
  }
  void null_value(std::string_view key) override { j_[std::string(key)] = ojson(); }
  void object(std::string_view key, const std::function<void(KeyWriter&)>& fill) override {
    ojson inner = ojson::object();
    ReportKeyWriter w(inner);
    fill(w);
    j_[std::string(key)] = std::move(inner);
  }

 private:
  ojson& j_;
};

/// report.json's metric_expectations: each bound of expect.metrics, its value and whether it was met.
ojson metric_expectations_json(const RunResult& r) {
  ojson mv = ojson::array();
  for (const MetricVerdict& v : r.metric_verdicts) {
    ojson b = ojson::object();
    const auto number = [&](std::int64_t x) { return v.duration ? duration_json(sim::Duration{x}) : ojson(x); };
    if (v.bound.min) b["min"] = number(*v.bound.min);
    if (v.bound.max) b["max"] = number(*v.bound.max);
    mv.push_back(ojson{{"metric", v.metric}, {"bound", b}, {"value", number(v.value)}, {"met", v.met}});
  }
  return mv;
}

/// report.json's programs: each program client's stderr (its last 16 KiB,
/// docs/PROTOCOL.md "Transport").
ojson programs_json(const RunResult& r) {
  ojson programs = ojson::array();
  for (const auto& [client, text] : r.program_output) programs.push_back(ojson{{"client", client}, {"stderr", text}});
  return programs;
}

/// report.json's settings.clients[i].
ojson client_settings_json(const Scenario& s, const ClientSpec& c) {
  ojson w{{"kind", to_string(c.workload.kind)},
          {"work", duration_json(c.workload.work)},
          {"iterations", c.workload.iterations},
          {"think", duration_json(c.workload.think)}};
  if (c.workload.kind == WorkloadKind::kSequenceAllocator) w["block"] = c.workload.block;
  if (s.resource.kind == ResourceKind::kCas || s.resource.compare_versions) {
    w["retries"] = c.workload.retries;
    w["retry_backoff"] = to_string(c.workload.retry_backoff);
  }
  ojson cj{{"name", c.name},
           {"start", duration_json(c.start)},
           {"fencing", c.fencing},
           {"renew", c.renew},
           {"renew_interval", duration_json(c.renew_interval)},
           {"renew_clock", clock_text(c.renew_clock)},
           {"retry_interval", duration_json(c.retry_interval)},
           {"command_timeout", duration_json(c.command_timeout)},
           {"resource", c.resource},
           {"workload", w}};
  // A custom ClientPolicy replaces renew_interval and renew_clock (and the
  // policies below, which it requires unset): its name instead.
  if (c.policy) {
    cj.erase("renew_interval");
    cj.erase("renew_clock");
    cj["policy"] = client_policy_name(c);
  }
  // The client policies, only when one is set (docs/REPORTS.md).
  if (c.check_lease_before_write) cj["check_lease_before_write"] = duration_json(*c.check_lease_before_write);
  if (c.on_lease_loss != LeaseLossPolicy::kContinue) cj["on_lease_loss"] = word(c.on_lease_loss);
  if (c.lease_loss_after) cj["lease_loss_after"] = duration_json(*c.lease_loss_after);
  // A client's own TTL (the one in effect) and a library other than the
  // service's default, only when set, so reports of files without them
  // are unchanged.
  if (c.ttl) cj["ttl"] = duration_json(client_ttl(s.lock, c));
  if (const ClientLibrary lib = library_of(s, c); !client_libraries_of(s).empty() && lib != default_library_of(s)) {
    cj["library"] = word(lib);
  }
  if (!c.library_version.empty()) cj["library_version"] = c.library_version;
  if (c.retry_strategy) cj["retry_strategy"] = word(*c.retry_strategy);
  if (c.tries) cj["tries"] = *c.tries;
  if (c.program) {
    // The program is the client: no workload of ours.
    cj.erase("workload");
    cj["program"] = ojson{{"command", c.program->command}, {"cwd", c.program->cwd}};
  }
  if (multiple_locks(s.lock)) {
    cj["lock"] = lock_of(s.lock, c);
    ReportKeyWriter w(cj);
    service_descriptor(s.lock.service()).report_client_settings(s, c, w);
  }
  return cj;
}

ojson settings_json(const Scenario& s) {
  const ServiceDescriptor& d = service_descriptor(s.lock.service());
  ojson lock{{"service", d.name()}};
  if (d.takes_lock()) {
    lock["ttl"] = duration_json(s.lock.ttl);
    if (d.has_lock_key()) lock["key"] = s.lock.key;
    // More than one lock, only when set (reports of one-lock files are unchanged).
    if (multiple_locks(s.lock)) {
      ojson keys = ojson::array();
      for (const std::string& k : s.lock.keys) keys.push_back(k);
      lock["keys"] = std::move(keys);
    }
  }
  ReportKeyWriter w(lock);
  d.report_settings(s, w);
  // A custom ResourceCheck is named where the built-in kind would be.
  ojson resource{{"kind", resource_kind_name(s.resource)}};
  if (s.resource.kind == ResourceKind::kFenced && !s.resource.custom_check) {
    resource["check"] = word(s.resource.check);
    resource["fence_reads"] = s.resource.fence_reads;
    if (d.per_message()) resource["idempotent"] = s.resource.idempotent;
  }
  if (s.resource.program) {
    // The command, not its folder: a report does not depend on where the checkout is.
    resource["program"] = ojson{{"command", s.resource.program->command}};
    resource["fence_reads"] = s.resource.fence_reads;
    resource["compare_versions"] = s.resource.compare_versions;
  }
  resource["initial"] = s.resource.initial;
  resource["replicas"] = s.resource.replicas;
  resource["replication_delay"] = duration_json(s.resource.replication_delay);
  ojson clients = ojson::array();
  for (const ClientSpec& c : s.clients) clients.push_back(client_settings_json(s, c));
  return ojson{{"duration", duration_json(s.duration)},
               {"settle", duration_json(s.settle)},
               {"network", ojson{{"latency_min", duration_json(s.network.latency_min)},
                                 {"latency_max", duration_json(s.network.latency_max)},
                                 {"loss_ppb", s.network.loss_ppb}}},
               {"lock", lock},
               {"resource", resource},
               {"clients", clients}};
}

std::string hex64(std::uint64_t v) { return fmt::format("{:016x}", v); }

std::string expected_text(const Verdict& v) { return v.expected ? to_string(*v.expected) : "-"; }

/// The swarm subset: {"kinds": [...], "targets": [...]}, kinds as listed (a
/// kind listed twice appears twice).
ojson swarm_json(const SwarmSubset& w) {
  ojson kinds = ojson::array();
  for (FaultKind k : w.kinds) kinds.push_back(to_string(k));
  return ojson{{"kinds", kinds}, {"targets", w.targets}};
}

/// "kinds pause, crash; targets A, B" (each kind once).
std::string swarm_text(const SwarmSubset& w) {
  std::vector<std::string> kinds;
  for (FaultKind k : w.kinds) {
    if (std::find(kinds.begin(), kinds.end(), to_string(k)) == kinds.end()) kinds.push_back(to_string(k));
  }
  return fmt::format("kinds {}; targets {}", fmt::join(kinds, ", "), fmt::join(w.targets, ", "));
}

}  // namespace

const char* version() { return FENCESIM_VERSION; }

const Verdict& verdict(const RunResult& r, Property p) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == p) return v;
  }
  throw std::out_of_range("no verdict for that property");
}

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./+,:@%=").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string reproduce_command(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  const std::string file = m.source.empty() ? s.name + ".json" : m.source;
  return fmt::format("fencesim run {} --seed {}", shell_word(file), r.seed);
}

std::string render_report_json(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  ojson j;
  j["report_version"] = 1;
  j["fencesim_version"] = version();
  j["scenario"] = ojson{{"name", s.name}, {"description", s.description}, {"source", m.source}};
  j["seed"] = r.seed;
  j["seed_overridden"] = m.seed_overridden;
  j["settings"] = settings_json(s);
  j["notes"] = s.notes;
  ojson faults = ojson::array();
  for (const FaultRecord& f : r.history.faults) {
    ojson fj{{"start", duration_json(f.start)},
             {"end", f.end ? duration_json(*f.end) : ojson(nullptr)},
             {"kind", to_string(f.kind)},
             {"target", f.target},
             {"detail", f.detail},
             {"origin", f.origin},
             {"skipped", f.skipped}};
    if (f.skipped) fj["skip_reason"] = f.skip_reason;
    faults.push_back(fj);
  }
  j["faults"] = faults;
  ojson drawn = ojson::array();
  for (const FaultSpec& f : r.drawn) drawn.push_back(fault_entry_json(f));
  j["nemesis_draws"] = drawn;
  if (r.swarm) j["nemesis_swarm"] = swarm_json(*r.swarm);
  ojson verdicts = ojson::array();
  for (const Verdict& v : r.verdicts) {
    verdicts.push_back(ojson{{"property", to_string(v.property)},
                             {"status", to_string(v.status)},
                             {"expected", v.expected ? ojson(to_string(*v.expected)) : ojson(nullptr)},
                             {"met", v.met},
                             {"summary", v.summary},
                             {"first_violation", v.at ? duration_json(*v.at) : ojson(nullptr)},
                             {"checked", v.checked},
                             {"counterexample", v.story}});
  }
  j["verdicts"] = verdicts;
  const Metrics& mt = r.metrics;
  ojson metrics{
      {"writes_accepted", mt.writes_accepted},
      {"writes_rejected", mt.writes_rejected},
      {"updates_lost", mt.updates_lost_applies ? ojson(mt.updates_lost) : ojson(nullptr)},
      {"updates_lost_fraction",
       mt.updates_lost_applies ? ojson(std::round(updates_lost_fraction(mt) * 1e6) / 1e6) : ojson(nullptr)},
      {"reads_accepted", mt.reads_accepted},
      {"reads_rejected", mt.reads_rejected},
      {"grants", mt.grants},
      {"acquisitions", mt.acquisitions},
      {"lease_losses", mt.lease_losses},
      {"renewal_latency",
       ojson{{"count", mt.renewal_latency.count},
             {"p50", duration_json(mt.renewal_latency.p50)},
             {"p99", duration_json(mt.renewal_latency.p99)},
             {"max", duration_json(mt.renewal_latency.max)},
             {"ttl", duration_json(mt.ttl)},
             {"max_percent_of_ttl", mt.ttl.count() > 0 ? mt.renewal_latency.max.count() * 100 / mt.ttl.count() : 0}}},
      {"acquire_latency", ojson{{"count", mt.acquire_latency.count},
                                {"p50", duration_json(mt.acquire_latency.p50)},
                                {"p99", duration_json(mt.acquire_latency.p99)},
                                {"max", duration_json(mt.acquire_latency.max)}}},
      {"longest_two_holder_overlap", duration_json(mt.longest_overlap)},
      {"holder_audit_findings", mt.audit_findings},
      {"iterations", mt.iterations},
      {"iterations_succeeded", mt.iterations_ok}};
  if (!mt.service_errors.empty()) {
    // Written only when there were any, so other reports stay as they were.
    ojson errors = ojson::array();
    for (const auto& [text, n] : mt.service_errors) errors.push_back(ojson{{"error", text}, {"count", n}});
    metrics["service_errors"] = errors;
  }
  if (mt.first_audit) {
    const AuditFinding& a = *mt.first_audit;
    metrics["first_holder_audit_finding"] = ojson{{"at", duration_json(a.at)},
                                                  {"copy", a.copy},
                                                  {"holder", a.holder},
                                                  {"holder_token", a.holder_token},
                                                  {"last_seen", a.last_seen}};
    if (!a.lock.empty()) metrics["first_holder_audit_finding"]["lock"] = a.lock;  // more than one lock
  }
  if (mt.writes_after_belief_ended > 0) {
    const WriteAfterBelief& a = *mt.first_write_after_belief;
    metrics["writes_after_belief_ended"] = mt.writes_after_belief_ended;
    metrics["first_write_after_belief_ended"] = ojson{{"client", a.client},
                                                      {"token", a.token ? ojson(*a.token) : ojson(nullptr)},
                                                      {"belief_end", duration_json(a.belief_end)},
                                                      {"end_reason", a.end_reason},
                                                      {"sent", duration_json(a.sent)},
                                                      {"copy", a.copy},
                                                      {"accepted", a.accepted}};
  }
  j["metrics"] = metrics;
  if (!r.metric_verdicts.empty()) j["metric_expectations"] = metric_expectations_json(r);
  if (!r.program_output.empty()) j["programs"] = programs_json(r);
  j["run"] = ojson{{"events", r.events}, {"fingerprint", hex64(r.fingerprint)}, {"budget_exceeded", r.budget_exceeded}};
  j["outcome"] = ojson{{"all_expectations_met", r.all_met},
                       {"exit_code", r.budget_exceeded ? 2 : (r.all_met ? 0 : 1)},
                       {"reproduce", reproduce_command(s, r, m)}};
  return j.dump(2) + "\n";
}

std::string render_trace_jsonl(const RunResult& r) {
  std::ostringstream out;
  r.trace.write_jsonl(out);
  return out.str();
}

namespace {
std::string md_escape(const std::string& raw) {
  const std::string s = inert(raw);
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}
}  // namespace

namespace {

/// The title, the description and the settings list.
std::string md_header(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  std::string o;
  o += fmt::format("# {}\n\n", s.name);
  if (!s.description.empty()) o += markdown_text(s.description) + "\n\n";
  o += fmt::format("- seed: {}{}\n", r.seed, m.seed_overridden ? " (from the command line)" : "");
  o += fmt::format("- simulated: {} (settle {})\n", dur(s.duration), dur(s.settle));
  o += fmt::format("- lock service: {}", to_string(s.lock.service()));
  o += service_descriptor(s.lock.service()).report_design(s);
  o += "\n";
  o += fmt::format("- resource: {}", resource_kind_name(s.resource));
  if (s.resource.kind == ResourceKind::kFenced && !s.resource.custom_check) {
    o += fmt::format(" ({} check{}{})", word(s.resource.check), s.resource.fence_reads ? ", fenced reads" : "",
                     s.resource.idempotent ? ", idempotent" : "");
  }
  if (s.resource.replicas > 0) o += fmt::format(", {} further copies", s.resource.replicas);
  o += "\n";
  if (multiple_locks(s.lock)) {
    // Each lock and who takes it; the register keeps one row per lock.
    std::string locks;
    for (const std::string& k : [&] {
           std::vector<std::string> all{s.lock.key};
           all.insert(all.end(), s.lock.keys.begin(), s.lock.keys.end());
           return all;
         }()) {
      std::string who;
      for (const ClientSpec& c : s.clients) {
        if (lock_of(s.lock, c) == k) who += (who.empty() ? "" : ", ") + c.name;
      }
      locks += fmt::format("{}{} ({})", locks.empty() ? "" : "; ", k, who.empty() ? "no client" : who);
    }
    o += fmt::format("- locks: {} (each its own lock record and row of the register)\n", locks);
  }
  o += fmt::format("- clients: {}\n", s.clients.size());
  for (const ClientSpec& c : s.clients) {
    if (c.policy) o += fmt::format("- client {}: policy {}\n", c.name, client_policy_name(c));
  }
  for (const std::string& n : s.notes) o += "- note: " + n + "\n";
  o += fmt::format("- reproduce: `{}`\n\n", reproduce_command(s, r, m));

  return o;
}

/// The verdict table and, for each broken property, its story.
std::string md_verdicts(const Scenario& s, const RunResult& r) {
  std::string o;
  o += fmt::format("## Verdicts: {}\n\n", expectation_outcome(s, r));
  o += "| property | expected | got | met | summary |\n|---|---|---|---|---|\n";
  for (const Verdict& v : r.verdicts) {
    o += fmt::format("| {} | {} | {} | {} | {} |\n", to_string(v.property), expected_text(v), to_string(v.status),
                     v.expected ? (v.met ? "yes" : "**NO**") : "-", md_escape(v.summary));
  }
  o += "\n";
  if (!r.metric_verdicts.empty()) {
    o += "| metric | bound | got | met |\n|---|---|---|---|\n";
    for (const MetricVerdict& v : r.metric_verdicts) {
      o += fmt::format("| {} | {} | {} | {} |\n", v.metric, bound_text(v), value_text(v), v.met ? "yes" : "**NO**");
    }
    o += "\n";
  }
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated) continue;
    o += fmt::format("### How `{}` broke\n\n", to_string(v.property));
    for (const std::string& line : v.story) o += inert(line) + "\n";  // a program's reason may hold HTML
    o += "\n";
  }
  return o;
}

/// "A wrote after its own session had ended: …" (etcd; otherwise "after it
/// had learned that its lease was lost") — the first write a client
/// sent after it had learned that its lease was lost (Metrics::first_write_after_belief).
std::string write_after_belief_text(const Metrics& mt) {
  const WriteAfterBelief& a = *mt.first_write_after_belief;
  return fmt::format(
      "{} wrote after {}: its belief{} ended at {} ({}), yet at {} its workload sent a "
      "write to {}, which was {}. mutual_exclusion only looks at beliefs, so it cannot see this; "
      "\"on_lease_loss\": \"abort\" stops the iteration instead. Writes sent after their own belief had "
      "ended: {}.",
      a.client,
      a.end_reason.rfind("session ended", 0) == 0 ? "its own session had ended"
                                                  : "it had learned that its lease was lost",
      a.token ? fmt::format(" (token {})", *a.token) : "", format_time(a.belief_end), a.end_reason, format_time(a.sent),
      a.copy, a.accepted ? "accepted" : "rejected", mt.writes_after_belief_ended);
}

/// The metrics table and the first holder audit finding.
std::string md_metrics(const RunResult& r) {
  std::string o;
  const Metrics& mt = r.metrics;
  o += "## Metrics\n\n| metric | value |\n|---|---|\n";
  o += fmt::format("| writes accepted / rejected | {} / {} |\n", mt.writes_accepted, mt.writes_rejected);
  o += fmt::format("| updates lost (of writes accepted) | {} |\n", updates_lost_text(mt));
  o += fmt::format("| reads accepted / rejected | {} / {} |\n", mt.reads_accepted, mt.reads_rejected);
  o += fmt::format("| grants at the service | {} |\n", mt.grants);
  o += fmt::format("| acquisitions (grants received) | {} |\n", mt.acquisitions);
  o += fmt::format("| lease losses (refused renewals) | {} |\n", mt.lease_losses);
  if (mt.renewal_latency.count == 0) {
    o += fmt::format("| renewal latency p50 / p99 / max (0 renewals) | n/a (TTL {}) |\n", dur(mt.ttl));
  } else {
    o += fmt::format("| renewal latency p50 / p99 / max ({} renewals) | {} / {} / {} (TTL {}) |\n",
                     mt.renewal_latency.count, dur(mt.renewal_latency.p50), dur(mt.renewal_latency.p99),
                     dur(mt.renewal_latency.max), dur(mt.ttl));
  }
  if (mt.acquire_latency.count == 0) {
    o += "| acquisition latency p50 / p99 / max (0 acquires) | n/a |\n";
  } else {
    o += fmt::format("| acquisition latency p50 / p99 / max ({} acquires) | {} / {} / {} |\n", mt.acquire_latency.count,
                     dur(mt.acquire_latency.p50), dur(mt.acquire_latency.p99), dur(mt.acquire_latency.max));
  }
  o += fmt::format("| longest two-holder overlap | {} |\n", dur(mt.longest_overlap));
  o += fmt::format("| holder audit findings | {} |\n", mt.audit_findings);
  o += fmt::format("| iterations succeeded / run | {} / {} |\n\n", mt.iterations_ok, mt.iterations);
  if (mt.first_audit) {
    const AuditFinding& a = *mt.first_audit;
    o += fmt::format(
        "First holder audit finding: at {} on {}, {} still believed it held {} with token {} "
        "while the copy had already seen token {}{}.\n\n",
        format_time(a.at), a.copy, a.holder, a.lock.empty() ? std::string("the lock") : "lock " + a.lock,
        a.holder_token, a.last_seen, a.lock.empty() ? std::string() : " of that lock");
  }
  if (mt.first_write_after_belief) o += write_after_belief_text(mt) + "\n\n";
  for (const auto& [text, n] : mt.service_errors) {
    o += fmt::format(
        "The lock service refused {} acquire{} with a permanent error, each iteration failing without a "
        "grant: `{}`.\n\n",
        n, n == 1 ? "" : "s", text);
  }
  return o;
}

/// Every fault as it ran (FaultRecord), skipped ones with the reason.
std::string md_faults(const RunResult& r) {
  std::string o;
  o += "## Faults\n\n";
  if (r.swarm) o += "Swarm: this seed's nemesis draws from " + swarm_text(*r.swarm) + ".\n\n";
  if (r.history.faults.empty()) {
    o += "None.\n\n";
  } else {
    o += "| start | end | kind | target | detail | origin |\n|---|---|---|---|---|---|\n";
    for (const FaultRecord& f : r.history.faults) {
      o += fmt::format("| {} | {} | {} | {} | {} | {} |\n", format_time(f.start), f.end ? format_time(*f.end) : "never",
                       to_string(f.kind), md_escape(f.target),
                       md_escape(f.skipped ? "skipped: " + f.skip_reason : f.detail), f.origin);
    }
    o += "\n";
  }
  return o;
}

std::string md_iterations(const RunResult& r) {
  std::string o;
  o += "## Iterations\n\n| client | # | start | acquired | outcome |\n|---|---|---|---|---|\n";
  for (const IterationRecord& it : r.history.iterations) {
    o += fmt::format("| {} | {} | {} | {} | {} |\n", it.client, it.index, format_time(it.start),
                     it.acquired ? format_time(*it.acquired) : "-", md_escape(it.outcome));
  }
  return o;
}

/// "Program output": what each program client (and the resource program,
/// as "resource") wrote to stderr.
std::string md_program_output(const RunResult& r) {
  if (r.program_output.empty()) return "";
  std::string o = "\n## Program output\n\nThe end of what each program client wrote to stderr (at most 16 KiB).\n";
  for (const auto& [client, text] : r.program_output) {
    // The resource program's comes last, under the copy's name (no client has it).
    o += fmt::format("\n### {}{}\n\n", client, client == "resource" ? " (the resource program)" : "");
    if (text.empty()) {
      o += "(nothing)\n";
      continue;
    }
    // A fence longer than any run of backticks in the text.
    std::size_t longest = 0, run = 0;
    for (const char ch : text) longest = std::max(longest, run = ch == '`' ? run + 1 : 0);
    const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
    o += fence + "\n" + text + (text.back() == '\n' ? "" : "\n") + fence + "\n";
  }
  return o;
}

}  // namespace

std::string render_report_markdown(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  std::string o =
      md_header(s, r, m) + md_verdicts(s, r) + md_metrics(r) + md_faults(r) + md_iterations(r) + md_program_output(r);
  o += fmt::format("\n---\nfencesim {} · {} events · fingerprint {}\n", version(), r.events, hex64(r.fingerprint));
  return o;
}

std::vector<std::string> unmet_expectations(const RunResult& r) {
  std::vector<std::string> out;
  for (const Verdict& v : r.verdicts) {
    if (v.expected && !v.met) {
      out.push_back(
          fmt::format("{}: expected {}, got {}", to_string(v.property), to_string(*v.expected), to_string(v.status)));
    }
  }
  for (const MetricVerdict& v : r.metric_verdicts) {
    if (!v.met) out.push_back(fmt::format("metric {}: expected {}, got {}", v.metric, bound_text(v), value_text(v)));
  }
  return out;
}

std::string expectation_outcome(const Scenario& s, const RunResult& r) {
  if (s.expect.empty() && s.expect_metrics.empty()) return "no expect block: nothing was expected";
  return r.all_met ? "every expectation met" : "an expectation was NOT met";
}

std::string render_summary(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  std::string o;
  o += fmt::format("scenario {}  seed {}{}\n", s.name, r.seed, m.seed_overridden ? " (from --seed)" : "");
  o += fmt::format("  duration {}  settle {}  service {}", dur(s.duration), dur(s.settle), to_string(s.lock.service()));
  o += service_descriptor(s.lock.service()).summary_design(s);
  o += fmt::format("  resource {}", resource_kind_name(s.resource));
  if (s.resource.kind == ResourceKind::kFenced && !s.resource.custom_check) {
    o += std::string(" ") + word(s.resource.check);
    if (s.resource.fence_reads) o += " fence_reads";
  }
  o += fmt::format("  clients {}  faults {} ({} drawn)\n", s.clients.size(), r.faults.size(), r.drawn.size());
  for (const ClientSpec& c : s.clients) {
    if (c.policy) o += fmt::format("  client {} policy {}\n", c.name, client_policy_name(c));
  }
  for (const std::string& n : s.notes) o += "  note: " + n + "\n";
  o += fmt::format("\n  {:<19} {:<10} {:<15} {}\n", "property", "expected", "got", "");
  for (const Verdict& v : r.verdicts) {
    o += fmt::format("  {:<19} {:<10} {:<15} {}\n", to_string(v.property), expected_text(v), to_string(v.status),
                     v.expected ? (v.met ? "ok" : "MISMATCH") : "");
  }
  if (s.expect.empty() && s.expect_metrics.empty()) o += "  " + expectation_outcome(s, r) + "\n";
  const Metrics& mt = r.metrics;
  // No renewal at all (renew off, or no lease held long enough): "n/a", not a 0s latency.
  const std::string renewal = mt.renewal_latency.count == 0
                                  ? fmt::format("renewal p99 n/a (no renewals, ttl {})", dur(mt.ttl))
                                  : fmt::format("renewal p99 {} (max {}, ttl {})", dur(mt.renewal_latency.p99),
                                                dur(mt.renewal_latency.max), dur(mt.ttl));
  o += fmt::format(
      "\n  writes accepted/rejected {}/{}  updates lost {}  acquisitions {}  lease losses {}  {}  longest overlap "
      "{}  "
      "audit findings {}\n",
      mt.writes_accepted, mt.writes_rejected, updates_lost_text(mt), mt.acquisitions, mt.lease_losses, renewal,
      dur(mt.longest_overlap), mt.audit_findings);
  for (const MetricVerdict& v : r.metric_verdicts) {
    o += fmt::format("  metric {:<28} {:<16} got {:<10} {}\n", v.metric, bound_text(v), value_text(v),
                     v.met ? "ok" : "MISMATCH");
  }
  if (mt.first_write_after_belief) o += "\n  " + write_after_belief_text(mt) + "\n";
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated) continue;
    o += fmt::format("\n  {} violated: {}\n", to_string(v.property), v.summary);
    for (const std::string& line : v.story) o += "    " + line + "\n";
  }
  if (r.budget_exceeded) o += "\n  the run exceeded its event budget and was stopped\n";
  return o;
}

std::string report_dir(const std::string& out, const Scenario& s, const RunResult& r, const ReportMeta& m) {
  std::string base = out.empty() ? std::string(kDefaultOut) : out;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "/" + (m.seed_overridden ? fmt::format("{}-seed{}", s.name, r.seed) : s.name);
}

}  // namespace fencesim
