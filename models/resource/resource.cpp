#include "models/resource/resource.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fencesim::resource {

namespace {
std::string token_text(std::optional<std::int64_t> t) { return t ? std::to_string(*t) : "none"; }
}  // namespace

std::string ReadRequest::describe() const { return "READ token=" + token_text(token); }
std::string WriteRequest::describe() const {
  return tag.empty() ? fmt::format("WRITE {} token={}", value, token_text(token))
                     : fmt::format("WRITE {} tag={} token={}", value, tag, token_text(token));
}

ResourceCopy::ResourceCopy(ResourceService& svc, sim::Node& node)
    : svc_(svc), node_(node), host_(node, "check/" + node.name()) {
  state_.value = svc.spec().initial;
  node_.set_behaviour(this);
}

namespace {
void hash_request(Fingerprint& f, const ResourceRequest& r, const ResourceMarks& s) {
  f.number(r.op == ResourceOp::kRead ? 0 : 1);
  f.text(r.client);
  f.maybe(r.token);
  f.maybe(r.version_read);
  f.maybe(r.value_read);
  f.number(r.value);
  f.time(r.at);
  f.text(r.lock);
  f.number(s.value);
  f.number(s.version);
  f.number(s.last_written);
  f.number(s.last_seen);
  for (const auto& [k, v] : s.marks) f.text(k), f.number(v);
}
}  // namespace

ResourceDecision ResourceCopy::decide(const ResourceRequest& req) {
  // The data is the copy's: what the check does to value and version is undone.
  const std::int64_t value = state_.value, version = state_.version;
  ResourceDecision d = policy_detail::call_policy(
      host_, svc_.check_name(), req.op == ResourceOp::kRead ? "decide(read)" : "decide(write)",
      [&](const PolicyContext& ctx) { return svc_.check().decide(ctx, req, state_); },
      [&](Fingerprint& f) { hash_request(f, req, state_); },
      [&](Fingerprint& f, const ResourceDecision& a) {
        f.number(a.accepted);
        f.text(a.reason);
        f.number(state_.last_written);
        f.number(state_.last_seen);
        for (const auto& [k, v] : state_.marks) f.text(k), f.number(v);
      });
  state_.value = value;
  state_.version = version;
  if (d.accepted) d.reason.clear();
  return d;
}

void ResourceCopy::use_row(const std::string& row) {
  if (row == row_) return;
  rows_[row_] = Row{state_.value, state_.version, tag_};
  auto it = rows_.find(row);
  if (it == rows_.end()) {
    state_.value = svc_.spec().initial;
    state_.version = 0;
    tag_.clear();
  } else {
    state_.value = it->second.value;
    state_.version = it->second.version;
    tag_ = it->second.tag;
  }
  row_ = row;
}

void ResourceCopy::on_message(const sim::Message& m) {
  if (const auto* r = m.as<ReadRequest>()) {
    read(m, *r);
  } else if (const auto* w = m.as<WriteRequest>()) {
    write(m, *w);
  } else if (const auto* e = m.as<EffectRequest>()) {
    effect(m, *e);
  } else if (const auto* f = m.as<Forward>()) {
    // Replication, not an acceptance: applied unconditionally.
    use_row(f->row);
    state_.value = f->value;
    state_.version = f->version;
    tag_ = f->tag;
    if (f->token) {
      state_.last_written = std::max(state_.last_written, *f->token);
      state_.last_seen = std::max(state_.last_seen, *f->token);
      if (!f->row.empty()) see(f->row, f->token);
    }
    if (f->marks) {
      state_.last_written = std::max(state_.last_written, f->marks->last_written);
      state_.last_seen = std::max(state_.last_seen, f->marks->last_seen);
      for (const auto& [k, v] : f->marks->marks) {
        auto [it, fresh] = state_.marks.emplace(k, v);
        if (!fresh) it->second = std::max(it->second, v);
      }
    }
  }
}

void ResourceCopy::read(const sim::Message& m, const ReadRequest& r) {
  auto reply = sim::make_payload<OpReply>();
  ResourceRequest req;
  req.op = ResourceOp::kRead;
  req.client = svc_.sim().node(m.from).name();
  use_row(svc_.row_of(req.client));
  req.lock = svc_.lock_name(req.client);
  req.token = r.token;
  req.at = svc_.sim().now();
  ResourceDecision d = decide(req);
  reply->accepted = d.accepted;
  reply->reason = std::move(d.reason);
  reply->value = state_.value;
  reply->version = state_.version;
  reply->tag = tag_;
  ResourceOpRecord rec;
  rec.kind = ResourceOpKind::kRead;
  rec.token = r.token;
  rec.value = state_.value;
  rec.tag = tag_;
  rec.lease_value = r.lease_value;
  rec.iteration = r.iteration;
  record(m, *reply, std::move(rec));
  if (reply->accepted) {
    ++svc_.accepted_reads;
  } else {
    ++svc_.rejected_reads;
  }
  node_.reply(m, reply);
}

void ResourceCopy::write(const sim::Message& m, const WriteRequest& w) {
  const ResourceSpec& spec = svc_.spec();
  auto reply = sim::make_payload<OpReply>();
  ResourceRequest req;
  req.op = ResourceOp::kWrite;
  req.client = svc_.sim().node(m.from).name();
  use_row(svc_.row_of(req.client));
  req.lock = svc_.lock_name(req.client);
  req.token = w.token;
  req.version_read = w.expected_version;
  req.value_read = w.read_value;
  req.value = w.value;
  req.at = svc_.sim().now();
  ResourceDecision d = decide(req);
  reply->accepted = d.accepted;
  reply->reason = d.accepted ? std::string() : d.reason.empty() ? std::string("rejected") : std::move(d.reason);
  ResourceOpRecord rec;
  rec.kind = ResourceOpKind::kWrite;
  rec.write = true;
  if (reply->accepted) {
    if (!w.tag.empty()) {
      rec.effect = fmt::format("version {} by {} replaces version {}{}", w.value, w.tag, state_.value,
                               tag_.empty() ? "" : " by " + tag_);
    }
    state_.value = w.value;
    tag_ = w.tag;
    ++state_.version;
  }
  reply->value = state_.value;
  reply->version = state_.version;
  reply->tag = tag_;
  rec.token = w.token;
  rec.read_value = w.read_value;
  rec.value = w.value;
  rec.tag = w.tag;
  rec.lease_value = w.lease_value;
  rec.iteration = w.iteration;
  record(m, *reply, std::move(rec));
  if (reply->accepted) {
    ++svc_.accepted_writes;
    forward(spec.kind == ResourceKind::kFenced && !svc_.custom() ? w.token : std::nullopt);
  } else {
    ++svc_.rejected_writes;
  }
  node_.reply(m, reply);
}

void ResourceCopy::record(const sim::Message& m, const OpReply& reply, ResourceOpRecord rec) {
  History& h = svc_.history();
  rec.at = svc_.sim().now();
  rec.sent = m.sent_at;
  rec.client = svc_.sim().node(m.from).name();
  rec.copy = node_.name();
  rec.version = state_.version;
  rec.accepted = reply.accepted;
  rec.reason = reply.reason;
  rec.last_written = state_.last_written;
  rec.last_seen = state_.last_seen;
  rec.marks = state_.marks;
  rec.lock = row_;
  const Time at = rec.at;
  const std::optional<std::int64_t> token = rec.token;
  h.resource_ops.push_back(std::move(rec));
  // Holder audit at every acceptance at a fenced copy (docs/REPORTS.md "Metrics");
  // with more than one lock, per lock: the holders of this row's lock against
  // the highest token of that lock accepted here.
  if (reply.accepted && svc_.audits()) {
    if (row_.empty()) {
      h.audit_holders(at, node_.name(), state_.last_seen);
    } else {
      h.audit_holders(at, node_.name(), see(row_, token), row_);
    }
  }
}

void ResourceCopy::forward(std::optional<std::int64_t> token) {
  if (svc_.copies().size() < 2) return;
  auto p = sim::make_payload<Pending>();
  p->fwd = sim::make_payload<Forward>();
  p->fwd->row = row_;
  p->fwd->value = state_.value;
  p->fwd->version = state_.version;
  p->fwd->token = token;
  p->fwd->tag = tag_;
  if (svc_.custom()) p->fwd->marks = state_;
  outbox_.push_back(p);
  node_.after(svc_.spec().replication_delay, [this, p] {
    if (p->sent) return;
    p->sent = true;
    for (sim::NodeId c : svc_.copies()) {
      if (c != node_.id()) node_.send(c, p->fwd);
    }
    outbox_.erase(std::remove(outbox_.begin(), outbox_.end(), p), outbox_.end());
  });
}

void ResourceCopy::on_restart() {
  // Durable outbox: what was not forwarded before the crash goes out now.
  std::vector<std::shared_ptr<Pending>> pending = std::move(outbox_);
  outbox_.clear();
  for (auto& p : pending) {
    if (p->sent) continue;
    p->sent = true;
    for (sim::NodeId c : svc_.copies()) {
      if (c != node_.id()) node_.send(c, p->fwd);
    }
  }
}

ResourceService::ResourceService(sim::Simulation& s, History& h, const ResourceSpec& spec,
                                 std::vector<sim::NodeId> copies, std::shared_ptr<const ResourceCheck> check)
    : sim_(s),
      history_(h),
      spec_(spec),
      ids_(std::move(copies)),
      check_(check ? std::move(check) : check_of(spec)),
      check_name_(check_->name()),
      audits_(takes_tokens(spec)) {
  for (sim::NodeId id : ids_) copies_.push_back(std::make_unique<ResourceCopy>(*this, sim_.node(id)));
}

ResourceService::~ResourceService() = default;

const std::string& ResourceService::row_of(const std::string& client) const {
  static const std::string kOne;
  auto it = rows_.find(client);
  return it == rows_.end() ? kOne : it->second;
}

std::string ResourceService::lock_name(const std::string& client) const {
  auto it = rows_.find(client);
  return it == rows_.end() ? lock_key_ : it->second;
}

void ResourceService::reset_marks(std::int64_t value) {
  for (auto& c : copies_) c->reset_marks(value);
}

}  // namespace fencesim::resource
