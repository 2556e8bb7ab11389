// models/faults.hpp — the one table of fault kinds (docs/FORMAT.md,
// `faults` and `nemesis`).
//
// Every FaultKind has one FaultKindInfo entry that says everything the rest
// of fencesim needs to know about it:
//
//   name      the `kind` string of the format ("clock_jump")
//   keys      the keys a faults[] entry of this kind takes besides `at` and
//             `kind` (the loader refuses any other key and parses these)
//   nemesis   its place in the list of kinds the nemesis may draw
//             (1, 2, …; 0 = the nemesis cannot draw it)
//   apply     what happens when it fires, through a FaultEnv
//   end       when it ends (docs/FORMAT.md "Faults")
//   detail    the text of FaultRecord::detail ("for 5s, 500 ppm")
//   draw      how the nemesis fills in its parameters (models/nemesis.hpp
//             documents the order of the random draws)
//   write     its parameters as a faults[] entry, through a FaultWriter
//
//   const FaultKindInfo& info = fault_info(FaultKind::kPause);
//   for (const FaultKindInfo& k : fault_kinds()) ...   // in enum order
//
// Adding a kind: an enumerator in FaultKind (models/scenario.hpp), its
// fields in FaultSpec if it needs new ones, one entry in faults.cpp, the
// loader's parsing of its keys (loader/loader.cpp parse_fault_params), and
// the schema and docs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/history.hpp"
#include "models/key_writer.hpp"
#include "models/scenario.hpp"
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
};

/// Every kind, in FaultKind order.
const std::vector<FaultKindInfo>& fault_kinds();
const FaultKindInfo& fault_info(FaultKind k);
/// The kinds the nemesis may draw, in their `nemesis` order.
const std::vector<FaultKind>& nemesis_fault_kinds();

/// Fires `f` now: applies it through `env` and records its FaultRecord
/// (skipped, with the reason, if it could not take effect) with env.record().
void apply_fault(FaultEnv& env, const FaultSpec& f, const std::vector<FaultSpec>& all);
/// When `f` ends (the table's `end`).
std::optional<Time> fault_end(const FaultSpec& f, const std::vector<FaultSpec>& all);
/// FaultRecord::detail of `f` (the table's `detail`).
std::string fault_detail(const FaultSpec& f);
/// Writes `f` as a faults[] entry: "at", "kind", then its own keys.
void write_fault(const FaultSpec& f, FaultWriter& out);

}  // namespace fencesim
