// models/key_writer.hpp — settings written out key by key, without JSON.
//
// The models know no JSON (models/scenario.hpp is plain structs); what they
// own of a file or a report — a fault's parameters, a lock service's
// settings — they hand to a KeyWriter, in the order the output lists them.
// The loader's writer (`fencesim write`) and the report (report.json)
// implement it over nlohmann::ordered_json, each choosing how a duration
// reads ("10s" in a scenario file, {"ns", "text"} in a report).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace fencesim {

class KeyWriter {
 public:
  virtual ~KeyWriter() = default;
  virtual void text(std::string_view key, const std::string& value) = 0;
  virtual void integer(std::string_view key, std::int64_t value) = 0;
  virtual void boolean(std::string_view key, bool value) = 0;
  virtual void duration(std::string_view key, sim::Duration value) = 0;
  /// A list of strings (node names, keys).
  virtual void nodes(std::string_view key, const std::vector<std::string>& value) = 0;
  virtual void node_groups(std::string_view key, const std::vector<std::vector<std::string>>& value) = 0;
  /// A key whose value is null ("no version": the model's own profile).
  virtual void null_value(std::string_view key) = 0;
  /// A nested object whose keys `fill` writes.
  virtual void object(std::string_view key, const std::function<void(KeyWriter&)>& fill) = 0;
};

}  // namespace fencesim
