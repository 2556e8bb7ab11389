// models/faults_rules.hpp — internal to models/faults.cpp: what each fault
// kind's entry in the table (models/faults.hpp, FaultKindInfo) points to
// for reading its keys, its rules, its length for the shrinker, its mark on
// the timelines and its notes. Defined in models/faults_rules.cpp, one
// block per kind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/faults.hpp"

namespace fencesim::fault_rules {

using Problem = std::optional<ScenarioProblem>;

// -- reading a faults[] entry (FaultKindInfo::parse) ------------------------
void parse_pause(NodeKeyReader& in, FaultSpec& f);
void parse_clock_jump(NodeKeyReader& in, FaultSpec& f);
void parse_clock_drift(NodeKeyReader& in, FaultSpec& f);
void parse_partition(NodeKeyReader& in, FaultSpec& f);
void parse_nothing(NodeKeyReader& in, FaultSpec& f);
void parse_crash(NodeKeyReader& in, FaultSpec& f);
void parse_failover(NodeKeyReader& in, FaultSpec& f);
void parse_counter_reset(NodeKeyReader& in, FaultSpec& f);
void parse_slow(NodeKeyReader& in, FaultSpec& f);
void parse_disk_stall(NodeKeyReader& in, FaultSpec& f);

// -- rules (FaultKindInfo::validate) ------------------------------------------
Problem validate_pause(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_clock_jump(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_clock_drift(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_partition(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_nothing(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_crash(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_failover(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_counter_reset(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
Problem validate_slow(const FaultSpec& f, const std::string& path, const FaultContext& ctx);
/// An etcd member (etcd-0 … or etcd-leader) of an etcd scenario.
Problem validate_disk_stall(const FaultSpec& f, const std::string& path, const FaultContext& ctx);

// -- the shrinker's length (FaultKindInfo::length, set_length) ----------------
std::optional<Duration> length_duration(const FaultSpec& f);
void set_length_duration(FaultSpec& f, Duration d);
std::optional<Duration> length_by(const FaultSpec& f);
void set_length_by(FaultSpec& f, Duration d);
std::optional<Duration> length_restart_after(const FaultSpec& f);
void set_length_restart_after(FaultSpec& f, Duration d);

// -- marks (FaultKindInfo::mark) ------------------------------------------------
FaultMark mark_pause(const FaultRecord& r);
FaultMark mark_clock_jump(const FaultRecord& r);
FaultMark mark_clock_drift(const FaultRecord& r);
FaultMark mark_partition(const FaultRecord& r);
FaultMark mark_crash(const FaultRecord& r);
FaultMark mark_slow(const FaultRecord& r);
FaultMark mark_disk_stall(const FaultRecord& r);
/// A diamond labelled with the kind's name (heal, a service's own fault).
FaultMark mark_event(const FaultRecord& r);

// -- notes (FaultKindInfo::notes, nemesis_notes) -------------------------------
/// A scripted heal when no partition is active heals nothing.
void notes_heal(const Scenario& s, std::vector<std::string>& out);
/// A nemesis max_duration below 2 ms leaves one slow fault to draw.
void nemesis_notes_slow(const Scenario& s, std::vector<std::string>& out);

}  // namespace fencesim::fault_rules
