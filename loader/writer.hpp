// loader/writer.hpp — writes a Scenario back as scenario file text
// (docs/FORMAT.md, version 1), the inverse of the loader.
//
//   fencesim::LoadResult r = fencesim::load_scenario_file("scenarios/gc-pause.json");
//   std::string text = fencesim::write_scenario(*r.scenario);
//   // load_scenario_text(text, "x") gives a Scenario == *r.scenario, which
//   // runs to byte-identical reports.
//
//   fencesim::WriteOptions o;
//   o.materialize_nemesis = true;   // the nemesis draws become faults[]
//   std::string fixed = fencesim::write_scenario(*r.scenario, o);
//
// What is written: `version` 1, `scenario`, `seed` and `duration` always, the
// lock's `service` and `ttl` (the requested TTL, so the loader raises an etcd
// TTL the same way), Redis `replicas`/`sentinels` (or `redlock`), etcd `nodes`,
// the resource `kind`, each client's `name` and workload `kind`/`work` (and
// `block` for a sequence_allocator), each fault's required keys; every other
// value only where it differs from the format's default. A renew_interval of
// max(ttl / 3, 1 ns) is the default and is left out. Consecutive clients that
// differ only in their names `X-0`, `X-1`, … are written as one entry with
// `"count"`. Node lists are written expanded (one name per node, roles kept).
// Durations use sim::format_duration ("10s", "250ms", "1.5s"), which the
// loader parses back exactly. The text is JSON without comments, objects and
// arrays on one line when they fit in 100 columns, with a trailing newline.
//
// Exactness: the text loads to a Scenario equal (operator==, notes and
// origins included) to the one given, for every Scenario the loader can
// produce. A Scenario built in C++ round-trips when it is in that resolved
// form: faults' origins "faults[i]", lock.ttl what the loader resolves from
// lock.requested_ttl, keys that do not apply to a kind left at their
// defaults, notes as the loader makes them. `write_scenario_checked` loads the
// text back and says which part differs when it does not.
//
// Errors: write_scenario never throws for a Scenario (strings that are not
// UTF-8 are written with U+FFFD, which write_scenario_checked then reports).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace fencesim {

struct WriteOptions {
  /// Replace the nemesis with its draws (models/nemesis.hpp draw_nemesis):
  /// they are appended to faults[] in draw order and the nemesis block is
  /// dropped. run_scenario sorts faults stably by `at` after appending the
  /// draws to the scripted faults, so the materialized file runs the same
  /// faults in the same order; only each drawn fault's origin changes, from
  /// "nemesis#i" to "faults[k]". (A drawn partition also carries its isolated
  /// node as `target`, for the report; the format's partition has no target,
  /// so the materialized one has none.) Scripted faults whose `at` is a
  /// range get the start this seed draws (draw_fault_times), so that the
  /// written file is a fixed script.
  bool materialize_nemesis = false;
  /// Write this seed instead of Scenario::seed (applied before the nemesis is
  /// drawn, so the materialized faults are those of a run with this seed).
  std::optional<std::uint64_t> seed;
};

/// The scenario file text of `s` (see above).
std::string write_scenario(const Scenario& s, const WriteOptions& opt = {});

/// The same as a JSON document, keys in the order written.
nlohmann::ordered_json scenario_json(const Scenario& s, const WriteOptions& opt = {});

/// One faults[] entry as the format writes it: "at", "kind" and the keys its
/// kind takes (docs/FORMAT.md `faults[]`), without the origin. The single
/// place that turns a FaultSpec into file JSON.
nlohmann::ordered_json fault_entry_json(const FaultSpec& f);

/// The Scenario `write_scenario(s, opt)` describes: `s` with the seed of
/// `opt` and, when materializing, the draws appended to faults (origins
/// "faults[k]") and no nemesis. Loading the written text gives this.
Scenario written_scenario(const Scenario& s, const WriteOptions& opt = {});

struct WriteResult {
  std::string text;
  /// Set when the text does not load back to written_scenario(s, opt): the
  /// loader's one-line error, or which part differs, e.g.
  /// "written and loaded back, clients[2] differs".
  std::optional<std::string> error;
  bool ok() const { return !error.has_value(); }
};

/// write_scenario, then load the text back and compare.
WriteResult write_scenario_checked(const Scenario& s, const WriteOptions& opt = {});

}  // namespace fencesim
