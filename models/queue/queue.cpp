// models/queue/queue.cpp — the work queue's node and its descriptor
// (semantics and sources: queue.hpp).
#include "models/queue/queue.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/rules.hpp"
#include "models/words.hpp"

namespace fencesim::queue {

QueueService::QueueService(sim::Simulation& s, History& h, const Scenario& sc, sim::NodeId node)
    : sim_(s), history_(h), spec_(sc.lock.queue()), lock_(sc.lock), node_(s.node(node)) {
  node_.set_behaviour(this);
  for (int i = 0; i < spec_.messages; ++i) {
    Message m;
    m.id = "msg-" + std::to_string(i);
    index_.emplace(m.id, messages_.size());
    messages_.push_back(m);
    history_.messages.push_back(MessageRecord{m.id, 0, std::nullopt, "", std::nullopt});
  }
}

Time QueueService::clock() const { return node_.clock(sim::ClockKind::kWall); }

void QueueService::refresh(std::size_t i) {
  Message& m = messages_[i];
  if (m.state != State::kInflight || clock() < m.invisible_until) return;
  m.state = State::kVisible;
  inflight_.erase(i);
  history_.lease_end(sim_.now(), m.receipt, "visibility timeout ran out on queue's wall clock",
                     LeaseEndCause::kExpired);
  history_.note(sim_.now(), node_.name(), "visible", m.id + " is visible again (receipt " + m.receipt + " expired)");
}

void QueueService::watch(std::size_t i) {
  const std::uint64_t gen = ++messages_[i].gen;
  sim_.observe_clock(node_.id(), sim::ClockKind::kWall, messages_[i].invisible_until, [this, i, gen] {
    if (messages_[i].gen == gen) refresh(i);
  });
}

QueueService::Message* QueueService::find(const std::string& id) {
  const auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  refresh(it->second);
  return &messages_[it->second];
}

void QueueService::on_message(const sim::Message& m) {
  if (m.as<ReceiveRequest>() != nullptr) {
    receive(m);
  } else if (const auto* c = m.as<ChangeVisibilityRequest>()) {
    change_visibility(m, *c);
  } else if (const auto* d = m.as<DeleteRequest>()) {
    remove(m, *d);
  }
}

void QueueService::receive(const sim::Message& req) {
  auto reply = sim::make_payload<ReceiveReply>();
  while (first_open_ < messages_.size() &&
         (messages_[first_open_].state == State::kDeleted || messages_[first_open_].state == State::kDead)) {
    ++first_open_;
  }
  // In index order, as a refresh of every message would be (the others are no-ops).
  for (const std::size_t i : std::vector<std::size_t>(inflight_.begin(), inflight_.end())) refresh(i);
  const std::string client = sim_.node(req.from).name();
  for (std::size_t i = first_open_; i < messages_.size(); ++i) {
    Message& m = messages_[i];
    // FIFO, one message group: nothing after a message still in flight.
    if (spec_.fifo && m.state == State::kInflight) break;
    if (m.state != State::kVisible) continue;
    if (spec_.max_receives > 0 && m.receives >= spec_.max_receives) {
      m.state = State::kDead;
      history_.messages[i].dead_lettered = sim_.now();
      history_.note(sim_.now(), node_.name(), "dead_letter",
                    fmt::format("{} moved to the dead-letter queue after {} receives (max_receives {})", m.id,
                                m.receives, spec_.max_receives));
      continue;
    }
    ++m.receives;
    m.state = State::kInflight;
    inflight_.insert(i);
    m.receipt = fmt::format("{}#{}", m.id, m.receives);
    m.invisible_until = clock() + spec_.visibility_timeout;
    watch(i);
    history_.messages[i].receives = m.receives;
    history_.grant(sim_.now(), client, m.receipt, m.receives, node_.name());
    reply->found = true;
    reply->message_id = m.id;
    reply->receipt = m.receipt;
    reply->receive_count = m.receives;
    break;
  }
  node_.reply(req, reply);
}

void QueueService::change_visibility(const sim::Message& req, const ChangeVisibilityRequest& r) {
  auto reply = sim::make_payload<QueueReply>();
  Message* m = find(r.message_id);
  if (m == nullptr || m->receipt != r.receipt || m->state == State::kDeleted || m->state == State::kDead) {
    reply->error = "ReceiptHandleIsInvalid: " + r.receipt + " is not the message's current receipt handle";
  } else if (m->state != State::kInflight) {
    reply->error = "MessageNotInflight: the visibility timeout of " + r.receipt + " has run out";
  } else {
    m->invisible_until = clock() + r.timeout;
    watch(static_cast<std::size_t>(m - messages_.data()));
    reply->ok = true;
  }
  node_.reply(req, reply);
}

void QueueService::remove(const sim::Message& req, const DeleteRequest& r) {
  auto reply = sim::make_payload<QueueReply>();
  Message* m = find(r.message_id);
  const bool current = m != nullptr && m->receipt == r.receipt && m->state != State::kDead;
  const bool deletable = current && (m->state == State::kInflight || (!spec_.fifo && m->state == State::kVisible));
  if (deletable) {
    const std::size_t i = static_cast<std::size_t>(m - messages_.data());
    if (m->state == State::kInflight) inflight_.erase(i);
    m->state = State::kDeleted;
    ++m->gen;
    history_.messages[i].deleted = sim_.now();
    history_.messages[i].deleted_by = sim_.node(req.from).name();
    history_.lease_end(sim_.now(), m->receipt, "deleted", LeaseEndCause::kDeleted);
    reply->ok = true;
  } else if (spec_.fifo) {
    reply->error = "InvalidParameterValue: the receipt handle " + r.receipt + " has expired";
  } else {
    // Standard queue: an older receipt handle "succeeds, but the message
    // will not be deleted" (also a second delete of a deleted message).
    reply->ok = true;
  }
  node_.reply(req, reply);
}

std::unique_ptr<client::LockClient> QueueService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                              std::size_t) {
  return client::make_queue_client(node, h, c, lock_, node_.id());
}

// ------------------------------------------------------------- descriptor --

namespace {

using namespace rules;  // problem, key, positive, … (models/rules.hpp)

/// The queue design's lock block (models/queue/queue.hpp).
Problem validate_queue(const Scenario& s) {
  const QueueSpec& q = s.lock.queue();
  FENCESIM_CHECK(positive("lock.visibility_timeout", q.visibility_timeout));
  if (q.visibility_timeout > 12h) {
    return problem("lock.visibility_timeout",
                   "at most 12h (SQS's maximum visibility timeout), got " + fmt_d(q.visibility_timeout));
  }
  FENCESIM_CHECK(in_range("lock.messages", q.messages, Ranges::kQueueMessages));
  FENCESIM_CHECK(in_range("lock.max_receives", q.max_receives, Ranges::kMaxReceives));
  if (s.lock.ttl != q.visibility_timeout || s.lock.requested_ttl != q.visibility_timeout) {
    return problem("lock.ttl", "lock.ttl (" + fmt_d(s.lock.ttl) + ") must equal lock.queue.visibility_timeout (" +
                                   fmt_d(q.visibility_timeout) + ") in the queue design: set both (the loader does)");
  }
  return std::nullopt;
}

class QueueDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kQueue; }
  std::string name() const override { return "queue"; }
  std::string display_name() const override { return "work queue"; }

  std::vector<std::string> group_names() const override { return {"queues"}; }
  /// "queues": the one durable queue node `queue`.
  std::vector<NodeGroup> groups(const Scenario&) const override { return {NodeGroup{"queues", {"queue"}}}; }

  std::string why_no_token(const Scenario&) const override {
    return "the queue's receive counts are per message, not one sequence of tokens (a fenced ledger compares them "
           "per message)";
  }

  /// A queue with more messages than its workers can ever receive: each
  /// iteration of a queue_worker is one message (issue #35).
  void notes(const Scenario& s, std::vector<std::string>& out) const override {
    std::int64_t capacity = 0;
    for (const ClientSpec& c : s.clients) capacity += c.workload.iterations;
    const std::int64_t messages = s.lock.queue().messages;
    if (messages <= capacity) return;
    out.push_back(fmt::format(
        "lock.messages is {} but the {} worker{} run at most {} iteration{} in all (one message each): at least {} "
        "message{} are never handled; raise the workers' iterations or add workers",
        messages, s.clients.size(), s.clients.size() == 1 ? "" : "s", capacity, capacity == 1 ? "" : "s",
        messages - capacity, messages - capacity == 1 ? "" : "s"));
  }

  bool has_lock_key() const override { return false; }
  bool per_message() const override { return true; }

  // Its keys of `lock`: "service" and these, none of a lock's.
  std::vector<std::string> lock_keys() const override {
    return {"visibility_timeout", "messages", "fifo", "max_receives"};
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> key_sections() const override {
    std::vector<std::string> keys{"service"};
    for (std::string& k : lock_keys()) keys.push_back(std::move(k));
    return {{"queue", std::move(keys)}};
  }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override {
    QueueSpec& q = l.queue();
    q.visibility_timeout =
        *in.duration(in.require("visibility_timeout", "how long a received message stays invisible, e.g. \"30s\""));
    // The design's lease TTL is the visibility timeout (renew_interval defaults to a third of it).
    l.ttl = l.requested_ttl = q.visibility_timeout;
    q.messages = static_cast<int>(*in.integer(
        in.require("messages", "how many messages are enqueued at time 0, e.g. 10"), Ranges::kQueueMessages));
    if (const auto x = in.boolean("fifo")) q.fifo = *x;
    if (const auto x = in.integer("max_receives", Ranges::kMaxReceives)) q.max_receives = static_cast<int>(*x);
  }
  void write(const LockSpec& l, KeyWriter& out) const override {
    const QueueSpec& q = l.queue();
    const QueueSpec qd;
    out.duration("visibility_timeout", q.visibility_timeout);
    out.integer("messages", q.messages);
    if (q.fifo != qd.fifo) out.boolean("fifo", q.fifo);
    if (q.max_receives != qd.max_receives) out.integer("max_receives", q.max_receives);
  }
  /// A lock's keys point at the visibility timeout; the keys of the lock
  /// services older than the queue (Redis, etcd) are "a lock setting".
  std::optional<std::pair<std::string, std::string>> refuse_key(const std::string& key) const override {
    if (key == "ttl") {
      return std::make_pair(
          std::string("\"ttl\" does not apply to \"service\": \"queue\"; the queue's lease is its visibility "
                      "timeout"),
          std::string("use \"visibility_timeout\""));
    }
    const auto in = [&key](const std::vector<std::string>& keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    if (key == "key" || key == "keys" || in(redis::descriptor().lock_keys()) || in(etcd::descriptor().lock_keys())) {
      return std::make_pair(quote_text(key) + " is a lock setting; it does not apply to \"service\": \"queue\"",
                            std::string());
    }
    return std::nullopt;
  }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const QueueSpec& q = s.lock.queue();
    out.duration("visibility_timeout", q.visibility_timeout);
    out.integer("messages", q.messages);
    out.boolean("fifo", q.fifo);
    out.integer("max_receives", q.max_receives);
  }
  std::string report_design(const Scenario& s) const override {
    const QueueSpec& q = s.lock.queue();
    return fmt::format(" ({} {}, {} messages, visibility timeout {} on the queue's wall clock, {})",
                       q.fifo ? "FIFO" : "standard", "queue", q.messages, sim::format_duration(q.visibility_timeout),
                       q.max_receives > 0 ? fmt::format("dead-letter queue after {} receives", q.max_receives)
                                          : std::string("no dead-letter queue"));
  }
  std::string summary_design(const Scenario& s) const override {
    const QueueSpec& q = s.lock.queue();
    return ServiceDescriptor::summary_design(s) +
           fmt::format(" {} messages {}{}", q.fifo ? "fifo" : "standard", q.messages,
                       q.max_receives > 0 ? fmt::format(" max_receives {}", q.max_receives) : std::string());
  }

  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource&) const override {
    return validate_queue(s);
  }

  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<QueueService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0).at(0));
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const QueueDescriptor kQueue;
  return kQueue;
}

}  // namespace fencesim::queue
