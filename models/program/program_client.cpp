// models/program/program_client.cpp — see program_client.hpp; the messages
// are docs/PROTOCOL.md's.
#include "models/program/program_client.hpp"

#include <fmt/format.h>

#include "models/validate.hpp"

namespace fencesim::program {

namespace {

std::string hex16(std::uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

ProgramClient::ProgramClient(sim::Node& node, History& h, const Scenario& s, const ClientSpec& spec, std::size_t index,
                             std::string label, sim::NodeId copy, ProgramTargets targets)
    : node_(node),
      history_(h),
      scenario_(s),
      spec_(spec),
      index_(index),
      label_(std::move(label)),
      copy_(copy),
      targets_(std::move(targets)) {
  node_.set_behaviour(this);
}

ProgramClient::~ProgramClient() = default;  // a channel still open kills its process

void ProgramClient::start() {
  // A node timer, not the instant itself: a client paused at its start
  // starts when the pause ends, as a built-in client's process does.
  node_.sim().at(spec_.start, [this] {
    start_reached_ = true;
    if (node_.up()) node_.after(Duration{0}, [this] { launch_program(); });
  });
}

void ProgramClient::launch_program() {
  const ProgramSpec& p = *spec_.program;
  Launch l{p.command, p.env, p.cwd, p.yield_timeout, spec_.name, label_, "sim", {}};
  channel_ = launch(l);
  exited_ = false;
  used_ids_.clear();
  deliver(init_message());
}

json ProgramClient::init_message() const {
  // Each process gets its own stream: a restarted client does not replay
  // its predecessor's random choices.
  sim::Rng rng = node_.sim().rng("program/" + spec_.name + "/" + std::to_string(restarts_));
  json nodes = json::object();
  for (const NodeGroup& g : targets_.groups) nodes[g.name] = g.nodes;
  const std::string key = lock_of(scenario_.lock, spec_);
  const Duration ttl = client_ttl(scenario_.lock, spec_);
  json lock{{"key", bytes_to_json_text(key)},
            {"ttl", ttl.count()},
            {"counter_key", bytes_to_json_text(redis_counter_key_of(scenario_.lock, key))}};
  if (nodes.contains("sentinels") && !nodes["sentinels"].empty()) lock["sentinel_name"] = kSentinelPrimaryName;
  return json{{"type", "init"},
              {"protocol", kProtocolVersion},
              {"client", spec_.name},
              {"index", index_},
              {"restarts", restarts_},
              {"seed", hex16(rng.next())},
              {"scenario", scenario_.name},
              {"service", to_string(scenario_.lock.service())},
              {"nodes", nodes},
              {"lock", std::move(lock)},
              {"resource", {{"copy", spec_.resource}, {"kind", to_string(scenario_.resource.kind)}}},
              {"settings",
               {{"fencing", spec_.fencing},
                {"ttl", ttl.count()},
                {"renew_interval", spec_.renew_interval.count()},
                {"retry_interval", spec_.retry_interval.count()},
                {"command_timeout", spec_.command_timeout.count()}}}};
}

json ProgramClient::time_json() const {
  return json{{"wall", node_.wall().count()}, {"monotonic", node_.monotonic().count()}};
}

void ProgramClient::deliver(json msg) {
  if (!channel_ || exited_) return;
  msg["time"] = time_json();
  const std::string line = dump_message(std::move(msg));
  if (!channel_->send(line)) {
    exited_ = true;
    return;
  }
  for (int n = 0;; ++n) {
    if (n == kMaxLinesPerDelivery) {
      current_line_ = "";
      protocol_error("more than 1,000,000 lines without a yield after one delivery");
    }
    const std::optional<std::string> next = channel_->receive(line);
    if (!next) {
      exited_ = true;
      return;
    }
    if (handle(*next)) return;
  }
}

void ProgramClient::protocol_error(const std::string& what) const {
  std::string msg = label_ + ": the program broke the protocol (docs/PROTOCOL.md): " + what;
  if (!current_line_.empty()) msg += " in line: " + quote_line(current_line_);
  throw ProgramError(ProgramError::Kind::kProtocol, msg);
}

bool ProgramClient::handle(const std::string& line) {
  current_line_ = line;
  json j;
  try {
    j = parse_line(line);
  } catch (const BadField& e) {
    protocol_error(e.what());
  }
  if (!j.is_object()) protocol_error("expected a JSON object");
  const auto t = j.find("type");
  if (t == j.end() || !t->is_string()) protocol_error("expected a \"type\"");
  const std::string type = t->get<std::string>();
  try {
    if (type == "yield") return true;
    if (type == "held" || type == "released" || type == "lost") {
      handle_belief(type, j);
    } else if (type == "iteration") {
      handle_iteration(j);
    } else if (type == "note") {
      history_.note(node_.sim().now(), spec_.name, "program", free_text_field(j, "text", true));
    } else if (type == "timer") {
      handle_timer(j, fresh_id(j));
    } else if (type == "cancel") {
      handle_cancel(j);
    } else if (type == "now") {
      const std::int64_t id = fresh_id(j);
      if (!channel_->send(dump_message(json{{"type", "reply"}, {"id", id}, {"time", time_json()}}))) exited_ = true;
    } else if (const RequestKind* k = find_request_kind(type)) {
      handle_request(*k, j, fresh_id(j));
    } else if (type == "hello") {
      protocol_error("\"hello\" is only the first line of a process");
    } else {
      protocol_error("unknown message type \"" + type + "\"");
    }
  } catch (const BadField& e) {
    protocol_error(e.what());
  }
  return false;
}

std::int64_t ProgramClient::fresh_id(const json& j) {
  const auto it = j.find("id");
  std::int64_t id = 0;
  try {
    if (it != j.end()) id = int64_value(*it, "\"id\"");
  } catch (const BadField&) {
    id = 0;
  }
  if (id <= 0) protocol_error("a request needs an \"id\", a positive integer below 2^63");
  if (!used_ids_.insert(id).second) protocol_error("the id " + std::to_string(id) + " was used before");
  return id;
}

sim::NodeId ProgramClient::target_node(const RequestKind& kind, const json& j) const {
  const std::vector<std::string>& allowed = kind.to_resource ? targets_.resources : targets_.service_nodes;
  std::string name = kind.to_resource ? spec_.resource : (allowed.empty() ? "" : allowed.front());
  if (j.contains("node")) name = text_field(j, "node", true);
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    std::string list;
    for (const std::string& n : allowed) list += (list.empty() ? "" : ", ") + n;
    throw BadField("a " + std::string(kind.type) + " request goes to one of: " + (list.empty() ? "(none)" : list) +
                   "; \"" + name + "\" is not one");
  }
  return *node_.sim().find_node(name);
}

void ProgramClient::handle_request(const RequestKind& kind, const json& j, std::int64_t id) {
  const sim::NodeId to = target_node(kind, j);
  RequestContext ctx{spec_.name, belief_ ? history_.beliefs[*belief_].value : std::string(),
                     iteration_ ? history_.iterations[*iteration_].index : 0};
  sim::PayloadPtr body = kind.encode(j, id, ctx);
  const Duration timeout{int_field(j, "timeout", false).value_or(spec_.command_timeout.count())};
  if (timeout < Duration{0}) throw BadField("\"timeout\" must not be negative");
  if (ctx.answered_by_push) {
    // No reply comes: a pushed message later (an etcd watch's event).
    node_.send(to, std::move(body));
    pushes_[id] = Push{&kind, to};
    return;
  }
  Pending p{node_.send(to, std::move(body)), &kind, {}, false};
  if (timeout > Duration{0}) {
    const std::uint64_t gen = generation_;
    p.timeout = node_.after(timeout, [this, id, gen] {
      if (gen != generation_) return;
      auto it = pending_.find(id);
      if (it == pending_.end()) return;
      by_msg_.erase(it->second.message);
      pending_.erase(it);
      deliver(json{{"type", "reply"}, {"id", id}, {"error", "timeout"}});
    });
    p.has_timeout = true;
  }
  by_msg_.emplace(p.message, id);
  pending_.emplace(id, p);
}

void ProgramClient::handle_timer(const json& j, std::int64_t id) {
  sim::ClockKind clock = sim::ClockKind::kMonotonic;
  const std::string c = text_field(j, "clock", false);
  if (c == "wall") {
    clock = sim::ClockKind::kWall;
  } else if (!c.empty() && c != "monotonic") {
    throw BadField("\"clock\" must be \"monotonic\" or \"wall\", got \"" + c + "\"");
  }
  const auto after = int_field(j, "after", false);
  const auto at = int_field(j, "at", false);
  if (after.has_value() == at.has_value()) throw BadField("a timer needs exactly one of \"after\" and \"at\"");
  if (after && *after < 0) throw BadField("\"after\" must not be negative");
  if (after && !c.empty()) throw BadField("\"clock\" goes with \"at\"; \"after\" counts on the monotonic clock");
  const sim::Time reading = after ? node_.monotonic() + Duration{*after} : sim::Time{*at};
  const std::uint64_t gen = generation_;
  timers_[id] = node_.at_clock(clock, reading, [this, id, gen] {
    if (gen != generation_) return;
    timers_.erase(id);
    deliver(json{{"type", "timer"}, {"id", id}});
  });
}

void ProgramClient::handle_cancel(const json& j) {
  const std::int64_t id = *int_field(j, "id", true);
  if (auto t = timers_.find(id); t != timers_.end()) {
    node_.cancel(t->second);
    timers_.erase(t);
    return;
  }
  if (auto p = pushes_.find(id); p != pushes_.end()) {
    if (p->second.kind->cancel_push != nullptr) {
      if (sim::PayloadPtr stop = p->second.kind->cancel_push(id)) node_.send(p->second.to, std::move(stop));
    }
    pushes_.erase(p);
    return;
  }
  if (auto p = pending_.find(id); p != pending_.end()) {
    if (p->second.has_timeout) node_.cancel(p->second.timeout);
    by_msg_.erase(p->second.message);
    pending_.erase(p);
    return;
  }
  // An id already answered or fired: nothing is left to cancel; an id never
  // used is a mistake of the program's.
  if (used_ids_.count(id) == 0) protocol_error("cancel of the id " + std::to_string(id) + ", which was never used");
}

void ProgramClient::handle_belief(const std::string& type, const json& j) {
  const sim::Time now = node_.sim().now();
  if (type == "held") {
    if (belief_) protocol_error("\"held\" while a belief is open (send \"released\" or \"lost\" first)");
    belief_ = history_.begin_belief(now, spec_.name, text_field(j, "value", true), int_field(j, "token", false));
    return;
  }
  if (!belief_) return;  // nothing believed: nothing ends (a release after a loss)
  if (type == "released") {
    history_.end_belief(*belief_, now, "release");
  } else {
    const std::string reason = free_text_field(j, "reason", false);
    history_.end_belief(*belief_, now, reason.empty() ? "lease lost" : reason);
    ++history_.lease_losses;
  }
  belief_.reset();
}

void ProgramClient::handle_iteration(const json& j) {
  const std::string event = text_field(j, "event", true);
  const sim::Time now = node_.sim().now();
  if (event == "start") {
    if (iteration_) protocol_error("an iteration \"start\" while one is open (send its \"end\" first)");
    IterationRecord r;
    r.client = spec_.name;
    r.index = iterations_++;
    r.start = now;
    history_.iterations.push_back(r);
    iteration_ = history_.iterations.size() - 1;
    return;
  }
  if (event != "acquired" && event != "end") {
    throw BadField("\"event\" must be \"start\", \"acquired\" or \"end\", got \"" + event + "\"");
  }
  if (!iteration_) protocol_error("an iteration \"" + event + "\" without its \"start\"");
  IterationRecord& r = history_.iterations[*iteration_];
  if (event == "acquired") {
    r.acquired = now;
    r.acquire_sent = r.start;
    return;
  }
  r.success = bool_field(j, "success").value_or(false);
  r.outcome = free_text_field(j, "outcome", false);
  if (r.outcome.empty()) r.outcome = r.success ? "ok" : "failed";
  if (r.success) r.done = now;
  iteration_.reset();
}

void ProgramClient::on_push(const sim::Message& m) {
  for (const RequestKind& k : request_kinds()) {
    if (k.decode_push == nullptr) continue;
    std::optional<PushedAnswer> p = k.decode_push(m);
    if (!p) continue;
    auto it = pushes_.find(p->id);
    if (it == pushes_.end()) return;  // cancelled, or from before a crash
    if (!p->more) pushes_.erase(it);
    json msg = std::move(p->fields);
    msg["type"] = k.push_type;
    msg["id"] = p->id;
    deliver(std::move(msg));
    return;
  }
}

void ProgramClient::on_message(const sim::Message& m) {
  if (m.reply_to == 0) {
    on_push(m);  // other pushed messages (Sentinel's +switch-master) are not delivered in version 1
    return;
  }
  auto b = by_msg_.find(m.reply_to);
  if (b == by_msg_.end()) return;  // timed out, cancelled, or from before a crash
  const std::int64_t id = b->second;
  by_msg_.erase(b);
  auto p = pending_.find(id);
  const RequestKind* kind = p->second.kind;
  if (p->second.has_timeout) node_.cancel(p->second.timeout);
  pending_.erase(p);
  std::optional<json> result = kind->decode(m);
  if (!result) throw sim::ModelBug("a " + std::string(kind->type) + " request was answered with " + m.body->describe());
  deliver(json{{"type", "reply"}, {"id", id}, {"result", std::move(*result)}});
}

void ProgramClient::drop_process() {
  if (channel_) output_ += channel_->output();
  channel_.reset();
  ++generation_;
  pending_.clear();
  by_msg_.clear();
  timers_.clear();
  pushes_.clear();
}

void ProgramClient::on_crash() {
  const sim::Time now = node_.sim().now();
  drop_process();  // the engine has dropped the node's timers already
  if (belief_) history_.end_belief(*belief_, now, "crash");
  belief_.reset();
  if (iteration_ && !history_.iterations[*iteration_].success) history_.iterations[*iteration_].outcome = "crashed";
  iteration_.reset();
  ++restarts_;
}

void ProgramClient::on_restart() {
  if (start_reached_) launch_program();
}

void ProgramClient::finish() {
  if (!channel_) return;
  if (!exited_) channel_->end(dump_message(json{{"type", "end"}, {"time", time_json()}}));
  output_ += channel_->output();
  channel_.reset();
}

}  // namespace fencesim::program
