// report/history_edn.cpp — history.edn: a run's History as a Jepsen history.
//
// The shape is Jepsen's operation map (jepsen-io/jepsen,
// jepsen/src/jepsen/history.clj, jepsen 0.3.x; knossos src/knossos/op.clj):
//   {:type :invoke, :f :acquire, :value nil, :process 0, :time 1000000, :index 0}
// :type is :invoke for the call and :ok / :fail / :info for its completion
// on the same :process; :time is ns; :index the position in the history.
// One map per line, as Jepsen's store writes history.edn. The ops and their
// meaning: fencesim/history_export.hpp. The models that read them are
// knossos.model/mutex (:acquire/:release) and
// knossos.model/cas-register (:read, :cas [old new]) in knossos 0.3.x
// src/knossos/model.clj: check each on its own ops (filter by :f).
#include <fmt/format.h>

#include "fencesim/history_export.hpp"
#include "report/history_ops.hpp"

namespace fencesim {

namespace {

using history_export::Event;
using history_export::Op;
using history_export::OpKind;
using history_export::Outcome;

/// An EDN string literal: a backslash before `"` and `\`, newlines escaped.
std::string edn_string(const std::string& raw) {
  std::string out = "\"";
  for (char c : raw) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* f_word(OpKind k) {
  switch (k) {
    case OpKind::kAcquire: return ":acquire";
    case OpKind::kRelease: return ":release";
    case OpKind::kRead: return ":read";
    case OpKind::kCas: return ":cas";
  }
  return ":unknown";
}

const char* type_word(const Event& e) {
  if (!e.completion) return ":invoke";
  switch (e.op->outcome) {
    case Outcome::kOk: return ":ok";
    case Outcome::kFail: return ":fail";
    case Outcome::kInfo: return ":info";
  }
  return ":info";
}

/// :value as Jepsen writes it: nil for the mutex and for a read's call (the
/// value is not known yet), the value a read returned, [old new] for a cas.
std::string value_text(const Event& e) {
  const Op& op = *e.op;
  if (op.kind == OpKind::kCas) return fmt::format("[{} {}]", op.expected, op.value);
  if (op.kind == OpKind::kRead && e.completion && op.outcome == Outcome::kOk) return std::to_string(op.value);
  return "nil";
}

std::string op_line(const Scenario& s, const Event& e, std::size_t index) {
  const Op& op = *e.op;
  std::string line = fmt::format("{{:type {}, :f {}, :value {}, :process {}, :time {}, :index {}", type_word(e),
                                 f_word(op.kind), value_text(e), op.process, e.at.count(), index);
  line += ", :client " + edn_string(s.clients[op.client].name);
  if (!op.key.empty()) line += ", :key " + edn_string(op.key);
  return line + "}\n";
}

}  // namespace

std::string render_history_edn(const Scenario& s, const RunResult& r) {
  const std::vector<Op> ops = history_export::build_ops(s, r.history);
  std::string out;
  out += "; fencesim history (docs/REPORTS.md \"Histories for outside checkers\")\n";
  out += fmt::format("; scenario {} seed {}\n", edn_string(s.name), r.seed);
  out += "; :acquire/:release -> knossos.model/mutex; :read/:cas -> knossos.model/cas-register";
  out += fmt::format(" with initial value {}\n", s.resource.initial);
  out += "; :key (when present) names the lock or row: check each key on its own\n";
  std::size_t index = 0;
  for (const Event& e : history_export::order_events(ops)) out += op_line(s, e, index++);
  return out;
}

}  // namespace fencesim
