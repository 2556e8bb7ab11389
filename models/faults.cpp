// models/faults.cpp — the table of fault kinds (see faults.hpp). One block
// per kind: how it applies, ends, reads in a report, is drawn and written.
#include "models/faults.hpp"

#include "models/faults_rules.hpp"

#include "models/words.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace fencesim {

namespace {

using Keys = std::vector<std::string_view>;

std::string join(const std::vector<std::string>& parts, const char* sep) {
  return fmt::format("{}", fmt::join(parts, sep));
}

/// Resolves f.target to one node now (role aliases included) and records
/// the node's name; returns a skip reason when there is none.
std::optional<std::string> resolve_target(FaultEnv& env, const FaultSpec& f, FaultRecord& rec, std::string& node) {
  std::string why;
  auto name = env.resolve(f.target, why);
  if (!name) return why;
  rec.target = *name;
  node = std::move(*name);
  return std::nullopt;
}

/// A verb's result as a skip reason: nullopt when it took effect.
std::optional<std::string> done(bool ok, std::string& why) {
  if (ok) return std::nullopt;
  return std::move(why);
}

std::optional<Time> ends_at_start(const FaultSpec& f, const std::vector<FaultSpec>&) { return f.at; }
std::optional<Time> ends_after_duration(const FaultSpec& f, const std::vector<FaultSpec>&) {
  if (f.duration) return f.at + *f.duration;
  return std::nullopt;
}
std::string no_detail(const FaultSpec&) { return ""; }
void write_target(const FaultSpec& f, FaultWriter& out) { out.text("target", f.target); }
void write_duration_if_set(const FaultSpec& f, FaultWriter& out) {
  if (f.duration) out.duration("duration", *f.duration);
}

// -- pause --------------------------------------------------------------------

std::optional<std::string> apply_pause(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  return done(env.pause(n, f.duration.value_or(Duration{0}), why), why);
}
std::optional<Time> end_pause_or_slow(const FaultSpec& f, const std::vector<FaultSpec>&) {
  return f.at + f.duration.value_or(Duration{0});
}
void draw_pause(FaultSpec& f, Duration d, Duration, sim::Rng&) { f.duration = d; }
void write_pause(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  write_duration_if_set(f, out);
}

// -- clock_jump ---------------------------------------------------------------

const char* clock_word(ClockSelect c) { return word(c); }

std::optional<std::string> apply_clock_jump(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  return done(env.clock_jump(n, f.by, f.clock, why), why);
}
std::string detail_clock_jump(const FaultSpec& f) {
  return fmt::format("{} clock by {}",
                     f.clock == ClockSelect::kWall        ? "wall"
                     : f.clock == ClockSelect::kMonotonic ? "monotonic"
                                                          : "wall and monotonic",
                     sim::format_duration(f.by));
}
void draw_clock_jump(FaultSpec& f, Duration d, Duration, sim::Rng& rng) {
  f.by = rng.uniform(0, 1) == 1 ? -d : d;
  f.clock = ClockSelect::kWall;
}
void write_clock_jump(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  out.duration("by", f.by);
  if (f.clock != ClockSelect::kWall) out.text("clock", clock_word(f.clock));  // default: wall
}

// -- clock_drift --------------------------------------------------------------

std::optional<std::string> apply_clock_drift(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  if (!env.set_drift(n, f.ppm, why)) return why;
  if (f.duration) {
    env.after(*f.duration, [n](FaultEnv& e) {
      std::string ignored;
      e.set_drift(n, 0, ignored);
    });
  }
  return std::nullopt;
}
std::string detail_clock_drift(const FaultSpec& f) { return fmt::format("{} ppm", f.ppm); }
void draw_clock_drift(FaultSpec& f, Duration d, Duration, sim::Rng& rng) {
  f.ppm = rng.uniform(-1000, 1000);
  f.duration = d;
}
void write_clock_drift(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  out.integer("ppm", f.ppm);
  write_duration_if_set(f, out);
}

// -- partition ----------------------------------------------------------------

std::optional<std::string> apply_partition(FaultEnv& env, const FaultSpec& f, FaultRecord&) {
  // Role aliases resolve now; one that names no node at the moment is left out.
  auto add = [&env](const std::string& name, std::vector<std::string>& to) {
    std::string why;
    if (auto node = env.resolve(name, why)) to.push_back(std::move(*node));
  };
  std::vector<std::vector<std::string>> groups;
  for (const auto& g : f.groups) {
    std::vector<std::string> names;
    for (const std::string& n : g) add(n, names);
    groups.push_back(std::move(names));
  }
  std::vector<std::string> isolate;
  for (const std::string& n : f.isolate) add(n, isolate);
  std::string why;
  const auto id = env.partition(groups, isolate, f.one_way, why);
  if (!id) return why;
  if (f.duration) env.after(*f.duration, [id = *id](FaultEnv& e) { e.end_partition(id); });
  return std::nullopt;
}
std::optional<Time> end_partition(const FaultSpec& f, const std::vector<FaultSpec>& all) {
  if (f.duration) return f.at + *f.duration;
  std::optional<Time> heal;
  for (const FaultSpec& h : all) {
    if (h.kind == FaultKind::kHeal && h.at >= f.at && (!heal || h.at < *heal)) heal = h.at;
  }
  return heal;
}
std::string detail_partition(const FaultSpec& f) {
  std::string text;
  if (!f.isolate.empty()) {
    text = "isolate [" + join(f.isolate, ", ") + "]";
  } else {
    std::vector<std::string> groups;
    for (const auto& g : f.groups) groups.push_back("[" + join(g, ", ") + "]");
    text = "groups " + join(groups, " | ");
  }
  if (f.one_way) text += " one-way";
  return text;
}
/// A drawn partition isolates the drawn target in both directions; like a
/// scripted one it has no `target` of its own.
void draw_partition(FaultSpec& f, Duration d, Duration, sim::Rng&) {
  f.isolate = {f.target};
  f.target.clear();
  f.duration = d;
}
void write_partition(const FaultSpec& f, FaultWriter& out) {
  if (!f.groups.empty()) {
    out.node_groups("groups", f.groups);
  } else {
    out.nodes("isolate", f.isolate);
  }
  if (f.one_way) out.boolean("one_way", true);  // default: false
  write_duration_if_set(f, out);
}

// -- heal ---------------------------------------------------------------------

std::optional<std::string> apply_heal(FaultEnv& env, const FaultSpec&, FaultRecord&) {
  env.heal();
  return std::nullopt;
}
void write_nothing(const FaultSpec&, FaultWriter&) {}

// -- crash --------------------------------------------------------------------

std::optional<std::string> apply_crash(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  if (!env.crash(n, f.power_loss, why)) return why;
  if (f.restart_after) {
    env.after(*f.restart_after, [n](FaultEnv& e) {
      std::string ignored;
      e.restart(n, ignored);
    });
  }
  return std::nullopt;
}
std::optional<Time> end_crash(const FaultSpec& f, const std::vector<FaultSpec>&) {
  if (f.restart_after) return f.at + *f.restart_after;
  return std::nullopt;
}
std::string detail_crash(const FaultSpec& f) {
  return std::string(f.power_loss ? "power loss, " : "") +
         (f.restart_after ? "restart after " + sim::format_duration(*f.restart_after) : "no restart");
}
void draw_crash(FaultSpec& f, Duration d, Duration, sim::Rng&) { f.restart_after = d; }
void write_crash(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  if (f.restart_after) out.duration("restart_after", *f.restart_after);
  if (f.power_loss) out.boolean("power_loss", true);
}

// -- failover -----------------------------------------------------------------

std::optional<std::string> apply_by_service(FaultEnv& env, const FaultSpec& f, FaultRecord&) {
  std::string why;
  if (env.apply_service_fault(f, why)) return std::nullopt;
  return why;
}

// -- counter_reset ------------------------------------------------------------

std::optional<std::string> apply_counter_reset(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  if (f.target == "resource" || f.target == "resources") {
    env.reset_resource_marks(f.value);
    return std::nullopt;
  }
  return apply_by_service(env, f, rec);
}
std::string detail_counter_reset(const FaultSpec& f) { return fmt::format("to {}", f.value); }
void write_counter_reset(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  if (f.value != 0) out.integer("value", f.value);  // default: 0
}

// -- slow ---------------------------------------------------------------------

std::optional<std::string> apply_slow(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  const Duration d = f.delay;
  const auto id = env.slow(n, d, why);
  if (!id) return why;
  env.after(f.duration.value_or(Duration{0}), [n, d, id = *id](FaultEnv& e) { e.end_slow(n, d, id); });
  return std::nullopt;
}
std::string detail_slow(const FaultSpec& f) { return "+" + sim::format_duration(f.delay) + " per message"; }
/// A drawn slowdown lasts the nemesis's max_duration; `d` is its delay.
void draw_slow(FaultSpec& f, Duration d, Duration max_duration, sim::Rng&) {
  f.delay = d;
  f.duration = max_duration;
}
void write_slow(const FaultSpec& f, FaultWriter& out) {
  write_target(f, out);
  out.duration("delay", f.delay);
  write_duration_if_set(f, out);
}

// -- disk_stall ---------------------------------------------------------------

/// The etcd service stalls the member's Ready loop (raft::RaftNode::stall).
std::optional<std::string> apply_disk_stall(FaultEnv& env, const FaultSpec& f, FaultRecord& rec) {
  std::string n, why;
  if (auto skip = resolve_target(env, f, rec, n)) return skip;
  FaultSpec on = f;
  on.target = n;
  return done(env.apply_service_fault(on, why), why);
}

std::vector<FaultKindInfo> make_table() {
  using namespace fault_rules;  // parse_*, validate_*, length_*, mark_*, notes (faults_rules.hpp)
  // clang-format off
  return {
    {FaultKind::kPause, "pause", Keys{"target", "duration"}, 1,
     apply_pause, end_pause_or_slow, no_detail, draw_pause, write_pause,
     parse_pause, validate_pause, length_duration, set_length_duration, mark_pause, nullptr, nullptr, false,
     FaultFamily::kProcess, false, true},
    {FaultKind::kClockJump, "clock_jump", Keys{"target", "by", "clock"}, 4,
     apply_clock_jump, ends_at_start, detail_clock_jump, draw_clock_jump, write_clock_jump,
     parse_clock_jump, validate_clock_jump, length_by, set_length_by, mark_clock_jump, nullptr, nullptr, false,
     FaultFamily::kClock, false, true},
    {FaultKind::kClockDrift, "clock_drift", Keys{"target", "ppm", "duration"}, 5,
     apply_clock_drift, ends_after_duration, detail_clock_drift, draw_clock_drift, write_clock_drift,
     parse_clock_drift, validate_clock_drift, length_duration, set_length_duration, mark_clock_drift, nullptr, nullptr,
     false,
     FaultFamily::kClock, false, true},
    {FaultKind::kPartition, "partition", Keys{"groups", "isolate", "one_way", "duration"}, 2,
     apply_partition, end_partition, detail_partition, draw_partition, write_partition,
     parse_partition, validate_partition, length_duration, set_length_duration, mark_partition, nullptr, nullptr, true,
     FaultFamily::kLink, false, true},
    {FaultKind::kHeal, "heal", Keys{}, 0,
     apply_heal, ends_at_start, no_detail, nullptr, write_nothing,
     parse_nothing, validate_nothing, nullptr, nullptr, mark_event, notes_heal, nullptr, false,
     FaultFamily::kLink, false, true},
    {FaultKind::kCrash, "crash", Keys{"target", "restart_after", "power_loss"}, 3,
     apply_crash, end_crash, detail_crash, draw_crash, write_crash,
     parse_crash, validate_crash, length_restart_after, set_length_restart_after, mark_crash, nullptr, nullptr, false,
     FaultFamily::kProcess, true, true},
    {FaultKind::kFailover, "failover", Keys{"target"}, 0,
     apply_by_service, ends_at_start, no_detail, nullptr, write_target,
     parse_failover, validate_failover, nullptr, nullptr, mark_event, nullptr, nullptr, false,
     FaultFamily::kService, false, true},
    {FaultKind::kCounterReset, "counter_reset", Keys{"target", "value"}, 0,
     apply_counter_reset, ends_at_start, detail_counter_reset, nullptr, write_counter_reset,
     parse_counter_reset, validate_counter_reset, nullptr, nullptr, mark_event, nullptr, nullptr, false,
     FaultFamily::kService, false, true},
    {FaultKind::kSlow, "slow", Keys{"target", "delay", "duration"}, 6,
     apply_slow, end_pause_or_slow, detail_slow, draw_slow, write_slow,
     parse_slow, validate_slow, length_duration, set_length_duration, mark_slow, nullptr, nemesis_notes_slow, false,
     FaultFamily::kLink, false, true},
    {FaultKind::kDiskStall, "disk_stall", Keys{"target", "duration"}, 0,
     apply_disk_stall, end_pause_or_slow, no_detail, nullptr, write_pause,
     parse_disk_stall, validate_disk_stall, length_duration, set_length_duration, mark_disk_stall, nullptr, nullptr,
     false,
     FaultFamily::kService, false, false},
  };
  // clang-format on
}

}  // namespace

namespace {

/// The table and the nemesis's kinds, recomputed when a kind is registered.
struct Registry {
  std::vector<FaultKindInfo> kinds;
  std::vector<FaultKind> nemesis;

  void sort_nemesis() {
    std::vector<const FaultKindInfo*> drawn;
    for (const FaultKindInfo& k : kinds) {
      if (k.nemesis > 0) drawn.push_back(&k);
    }
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const FaultKindInfo* a, const FaultKindInfo* b) { return a->nemesis < b->nemesis; });
    nemesis.clear();
    for (const FaultKindInfo* k : drawn) nemesis.push_back(k->kind);
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry out{make_table(), {}};
    for (std::size_t i = 0; i < out.kinds.size(); ++i) {
      if (static_cast<std::size_t>(out.kinds[i].kind) != i)
        throw std::logic_error("fault table out of FaultKind order");
    }
    out.sort_nemesis();
    return out;
  }();
  return r;
}

}  // namespace

const std::vector<FaultKindInfo>& fault_kinds() { return registry().kinds; }

const FaultKindInfo& fault_info(FaultKind k) { return fault_kinds().at(static_cast<std::size_t>(k)); }

const std::vector<FaultKind>& nemesis_fault_kinds() { return registry().nemesis; }

void register_fault_kind(FaultKindInfo info) {
  Registry& r = registry();
  const std::string name = info.name == nullptr ? "" : info.name;
  if (static_cast<std::size_t>(info.kind) != r.kinds.size()) {
    throw std::invalid_argument("fault kind " + name + ": its FaultKind must be the next value, " +
                                std::to_string(r.kinds.size()));
  }
  if (name.empty() || fault_kind_from_string(name)) {
    throw std::invalid_argument("fault kind \"" + name + "\" is unnamed or registered already");
  }
  if (!info.apply || !info.end || !info.detail || !info.write || !info.parse || !info.validate || !info.mark ||
      (info.nemesis > 0 && !info.draw) || (info.length == nullptr) != (info.set_length == nullptr)) {
    throw std::invalid_argument("fault kind " + name + ": a function of its entry is missing");
  }
  r.kinds.push_back(std::move(info));
  r.sort_nemesis();
}

const char* to_string(FaultKind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < fault_kinds().size() ? fault_kinds()[i].name : "?";
}

std::optional<FaultKind> fault_kind_from_string(const std::string& s) {
  for (const FaultKindInfo& k : fault_kinds()) {
    if (s == k.name) return k.kind;
  }
  return std::nullopt;
}

std::optional<Time> fault_end(const FaultSpec& f, const std::vector<FaultSpec>& all) {
  return fault_info(f.kind).end(f, all);
}

std::string fault_detail(const FaultSpec& f) {
  std::vector<std::string> parts;
  if (f.duration) parts.push_back("for " + sim::format_duration(*f.duration));
  if (std::string own = fault_info(f.kind).detail(f); !own.empty()) parts.push_back(std::move(own));
  return join(parts, ", ");
}

void apply_fault(FaultEnv& env, const FaultSpec& f, const std::vector<FaultSpec>& all) {
  FaultRecord rec;
  rec.start = env.now();
  rec.end = fault_end(f, all);
  rec.kind = f.kind;
  rec.target = f.target;
  rec.detail = fault_detail(f);
  rec.origin = f.origin;
  if (auto why = fault_info(f.kind).apply(env, f, rec)) {
    rec.skipped = true;
    rec.skip_reason = std::move(*why);
  }
  env.record(std::move(rec));
}

void write_fault(const FaultSpec& f, FaultWriter& out) {
  out.duration("at", f.at);
  out.text("kind", to_string(f.kind));
  fault_info(f.kind).write(f, out);
}

}  // namespace fencesim
