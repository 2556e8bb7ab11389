#include "sim/trace.hpp"

#include <fmt/format.h>

#include "sim/rng.hpp"
#include "sim/text.hpp"

namespace sim {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {  // (DEL is valid JSON: kept)
          append_escaped_control(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void Trace::add(Time t, std::string_view node, std::string_view kind, std::initializer_list<TraceField> fields) {
  if (!enabled_) return;
  events_.push_back(TraceEvent{t, std::string(node), std::string(kind), std::vector<TraceField>(fields)});
}

void Trace::add(TraceEvent e) {
  if (!enabled_) return;
  events_.push_back(std::move(e));
}

std::string Trace::to_json_line(const TraceEvent& e) {
  std::string out =
      fmt::format(R"({{"t":{},"node":"{}","kind":"{}")", e.time.count(), json_escape(e.node), json_escape(e.kind));
  for (const TraceField& f : e.fields) {
    out += fmt::format(R"(,"{}":)", json_escape(f.key));
    if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
      out += fmt::format("{}", *i);
    } else if (const auto* s = std::get_if<std::string>(&f.value)) {
      out += '"' + json_escape(*s) + '"';
    } else {
      out += std::get<bool>(f.value) ? "true" : "false";
    }
  }
  out += '}';
  return out;
}

void Trace::write_jsonl(std::ostream& out) const {
  for (const TraceEvent& e : events_) out << to_json_line(e) << '\n';
}

std::uint64_t Trace::fingerprint() const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const TraceEvent& e : events_) {
    h = fnv1a64(to_json_line(e), h);
    h = fnv1a64("\n", h);
  }
  return h;
}

}  // namespace sim
