// report/history_porcupine.cpp — history.json: the register ops of a run's
// History as a Porcupine log.
//
// Porcupine (anishathalye/porcupine, model.go, v0.1.x/v1) checks a slice of
//   type Operation struct { ClientId int; Input interface{}; Call int64;
//                           Output interface{}; Return int64 }
// against a Model's Init/Step(state, input, output) -> (ok, new state).
// Each entry of "operations" is one Operation in snake_case JSON, times in
// ns: {"client_id", "input": {"op": "read"} or {"op": "cas", "from", "to"},
// "call", "output": {"ok": bool, "value"?}, "return"}. The Step a checker
// writes (docs/REPORTS.md): read ok → state == value; cas ok → state == from,
// then state = to; ok false → refused, no effect. Only register ops: the
// mutex ops are in history.edn. Porcupine needs a Return for every op, and
// every register op here has one (the copy answered).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fencesim/history_export.hpp"
#include "report/history_ops.hpp"

namespace fencesim {

namespace {

using history_export::Op;
using history_export::OpKind;
using history_export::Outcome;

std::string json_string(const std::string& raw) {
  return nlohmann::json(raw).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string input_text(const Op& op) {
  std::string key = op.key.empty() ? std::string() : ", \"key\": " + json_string(op.key);
  if (op.kind == OpKind::kRead) return "{\"op\": \"read\"" + key + "}";
  return fmt::format("{{\"op\": \"cas\", \"from\": {}, \"to\": {}{}}}", op.expected, op.value, key);
}

std::string output_text(const Op& op) {
  const bool ok = op.outcome == Outcome::kOk;
  if (op.kind == OpKind::kRead && ok) return fmt::format("{{\"ok\": true, \"value\": {}}}", op.value);
  return ok ? "{\"ok\": true}" : "{\"ok\": false}";
}

}  // namespace

std::string render_history_porcupine(const Scenario& s, const RunResult& r) {
  const std::vector<Op> ops = history_export::build_ops(s, r.history);
  std::string out = "{\n";
  out += "  \"format\": \"porcupine operations (fencesim docs/REPORTS.md)\",\n";
  out += fmt::format("  \"scenario\": {},\n  \"seed\": {},\n", json_string(s.name), r.seed);
  out += "  \"model\": \"cas-register\",\n";
  out += fmt::format("  \"initial\": {},\n", s.resource.initial);
  out += "  \"clients\": [";
  for (std::size_t i = 0; i < s.clients.size(); ++i) out += (i ? ", " : "") + json_string(s.clients[i].name);
  out += "],\n  \"operations\": [";
  bool first = true;
  for (const Op& op : ops) {
    if (op.kind != OpKind::kRead && op.kind != OpKind::kCas) continue;
    out += first ? "\n" : ",\n";
    first = false;
    out += fmt::format(
        "    {{\"client_id\": {}, \"client\": {}, \"input\": {}, \"call\": {}, \"output\": {}, \"return\": {}}}",
        op.process, json_string(s.clients[op.client].name), input_text(op), op.invoke.count(), output_text(op),
        op.complete.count());
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace fencesim
