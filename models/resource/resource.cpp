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

ResourceCopy::ResourceCopy(ResourceService& svc, sim::Node& node) : svc_(svc), node_(node), value_(svc.spec().initial) {
  node_.set_behaviour(this);
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
    value_ = f->value;
    version_ = f->version;
    tag_ = f->tag;
    if (f->token) {
      last_written_ = std::max(last_written_, *f->token);
      last_seen_ = std::max(last_seen_, *f->token);
    }
  }
}

void ResourceCopy::read(const sim::Message& m, const ReadRequest& r) {
  const ResourceSpec& spec = svc_.spec();
  auto reply = sim::make_payload<OpReply>();
  reply->accepted = true;
  if (spec.kind == ResourceKind::kFenced && spec.fence_reads) {
    if (!r.token) {
      reply->accepted = false;
      reply->reason = "read without a token";
    } else if (*r.token < last_seen_) {
      reply->accepted = false;
      reply->reason = fmt::format("token {} < last_seen {}", *r.token, last_seen_);
    } else {
      last_seen_ = *r.token;
    }
  }
  reply->value = value_;
  reply->version = version_;
  reply->tag = tag_;
  ResourceOpRecord rec;
  rec.kind = ResourceOpKind::kRead;
  rec.token = r.token;
  rec.value = value_;
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

std::string ResourceCopy::refusal(const WriteRequest& w) const {
  const ResourceSpec& spec = svc_.spec();
  switch (spec.kind) {
    case ResourceKind::kUnfenced:
    case ResourceKind::kIdempotent: break;  // the queue's ledger (ledger.cpp); its register is never written
    case ResourceKind::kFenced:
      if (!w.token) return "write without a token";
      if (*w.token < last_seen_) return fmt::format("token {} < last_seen {}", *w.token, last_seen_);
      if (spec.check == FenceCheck::kStrict ? *w.token <= last_written_ : *w.token < last_written_) {
        return fmt::format("token {} {} last_written {}", *w.token, spec.check == FenceCheck::kStrict ? "<=" : "<",
                           last_written_);
      }
      break;
    case ResourceKind::kCas:
      if (!w.expected_version || *w.expected_version != version_) {
        return fmt::format("version {} != {}", w.expected_version ? *w.expected_version : -1, version_);
      }
      break;
  }
  return {};
}

void ResourceCopy::write(const sim::Message& m, const WriteRequest& w) {
  const ResourceSpec& spec = svc_.spec();
  auto reply = sim::make_payload<OpReply>();
  reply->reason = refusal(w);
  reply->accepted = reply->reason.empty();
  ResourceOpRecord rec;
  rec.kind = ResourceOpKind::kWrite;
  rec.write = true;
  if (reply->accepted) {
    if (!w.tag.empty()) {
      rec.effect = fmt::format("version {} by {} replaces version {}{}", w.value, w.tag, value_,
                               tag_.empty() ? "" : " by " + tag_);
    }
    value_ = w.value;
    tag_ = w.tag;
    ++version_;
    if (spec.kind == ResourceKind::kFenced) {
      last_written_ = *w.token;
      last_seen_ = std::max(last_seen_, *w.token);
    }
  }
  reply->value = value_;
  reply->version = version_;
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
    forward(spec.kind == ResourceKind::kFenced ? w.token : std::nullopt);
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
  rec.version = version_;
  rec.accepted = reply.accepted;
  rec.reason = reply.reason;
  rec.last_written = last_written_;
  rec.last_seen = last_seen_;
  const Time at = rec.at;
  h.resource_ops.push_back(std::move(rec));
  // Holder audit at every acceptance at a fenced copy (docs/REPORTS.md "Metrics").
  if (reply.accepted && svc_.spec().kind == ResourceKind::kFenced) h.audit_holders(at, node_.name(), last_seen_);
}

void ResourceCopy::forward(std::optional<std::int64_t> token) {
  if (svc_.copies().size() < 2) return;
  auto p = sim::make_payload<Pending>();
  p->fwd = sim::make_payload<Forward>();
  p->fwd->value = value_;
  p->fwd->version = version_;
  p->fwd->token = token;
  p->fwd->tag = tag_;
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
                                 std::vector<sim::NodeId> copies)
    : sim_(s), history_(h), spec_(spec), ids_(std::move(copies)) {
  for (sim::NodeId id : ids_) copies_.push_back(std::make_unique<ResourceCopy>(*this, sim_.node(id)));
}

ResourceService::~ResourceService() = default;

void ResourceService::reset_marks(std::int64_t value) {
  for (auto& c : copies_) c->reset_marks(value);
}

}  // namespace fencesim::resource
