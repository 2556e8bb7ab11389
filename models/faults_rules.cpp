// models/faults_rules.cpp — per fault kind: how its keys are read, its
// rules, its length for the shrinker, its mark on the timelines and its
// notes (see faults_rules.hpp; the table is models/faults.cpp). The rules'
// messages are the loader's: a file and a Scenario built in code get the
// same words at the same path (docs/FORMAT.md "Faults").
#include "models/faults_rules.hpp"

#include "models/lock_service.hpp"
#include "models/rules.hpp"
#include "models/words.hpp"

#include <algorithm>
#include <map>

namespace fencesim::fault_rules {

using namespace rules;  // problem, positive, in_range, fmt_d, … (models/rules.hpp)

namespace {

constexpr DurationRule kPositive = KeyReader::kPositive;

/// clock_drift's ppm: at -1'000'000 a clock would stop (sim/clock.hpp).
constexpr IntRange kDriftPpm{-999'999, 1'000'000, " (a clock must keep moving forward)"};
/// counter_reset's value: a token or a mark (Ranges::kInitial's top).
constexpr IntRange kResetValue{0, Ranges::kInitial.hi};

std::string quoted_list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + quote_text(x);
  return out;
}

/// A monotonic clock never goes back (sim/clock.hpp): a negative jump may
/// move only the wall clock. Shared by parse and validate, so a file and a
/// built Scenario get the same words.
std::optional<std::string> backward_monotonic_jump(const FaultSpec& f) {
  if (f.by >= Duration::zero() || f.clock == ClockSelect::kWall) return std::nullopt;
  return "a monotonic clock only jumps forward: a negative \"by\" needs \"clock\": \"wall\" (got \"clock\": " +
         std::string(f.clock == ClockSelect::kMonotonic ? "\"monotonic\"" : "\"both\"") + ")";
}

Problem required(const std::optional<Duration>& d, const std::string& path, const char* key_name, const char* what) {
  if (!d) return problem(path + "." + key_name, "missing required key " + quote_text(key_name) + ": " + what);
  return positive(path + "." + key_name, *d);
}

bool listed(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// A partition's groups: at least two, each a valid node list, no node in two.
Problem partition_groups(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  if (f.groups.size() < 2) return problem(path + ".groups", "a partition needs at least two groups");
  std::map<std::string, std::size_t> where;
  for (std::size_t g = 0; g < f.groups.size(); ++g) {
    const std::string gp = path + ".groups[" + std::to_string(g) + "]";
    FENCESIM_CHECK(ctx.nodes(f.groups[g], gp));
    for (const auto& n : f.groups[g]) {
      auto [it, fresh] = where.emplace(n, g);
      if (!fresh && it->second != g) {
        return problem(gp, "node " + quote_text(n) + " is in groups " + std::to_string(it->second) + " and " +
                               std::to_string(g) + "; each node may be in one group only");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

// -- pause --------------------------------------------------------------------

void parse_pause(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the node to pause");
  f.duration = in.duration("duration", kPositive, "how long the pause lasts, e.g. \"12s\"");
}
Problem validate_pause(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  return required(f.duration, path, "duration", "how long the pause lasts, e.g. \"12s\"");
}
FaultMark mark_pause(const FaultRecord&) { return {FaultMark::Look::kStopped, "paused", "resumes"}; }

// -- clock_jump ---------------------------------------------------------------

void parse_clock_jump(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the node whose clock jumps");
  if (const auto c = in.choice("clock", word_list<ClockSelect>())) f.clock = Words<ClockSelect>::kTable[*c].value;
  f.by = *in.duration("by", KeyReader::kSigned, "the signed jump, e.g. \"25s\" or \"-5s\"");
  if (const auto why = backward_monotonic_jump(f)) in.fail("by", *why);
}
Problem validate_clock_jump(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  FENCESIM_CHECK(not_too_long(path + ".by", f.by));
  if (const auto why = backward_monotonic_jump(f)) return problem(path + ".by", *why);
  return std::nullopt;
}
/// The jump's size, whichever way it goes; the sign is kept when shortened.
std::optional<Duration> length_by(const FaultSpec& f) { return f.by < Duration::zero() ? -f.by : f.by; }
void set_length_by(FaultSpec& f, Duration d) { f.by = f.by < Duration::zero() ? -d : d; }
FaultMark mark_clock_jump(const FaultRecord& r) { return {FaultMark::Look::kClock, "clock " + r.detail}; }

// -- clock_drift --------------------------------------------------------------

void parse_clock_drift(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the node whose clocks drift");
  f.ppm = *in.integer("ppm", kDriftPpm, "the drift in parts per million, e.g. 500 or -200");
  f.duration = in.duration("duration", kPositive);
}
Problem validate_clock_drift(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  FENCESIM_CHECK(in_range(path + ".ppm", f.ppm, kDriftPpm));
  if (f.duration) FENCESIM_CHECK(positive(path + ".duration", *f.duration));
  return std::nullopt;
}
FaultMark mark_clock_drift(const FaultRecord& r) { return {FaultMark::Look::kClock, "drift " + r.detail}; }

// -- pause, clock_drift, partition, slow: the length is `duration` -------------

std::optional<Duration> length_duration(const FaultSpec& f) { return f.duration; }
void set_length_duration(FaultSpec& f, Duration d) { f.duration = d; }

// -- partition ----------------------------------------------------------------

void parse_partition(NodeKeyReader& in, FaultSpec& f) {
  const bool groups = in.has("groups");
  if (groups == in.has("isolate")) {
    in.fail(groups ? "isolate" : "",
            groups ? "a partition takes either \"groups\" or \"isolate\", not both"
                   : "a partition needs \"groups\" (a list of node lists) or \"isolate\" (a node list)");
  }
  if (groups) {
    f.groups = *in.node_groups("groups");
  } else {
    f.isolate = *in.nodes("isolate");
  }
  if (const auto x = in.boolean("one_way")) f.one_way = *x;
  f.duration = in.duration("duration", kPositive);
}
Problem validate_partition(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  if (f.groups.empty() == f.isolate.empty()) {
    return problem(f.groups.empty() ? path : path + ".isolate",
                   f.groups.empty() ? "a partition needs \"groups\" (a list of node lists) or \"isolate\" (a node list)"
                                    : "a partition takes either \"groups\" or \"isolate\", not both");
  }
  if (!f.groups.empty()) {
    FENCESIM_CHECK(partition_groups(f, path, ctx));
  } else {
    FENCESIM_CHECK(ctx.nodes(f.isolate, path + ".isolate"));
  }
  if (f.duration) FENCESIM_CHECK(positive(path + ".duration", *f.duration));
  return std::nullopt;
}
FaultMark mark_partition(const FaultRecord&) { return {FaultMark::Look::kCut, "partition"}; }

// -- heal ---------------------------------------------------------------------

void parse_nothing(NodeKeyReader&, FaultSpec&) {}
Problem validate_nothing(const FaultSpec&, const std::string&, const FaultContext&) { return std::nullopt; }

/// A scripted heal when no scripted partition is active heals nothing. (A
/// nemesis that draws partitions may have one active, and so may a fault
/// whose start is drawn from a range: no note then.)
void notes_heal(const Scenario& s, std::vector<std::string>& out) {
  if (s.nemesis &&
      std::find(s.nemesis->kinds.begin(), s.nemesis->kinds.end(), FaultKind::kPartition) != s.nemesis->kinds.end()) {
    return;
  }
  // A start drawn from a range: which partition is active depends on the seed.
  for (const FaultSpec& f : s.faults) {
    if (f.at_max) return;
  }
  // Faults of one instant take effect in declaration order.
  std::vector<std::size_t> order(s.faults.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.faults[a].at < s.faults[b].at; });
  std::vector<std::optional<Duration>> active;  // end of each active partition (nullopt: until a heal)
  for (std::size_t i : order) {
    const FaultSpec& f = s.faults[i];
    if (f.at >= s.duration) break;
    std::erase_if(active, [&](const std::optional<Duration>& end) { return end && *end <= f.at; });
    if (f.kind == FaultKind::kPartition) {
      active.push_back(f.duration ? std::optional<Duration>(f.at + *f.duration) : std::nullopt);
    } else if (f.kind == FaultKind::kHeal) {
      if (active.empty()) {
        const std::string origin = f.origin.empty() ? "faults[" + std::to_string(i) + "]" : f.origin;
        out.push_back(origin + " (heal at " + fmt_d(f.at) + ") heals nothing: no partition is active then");
      }
      active.clear();
    }
  }
}

// -- crash --------------------------------------------------------------------

void parse_crash(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the node to crash");
  f.restart_after = in.duration("restart_after", kPositive);
  if (const auto x = in.boolean("power_loss")) f.power_loss = *x;
}
Problem validate_crash(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  if (f.restart_after) FENCESIM_CHECK(positive(path + ".restart_after", *f.restart_after));
  return std::nullopt;
}
std::optional<Duration> length_restart_after(const FaultSpec& f) { return f.restart_after; }
void set_length_restart_after(FaultSpec& f, Duration d) { f.restart_after = d; }
FaultMark mark_crash(const FaultRecord&) { return {FaultMark::Look::kDown, "crash"}; }

// -- failover -----------------------------------------------------------------

/// The target is a lock service that takes failover (its service_faults()).
void parse_failover(NodeKeyReader& in, FaultSpec& f) {
  const std::vector<std::string> services = services_taking(f.kind);
  f.target = services[*in.choice("target", services, quoted_list(services))];
  // Whether this scenario's service can take it: validate_failover.
}
Problem validate_failover(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  const std::vector<std::string> services = services_taking(f.kind);
  if (!listed(services, f.target)) {
    return problem(path + ".target",
                   "unknown value " + quote_text(f.target) + "; expected one of " + quoted_list(services));
  }
  return ctx.service_fault(f, path + ".kind");
}

// -- counter_reset ------------------------------------------------------------

/// The target is a service's token counter or "resource" (every copy's marks).
void parse_counter_reset(NodeKeyReader& in, FaultSpec& f) {
  std::vector<std::string> targets = services_taking(f.kind);
  const std::string what = quoted_list(targets) + " (the token counter) or \"resource\" (the stored marks)";
  targets.emplace_back("resource");
  f.target = targets[*in.choice("target", targets, what)];
  if (const auto x = in.integer("value", kResetValue)) f.value = *x;
  // Whether this scenario's service can take it: validate_counter_reset.
}
Problem validate_counter_reset(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  std::vector<std::string> targets = services_taking(f.kind);
  targets.emplace_back("resource");
  if (!listed(targets, f.target)) {
    return problem(path + ".target",
                   "unknown value " + quote_text(f.target) + "; expected one of " + quoted_list(targets),
                   suggest_nearest(f.target, targets));
  }
  FENCESIM_CHECK(in_range(path + ".value", f.value, kResetValue));
  if (f.target != "resource") return ctx.service_fault(f, path + ".target");
  return std::nullopt;
}

// -- slow ---------------------------------------------------------------------

void parse_slow(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the node to slow down");
  f.delay = *in.duration("delay", kPositive, "the extra delay per message, e.g. \"4s\"");
  f.duration = in.duration("duration", kPositive, "how long the node stays slow, e.g. \"10s\"");
}
Problem validate_slow(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  FENCESIM_CHECK(positive(path + ".delay", f.delay));
  return required(f.duration, path, "duration", "how long the node stays slow, e.g. \"10s\"");
}
FaultMark mark_slow(const FaultRecord&) { return {FaultMark::Look::kSlowed, "slow"}; }

// -- disk_stall ---------------------------------------------------------------

void parse_disk_stall(NodeKeyReader& in, FaultSpec& f) {
  f.target = *in.node("target", "the etcd member whose WAL fsync blocks, e.g. \"etcd-leader\"");
  f.duration = in.duration("duration", kPositive, "how long the fsync blocks, e.g. \"5s\"");
}
Problem validate_disk_stall(const FaultSpec& f, const std::string& path, const FaultContext& ctx) {
  const Scenario& s = ctx.scenario();
  if (s.lock.service() != ServiceKind::kEtcd) {
    return problem(path + ".kind",
                   "disk_stall blocks an etcd member's Raft Ready loop in a WAL fsync (etcd-io/etcd#15247), and "
                   "lock.service is " +
                       quote_text(to_string(s.lock.service())),
                   "use \"pause\" to stop a whole node");
  }
  FENCESIM_CHECK(ctx.target(f.target, path + ".target"));
  if (f.target != "etcd-leader" && f.target.rfind("etcd-", 0) != 0) {
    return problem(path + ".target", "disk_stall needs an etcd member (etcd-0 … etcd-" +
                                         std::to_string(s.lock.etcd().nodes - 1) + " or \"etcd-leader\"), got " +
                                         quote_text(f.target));
  }
  return required(f.duration, path, "duration", "how long the fsync blocks, e.g. \"5s\"");
}
FaultMark mark_disk_stall(const FaultRecord&) { return {FaultMark::Look::kSlowed, "disk stall", "fsync returns"}; }

/// The nemesis draws d from 1 ms to max_duration in whole milliseconds, and
/// a slow fault gets delay d and duration max_duration: below 2 ms every
/// draw is d = max_duration.
void nemesis_notes_slow(const Scenario& s, std::vector<std::string>& out) {
  const NemesisSpec& n = *s.nemesis;
  if (n.max_duration >= std::chrono::milliseconds(1) && n.max_duration < std::chrono::milliseconds(2)) {
    out.push_back("nemesis.max_duration " + fmt_d(n.max_duration) +
                  " leaves one value to draw: every slow fault the nemesis draws has a delay of 1ms and lasts " +
                  fmt_d(n.max_duration) + ", so a message sent while it is slow arrives only as it ends");
  }
}

// -- heal, failover, counter_reset: a diamond ----------------------------------

FaultMark mark_event(const FaultRecord& r) { return {FaultMark::Look::kEvent, to_string(r.kind)}; }

}  // namespace fencesim::fault_rules

// -- factories (faults.hpp, namespace faults) ----------------------------------

namespace fencesim::faults {

namespace {
FaultSpec at_time(FaultKind kind, Duration at, std::string target = "") {
  FaultSpec f;
  f.kind = kind;
  f.at = at;
  f.target = std::move(target);
  return f;
}
}  // namespace

FaultSpec pause(std::string target, Duration at, Duration duration) {
  FaultSpec f = at_time(FaultKind::kPause, at, std::move(target));
  f.duration = duration;
  return f;
}
FaultSpec clock_jump(std::string target, Duration at, Duration by, ClockSelect clock) {
  FaultSpec f = at_time(FaultKind::kClockJump, at, std::move(target));
  f.by = by;
  f.clock = clock;
  return f;
}
FaultSpec clock_drift(std::string target, Duration at, std::int64_t ppm, std::optional<Duration> duration) {
  FaultSpec f = at_time(FaultKind::kClockDrift, at, std::move(target));
  f.ppm = ppm;
  f.duration = duration;
  return f;
}
FaultSpec partition(Duration at, std::vector<std::vector<std::string>> groups, std::optional<Duration> duration,
                    bool one_way) {
  FaultSpec f = at_time(FaultKind::kPartition, at);
  f.groups = std::move(groups);
  f.duration = duration;
  f.one_way = one_way;
  return f;
}
FaultSpec isolate(Duration at, std::vector<std::string> nodes, std::optional<Duration> duration, bool one_way) {
  FaultSpec f = at_time(FaultKind::kPartition, at);
  f.isolate = std::move(nodes);
  f.duration = duration;
  f.one_way = one_way;
  return f;
}
FaultSpec heal(Duration at) { return at_time(FaultKind::kHeal, at); }
FaultSpec crash(std::string target, Duration at, std::optional<Duration> restart_after, bool power_loss) {
  FaultSpec f = at_time(FaultKind::kCrash, at, std::move(target));
  f.restart_after = restart_after;
  f.power_loss = power_loss;
  return f;
}
FaultSpec failover(Duration at, std::string service) { return at_time(FaultKind::kFailover, at, std::move(service)); }
FaultSpec counter_reset(std::string target, Duration at, std::int64_t value) {
  FaultSpec f = at_time(FaultKind::kCounterReset, at, std::move(target));
  f.value = value;
  return f;
}
FaultSpec slow(std::string target, Duration at, Duration delay, Duration duration) {
  FaultSpec f = at_time(FaultKind::kSlow, at, std::move(target));
  f.delay = delay;
  f.duration = duration;
  return f;
}

}  // namespace fencesim::faults
