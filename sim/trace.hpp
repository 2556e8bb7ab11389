// sim/trace.hpp — structured trace of a run and its fingerprint.
//
// A trace event is (true time, node, kind, fields). Fields keep their
// insertion order, values are integers, strings or booleans — never floating
// point — so the JSON Lines rendering is byte-identical across machines.
// The fingerprint is FNV-1a over those lines: two runs with the same
// fingerprint produced the same trace (FoundationDB's "unseed" idea).
//
//   trace.add(now, "A", "grant", {{"token", 7}, {"value", "c0ffee"}});
//   trace.write_jsonl(out);  // {"t":123,"node":"A","kind":"grant","token":7,...}
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/time.hpp"

namespace sim {

using TraceValue = std::variant<std::int64_t, std::string, bool>;

struct TraceField {
  std::string key;
  TraceValue value;
  TraceField(std::string k, std::int64_t v) : key(std::move(k)), value(v) {}
  TraceField(std::string k, int v) : key(std::move(k)), value(static_cast<std::int64_t>(v)) {}
  TraceField(std::string k, std::uint64_t v) : key(std::move(k)), value(static_cast<std::int64_t>(v)) {}
  TraceField(std::string k, Duration v) : key(std::move(k)), value(v.count()) {}
  TraceField(std::string k, bool v) : key(std::move(k)), value(v) {}
  TraceField(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  TraceField(std::string k, const char* v) : key(std::move(k)), value(std::string(v)) {}
  TraceField(std::string k, std::string_view v) : key(std::move(k)), value(std::string(v)) {}
};

struct TraceEvent {
  Time time;
  std::string node;
  std::string kind;
  std::vector<TraceField> fields;
};

/// Escapes `s` as the inside of a JSON string (quotes not included).
std::string json_escape(std::string_view s);

class Trace {
 public:
  /// Recording can be switched off (benchmarks); the fingerprint then only
  /// covers what was recorded.
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  void add(Time t, std::string_view node, std::string_view kind, std::initializer_list<TraceField> fields = {});
  void add(TraceEvent e);

  const std::vector<TraceEvent>& events() const { return events_; }
  void clear() { events_.clear(); }

  /// One JSON object, no trailing newline: {"t":ns,"node":..,"kind":..,fields...}
  static std::string to_json_line(const TraceEvent& e);
  void write_jsonl(std::ostream& out) const;
  /// FNV-1a 64 over the JSON Lines rendering (each line plus '\n').
  std::uint64_t fingerprint() const;

 private:
  bool enabled_ = true;
  std::vector<TraceEvent> events_;
};

}  // namespace sim
