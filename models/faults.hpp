// models/faults.hpp — the one table of fault kinds (docs/FORMAT.md,
// `faults` and `nemesis`).
//
// Every FaultKind has one FaultKindInfo entry that says everything the rest
// of fencesim needs to know about it:
//
//   name      the `kind` string of the format ("clock_jump")
//   keys      the keys a faults[] entry of this kind takes besides `at` and
//             `kind` (the loader refuses any other key)
//   nemesis   its place in the list of kinds the nemesis may draw
//             (1, 2, …; 0 = the nemesis cannot draw it)
//   apply     what happens when it fires, through a FaultEnv
//   end       when it ends (docs/FORMAT.md "Faults")
//   detail    the text of FaultRecord::detail ("for 5s, 500 ppm")
//   draw      how the nemesis fills in its parameters (models/nemesis.hpp
//             documents the order of the random draws)
//   write     its parameters as a faults[] entry, through a FaultWriter
//   parse     reads its keys, through the loader's NodeKeyReader (models/key_reader.hpp)
//             (models/key_reader.hpp)
//   validate  its rules, through a FaultContext (models/validate.cpp)
//   length, set_length   what the shrinker shortens (explore/shrink.cpp)
//   mark      how the timelines show it (report/timeline.cpp, terminal.cpp)
//   notes, nemesis_notes, whole_group   its notes; a nemesis group draw
//
//   const FaultKindInfo& info = fault_info(FaultKind::kPause);
//   for (const FaultKindInfo& k : fault_kinds()) ...   // in enum order
//   ScenarioBuilder(...).fault(faults::pause("A", 2s, 12s));
//
// Adding a kind: an enumerator in FaultKind (models/scenario.hpp), its
// fields in FaultSpec if it needs new ones, one entry in faults.cpp whose
// parse / validate / length / mark functions live in faults_rules.cpp
// (declared in faults_rules.hpp), and the schema and docs; no change in the
// loader, the rules, the shrinker or the reports (docs/ARCHITECTURE.md
// "Adding a fault kind"). A kind that exists only in a test is registered
// with register_fault_kind (tests/models/fake_fault).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/history.hpp"
#include "models/key_reader.hpp"
#include "models/key_writer.hpp"
#include "models/scenario.hpp"
#include "models/validate.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

namespace fencesim {

/// What a fault may do to a running world: the verbs FaultKindInfo::apply
/// is written in. Two worlds implement them: the simulated one
/// (models/sim_fault_env.hpp, over sim::Simulation) and the real stack
/// (real/fault_env.hpp: signals, the runner's TCP proxies, the clock shim,
/// Sentinel), so that one table drives both.
///
/// Nodes are names (what FaultRecord::target records), as resolve()
/// returns them. A verb this world cannot carry out returns false (nullopt)
/// with `why`, which becomes the fault's skip reason. Durations are
/// scenario time.
class FaultEnv {
 public:
  virtual ~FaultEnv() = default;
  /// The instant the fault fires, in scenario time.
  virtual Time now() = 0;
  /// Appends a fired (or skipped) fault's record to the run's History.
  virtual void record(FaultRecord rec) = 0;
  /// A single-node target: a node name, or a role alias ("redis-primary",
  /// "etcd-leader") resolved now, at fire time, to the node's name.
  /// nullopt (and `why`) when there is no such node at the moment.
  virtual std::optional<std::string> resolve(const std::string& target, std::string& why) = 0;
  /// Runs `then` `d` after now, as a fault event (before any other event of
  /// its instant): how a fault's end is scheduled (a restart, a drift back
  /// to 0, a partition's or a slowdown's end).
  virtual void after(Duration d, std::function<void(FaultEnv&)> then) = 0;

  /// Stops `node` for `d`; the world resumes it at the end by itself (the
  /// simulation's pause; SIGSTOP, then SIGCONT).
  virtual bool pause(const std::string& node, Duration d, std::string& why) = 0;
  /// Kills `node` (`power_loss`: what it had not written to disk is lost).
  virtual bool crash(const std::string& node, bool power_loss, std::string& why) = 0;
  /// Starts a crashed `node` again.
  virtual bool restart(const std::string& node, std::string& why) = 0;
  /// Steps `node`'s wall and/or monotonic clock by `by` (negative: back).
  virtual bool clock_jump(const std::string& node, Duration by, ClockSelect clock, std::string& why) = 0;
  /// Sets `node`'s clock rate error in parts per million (0: the true rate).
  virtual bool set_drift(const std::string& node, std::int64_t ppm, std::string& why) = 0;
  /// Starts a partition between node groups, or isolating `isolate`
  /// (docs/FORMAT.md "partition"); its id for end_partition.
  virtual std::optional<std::uint64_t> partition(const std::vector<std::vector<std::string>>& groups,
                                                 const std::vector<std::string>& isolate, bool one_way,
                                                 std::string& why) = 0;
  /// Ends partition `id` (one already ended or healed: nothing).
  virtual void end_partition(std::uint64_t id) = 0;
  /// Ends every partition.
  virtual void heal() = 0;
  /// Adds `delay` to every message to or from `node`; its id for end_slow.
  virtual std::optional<std::uint64_t> slow(const std::string& node, Duration delay, std::string& why) = 0;
  /// Ends the slowdown `id` (`delay` on `node`).
  virtual void end_slow(const std::string& node, Duration delay, std::uint64_t id) = 0;
  /// A fault the lock service itself carries out: failover, and
  /// counter_reset of the service's token counter (target "redis").
  /// false, with `why`, when the service cannot (the fault is then skipped).
  virtual bool apply_service_fault(const FaultSpec& f, std::string& why) = 0;
  /// counter_reset of "resource": every copy's marks are set to `value`.
  virtual void reset_resource_marks(std::int64_t value) = 0;
};

/// Receives a fault's parameters as the format writes them (report.json's
/// nemesis_draws): a KeyWriter (models/key_writer.hpp).
using FaultWriter = KeyWriter;

/// What a kind's rules (FaultKindInfo::validate) ask of the scenario:
/// models/validate.cpp implements it over the scenario's node directory,
/// with the loader's words (a file and a built Scenario get the same error).
class FaultContext {
 public:
  virtual ~FaultContext() = default;
  virtual const Scenario& scenario() const = 0;
  /// A single node or a role alias that can name a node here ("unknown
  /// node …", "… is a group; a target is a single node or a role …").
  virtual std::optional<ScenarioProblem> target(const std::string& name, const std::string& path) const = 0;
  /// An expanded node list: node names and role aliases, not empty.
  virtual std::optional<ScenarioProblem> nodes(const std::vector<std::string>& list, const std::string& path) const = 0;
  /// A fault the lock service named by f.target carries out (failover,
  /// counter_reset of "redis"): refused at `path` when the scenario runs
  /// another service, or when that service says why not.
  virtual std::optional<ScenarioProblem> service_fault(const FaultSpec& f, const std::string& path) const = 0;
};

/// How the timeline (report/timeline.cpp) draws a fired fault on the lanes,
/// and what the terminal timeline (report/terminal.cpp) adds at its end.
struct FaultMark {
  /// The drawing: what covers a lane from the start to the end, and the
  /// symbol at the start. Lanes are the target's unless said otherwise.
  enum class Look {
    kStopped,  ///< the lane hatched, the label only (pause: nothing runs)
    kDown,     ///< the lane dark, a cross (crash: the node is down)
    kCut,      ///< every lane the detail names hatched, a diamond on the first (partition)
    kClock,    ///< a triangle (clock_jump, clock_drift)
    kSlowed,   ///< a thin bar along the lane's foot, the label only (slow)
    kEvent,    ///< a diamond; a service's own fault (target "redis") on the service's first node
  };
  Look look = Look::kEvent;
  /// The text beside the mark ("paused", "clock wall clock by 25s").
  std::string label;
  /// The terminal timeline's line when it ends ("resumes"); "" for none.
  /// Overlapping faults of this kind on one node merge (the engine resumes
  /// a paused node at the latest end): only the last one to end gets it.
  const char* end_line = "";
};

/// What a fault kind acts on: a process (pause, crash), the links between
/// nodes (partition, heal, slow), a node's clocks (clock_jump, clock_drift),
/// or the lock service itself (failover, counter_reset: the service applies
/// it, LockService::apply_fault).
enum class FaultFamily { kProcess, kLink, kClock, kService };

struct FaultKindInfo {
  FaultKind kind;
  const char* name;
  /// Keys besides `at` and `kind`, in the order the docs list them.
  std::vector<std::string_view> keys;
  /// Position in the nemesis kinds list (1-based); 0 = not drawn.
  int nemesis = 0;
  /// Carries the fault out now, through the env's verbs. Returns the skip
  /// reason when it could not, nullopt when it took effect. May set
  /// `rec.target` (the node a role alias resolved to).
  std::optional<std::string> (*apply)(FaultEnv& env, const FaultSpec& f, FaultRecord& rec);
  /// When `f` ends; nullopt: never. `all` is every fault of the run (a
  /// partition without a duration ends at the next heal).
  std::optional<Time> (*end)(const FaultSpec& f, const std::vector<FaultSpec>& all);
  /// FaultRecord::detail ("" when there is nothing to say).
  std::string (*detail)(const FaultSpec& f);
  /// Nemesis only (null otherwise): fills in the parameters of `f`, whose
  /// at, kind and target are set; `d` is the drawn length (step 4 of the
  /// draw order in nemesis.hpp), `max_duration` the nemesis's. Draws from
  /// `rng` only as nemesis.hpp documents (step 6).
  void (*draw)(FaultSpec& f, Duration d, Duration max_duration, sim::Rng& rng);
  /// Writes the keys of `keys` that `f` sets, as a faults[] entry has them.
  void (*write)(const FaultSpec& f, FaultWriter& out);

  // What the loader, the rules, the shrinker and the timelines ask of a
  // kind (issue #30): no other file switches on FaultKind for these.

  /// Reads the keys of `keys` from a faults[] entry into `f` (its at, kind
  /// and origin are set) through the loader's NodeKeyReader (models/key_reader.hpp); a wrong value
  /// stops the load there with its JSON path. Checks what the file's shape
  /// alone decides (both "groups" and "isolate"); the rest is `validate`'s.
  void (*parse)(NodeKeyReader& in, FaultSpec& f);
  /// This kind's rules (docs/FORMAT.md "Faults") for `f` at `path`
  /// ("faults[2]"), in the loader's words; `at` is validate_faults' own.
  std::optional<ScenarioProblem> (*validate)(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
  /// The length the shrinker's step 2 shortens (explore/shrink.hpp), e.g.
  /// a pause's duration or a clock jump's |by|; nullopt when `f` has none.
  /// Null for a kind without a length (then `set_length` is null too).
  std::optional<Duration> (*length)(const FaultSpec& f);
  /// Sets that length to `d` (> 0), keeping a clock jump's sign.
  void (*set_length)(FaultSpec& f, Duration d);
  /// How the timeline and the terminal timeline show a fired fault.
  FaultMark (*mark)(const FaultRecord& r);
  /// Notes (docs/FORMAT.md "Notes") on faults of this kind that have no
  /// effect; null: none. scenario_notes adds them in table order.
  void (*notes)(const Scenario& s, std::vector<std::string>& out);
  /// Notes when the nemesis draws this kind (null: none), after the
  /// nemesis's own note.
  void (*nemesis_notes)(const Scenario& s, std::vector<std::string>& out);
  /// A nemesis draw on a group (nemesis.groups) is one fault whose
  /// `isolate` is the whole group (a partition: one cut around it), not the
  /// same fault on each of its nodes.
  bool whole_group = false;
  FaultFamily family = FaultFamily::kService;
  /// The target's process dies (a crash): what it held in memory is gone.
  bool kills = false;
  /// fencesim-real carries it out (real/fault_env.cpp); its own rules of
  /// what it can make real are real_unsupported_reason's.
  bool in_real_stack = false;
};

/// Every kind, in FaultKind order.
const std::vector<FaultKindInfo>& fault_kinds();
const FaultKindInfo& fault_info(FaultKind k);
/// The kinds the nemesis may draw, in their `nemesis` order.
const std::vector<FaultKind>& nemesis_fault_kinds();
/// Adds a kind after the built-in ones (tests use it for a fake kind):
/// `info.kind` must be the next value, static_cast<FaultKind>(fault_kinds().size()),
/// and its name new; throws std::invalid_argument otherwise. Every function
/// but `draw` must be set (`length`/`set_length`, `notes`, `nemesis_notes`
/// may be null). Not thread-safe: call before any run; references from
/// fault_kinds() and fault_info() taken before it are invalid after.
void register_fault_kind(FaultKindInfo info);

/// Fires `f` now: applies it through `env` and records its FaultRecord
/// (skipped, with the reason, if it could not take effect) with env.record().
void apply_fault(FaultEnv& env, const FaultSpec& f, const std::vector<FaultSpec>& all);
/// When `f` ends (the table's `end`).
std::optional<Time> fault_end(const FaultSpec& f, const std::vector<FaultSpec>& all);
/// FaultRecord::detail of `f` (the table's `detail`).
std::string fault_detail(const FaultSpec& f);
/// Writes `f` as a faults[] entry: "at", "kind", then its own keys.
void write_fault(const FaultSpec& f, FaultWriter& out);

/// One fault of each kind, as a faults[] entry of docs/FORMAT.md "Faults"
/// would give it (ScenarioBuilder's fault functions build through these).
/// Times in sim::Duration; `at` is when it starts. Nothing is checked here:
/// validate_faults (models/validate.hpp) does.
namespace faults {
FaultSpec pause(std::string target, Duration at, Duration duration);
FaultSpec clock_jump(std::string target, Duration at, Duration by, ClockSelect clock = ClockSelect::kWall);
FaultSpec clock_drift(std::string target, Duration at, std::int64_t ppm,
                      std::optional<Duration> duration = std::nullopt);
FaultSpec partition(Duration at, std::vector<std::vector<std::string>> groups,
                    std::optional<Duration> duration = std::nullopt, bool one_way = false);
FaultSpec isolate(Duration at, std::vector<std::string> nodes, std::optional<Duration> duration = std::nullopt,
                  bool one_way = false);
FaultSpec heal(Duration at);
FaultSpec crash(std::string target, Duration at, std::optional<Duration> restart_after = std::nullopt,
                bool power_loss = false);
/// `service`: the lock service that fails over ("redis": Sentinel promotes a replica).
FaultSpec failover(Duration at, std::string service = "redis");
/// `target`: a service's token counter ("redis") or "resource" (the stored marks).
FaultSpec counter_reset(std::string target, Duration at, std::int64_t value = 0);
FaultSpec slow(std::string target, Duration at, Duration delay, Duration duration);
}  // namespace faults

}  // namespace fencesim
