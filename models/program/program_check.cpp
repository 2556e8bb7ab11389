// models/program/program_check.cpp — see program_check.hpp; the messages
// are docs/PROTOCOL.md's ("Resource programs").
#include "models/program/program_check.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/lock_service.hpp"
#include "models/words.hpp"

namespace fencesim::program {

namespace {

const std::string kLabel = "resource.program";

json optional_int(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

json request_json(const ResourceRequest& r) {
  json j{{"op", r.op == ResourceOp::kRead ? "read" : "write"},
         {"client", r.client},
         {"lock", bytes_to_json_text(r.lock)},
         {"token", optional_int(r.token)}};
  if (r.op == ResourceOp::kWrite) {
    j["value"] = r.value;
    j["value_read"] = optional_int(r.value_read);
    j["version_read"] = optional_int(r.version_read);
  }
  return j;
}

json state_json(const ResourceMarks& s) {
  json marks = json::object();
  for (const auto& [k, v] : s.marks) marks[k] = v;
  return json{{"value", s.value},
              {"version", s.version},
              {"last_written", s.last_written},
              {"last_seen", s.last_seen},
              {"marks", std::move(marks)}};
}

}  // namespace

ProgramCheck::ProgramCheck(sim::Simulation& sim, const Scenario& s, std::vector<std::string> copies,
                           std::vector<NodeGroup> groups)
    : sim_(sim),
      scenario_(s),
      copies_(std::move(copies)),
      groups_(std::move(groups)),
      compare_versions_(s.resource.compare_versions),
      fence_reads_(s.resource.fence_reads) {}

ProgramCheck::~ProgramCheck() = default;  // a channel still open kills its process

void ProgramCheck::start() {
  const ProgramSpec& p = *scenario_.resource.program;
  Launch l{p.command, p.env, p.cwd, p.yield_timeout, "resource", kLabel, "sim", {}};
  channel_ = launch(l);
  const std::string line = dump_message(init_message());
  if (!channel_->send(line)) {
    throw ProgramError(ProgramError::Kind::kFailure,
                       kLabel +
                           ": the program exited (status 0) at its init; a resource program answers every "
                           "check until the run's end");
  }
  answer(line, 0, nullptr);
}

json ProgramCheck::init_message() const {
  const sim::Node& first = sim_.node(*sim_.find_node(copies_.front()));
  json nodes = json::object();
  for (const NodeGroup& g : groups_) nodes[g.name] = g.nodes;
  json locks = json::array();
  if (service_descriptor(scenario_.lock.service()).takes_lock()) {
    locks.push_back(bytes_to_json_text(scenario_.lock.key));
    for (const std::string& k : scenario_.lock.keys) locks.push_back(bytes_to_json_text(k));
  }
  const ResourceSpec& r = scenario_.resource;
  return json{{"type", "init"},
              {"protocol", kProtocolVersion},
              {"role", "check"},
              {"client", "resource"},
              {"index", 0},
              {"restarts", 0},
              {"seed", fmt::format("{:016x}", sim_.rng("program/resource").next())},
              {"time", {{"wall", first.wall().count()}, {"monotonic", first.monotonic().count()}}},
              {"scenario", scenario_.name},
              {"service", to_string(scenario_.lock.service())},
              {"nodes", std::move(nodes)},
              {"lock", {{"keys", std::move(locks)}}},
              {"resource",
               {{"copies", copies_},
                {"kind", "program"},
                {"initial", r.initial},
                {"fence_reads", r.fence_reads},
                {"compare_versions", r.compare_versions}}}};
}

ResourceDecision ProgramCheck::decide(const PolicyContext& ctx, const ResourceRequest& req,
                                      ResourceMarks& state) const {
  const std::int64_t id = next_id_++;
  const std::string line =
      dump_message(json{{"type", "check"},
                        {"id", id},
                        {"copy", ctx.node()},
                        {"time", {{"wall", ctx.wall().count()}, {"monotonic", ctx.monotonic().count()}}},
                        {"request", request_json(req)},
                        {"state", state_json(state)}});
  if (!channel_ || !channel_->send(line)) {
    throw ProgramError(ProgramError::Kind::kFailure,
                       kLabel + ": the program exited (status 0) while the run needed it, before: " + quote_line(line));
  }
  return answer(line, id, &state);
}

void ProgramCheck::protocol_error(const std::string& what, const std::string& line) const {
  std::string msg = kLabel + ": the program broke the protocol (docs/PROTOCOL.md \"Resource programs\"): " + what;
  if (!line.empty()) msg += " in line: " + quote_line(line);
  throw ProgramError(ProgramError::Kind::kProtocol, msg);
}

namespace {

constexpr std::size_t kMaxMarks = 10000;
constexpr std::size_t kMaxMarkNameBytes = 200;

/// The decision's marks: an object of integers, by name.
std::map<std::string, std::int64_t> marks_field(const json& j) {
  const json& m = j.at("marks");
  if (!m.is_object()) throw BadField("\"marks\" must be an object of integers, e.g. {\"row-1\": 7}");
  if (m.size() > kMaxMarks) {
    throw BadField("at most " + std::to_string(kMaxMarks) + " marks, got " + std::to_string(m.size()));
  }
  std::map<std::string, std::int64_t> out;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& name = it.key();
    const bool plain = std::none_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '=' || c == ',';
    });
    if (name.empty() || name.size() > kMaxMarkNameBytes || !plain) {
      throw BadField("a mark's name is 1 to " + std::to_string(kMaxMarkNameBytes) +
                     " bytes without control characters, '=' or ',' (the trace shows \"row-1=3, row-2=2\"), got " +
                     quote_line(json(name).dump()));
    }
    out[name] = int64_value(it.value(), "the mark \"" + name + "\"");
  }
  return out;
}

}  // namespace

ResourceDecision ProgramCheck::answer(const std::string& delivery, std::int64_t id, ResourceMarks* state) const {
  std::optional<ResourceDecision> decision;
  for (int n = 0;; ++n) {
    if (n == kMaxLinesPerDelivery) protocol_error("more than 1,000,000 lines without a yield after one delivery", "");
    const std::optional<std::string> next = channel_->receive(delivery);
    if (!next) {
      throw ProgramError(
          ProgramError::Kind::kFailure,
          kLabel + ": the program exited (status 0) while the run needed it, after: " + quote_line(delivery));
    }
    const std::string& line = *next;
    json j;
    try {
      j = parse_line(line);
    } catch (const BadField& e) {
      protocol_error(e.what(), line);
    }
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      protocol_error("expected a JSON object with a \"type\"", line);
    }
    const std::string type = j["type"].get<std::string>();
    if (type == "yield") {
      if (id != 0 && !decision) protocol_error("a yield before the decision of check " + std::to_string(id), line);
      return decision.value_or(ResourceDecision{});
    }
    if (type != "decision") {
      protocol_error("a resource program sends only \"decision\" and \"yield\", got \"" + type + "\"", line);
    }
    if (id == 0) protocol_error("a decision after init, which asks for none", line);
    if (decision) protocol_error("a second decision for check " + std::to_string(id), line);
    try {
      const std::optional<std::int64_t> for_id = int_field(j, "id", true);
      if (*for_id != id) {
        throw BadField("the decision is for check " + std::to_string(*for_id) + "; the check asked is " +
                       std::to_string(id));
      }
      const std::optional<bool> accepted = bool_field(j, "accepted");
      if (!accepted) throw BadField("a decision needs \"accepted\", true or false");
      ResourceDecision d{*accepted, free_text_field(j, "reason", false)};
      if (!d.accepted && blank_text(d.reason)) {
        throw BadField("a rejection needs a \"reason\", visible text: the report and the timeline show it");
      }
      if (j.contains("marks")) state->marks = marks_field(j);
      if (auto v = int_field(j, "last_written", false)) state->last_written = *v;
      if (auto v = int_field(j, "last_seen", false)) state->last_seen = *v;
      decision = std::move(d);
    } catch (const BadField& e) {
      protocol_error(e.what(), line);
    }
  }
}

void ProgramCheck::finish() {
  if (!channel_) return;
  const sim::Node& first = sim_.node(*sim_.find_node(copies_.front()));
  channel_->end(dump_message(
      json{{"type", "end"}, {"time", {{"wall", first.wall().count()}, {"monotonic", first.monotonic().count()}}}}));
  output_ += channel_->output();
  channel_.reset();
}

}  // namespace fencesim::program
