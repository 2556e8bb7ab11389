// loader/sections.hpp — one function per section of a scenario file
// (internal to loader/): each reads its section of `root` into `s` (and what
// a rule needs of the file's spelling into `src`), or ends the load with a
// Failure (loader/json_reader.hpp). loader.cpp calls them in file order and
// checks each section's rules (models/validate.hpp) right after it, so a file
// gets its first problem first. The faults and the nemesis are read in
// loader.cpp itself (they need the node names of the whole scenario).
#pragma once

#include "loader/json_reader.hpp"
#include "loader/keys.hpp"
#include "models/scenario.hpp"
#include "models/validate.hpp"

namespace fencesim::loading {

void load_top(const json& root, Scenario& s, ScenarioSource& src);      ///< section_top.cpp
void load_network(const json& root, Scenario& s, ScenarioSource& src);  ///< section_top.cpp
/// `lock`: the common keys here, the service's own through its descriptor's
/// `read` (models/lock_service.hpp).
void load_lock(const json& root, Scenario& s, ScenarioSource& src);      ///< section_lock.cpp
void load_resource(const json& root, Scenario& s, ScenarioSource& src);  ///< section_resource.cpp
void load_clients(const json& root, Scenario& s, ScenarioSource& src);   ///< section_clients.cpp
void load_expect(const json& root, Scenario& s, ScenarioSource& src);    ///< section_expect.cpp
/// A `program` object at `path` (clients[].program, resource.program); section_clients.cpp.
ProgramSpec load_program(const json& v, const std::string& path);

}  // namespace fencesim::loading
