// models/resource/ledger.cpp — the resource copy as the queue design's ledger
// of effects (rules: resource.hpp).
#include <fmt/format.h>

#include "models/resource/resource.hpp"

namespace fencesim::resource {

std::string EffectRequest::describe() const {
  return token ? fmt::format("EFFECT {} receipt={} count={}", message_id, receipt, *token)
               : fmt::format("EFFECT {} receipt={}", message_id, receipt);
}

void ResourceCopy::effect(const sim::Message& m, const EffectRequest& e) {
  const ResourceSpec& spec = svc_.spec();
  const bool fenced = spec.kind == ResourceKind::kFenced;
  const bool once = spec.kind == ResourceKind::kIdempotent || (fenced && spec.idempotent);
  LedgerEntry& entry = ledger_[e.message_id];
  auto reply = sim::make_payload<OpReply>();
  reply->message_id = e.message_id;
  reply->receipt = e.receipt;
  if (fenced && !e.token) {
    reply->reason = "effect without a receive count";
  } else if (fenced && (spec.check == FenceCheck::kStrict ? *e.token <= entry.highest : *e.token < entry.highest)) {
    reply->reason = fmt::format("receive count {} {} highest {} of {}", *e.token,
                                spec.check == FenceCheck::kStrict ? "<=" : "<", entry.highest, e.message_id);
  } else {
    if (fenced) entry.highest = *e.token;
    if (once && entry.applied > 0) {
      reply->reason = "already applied";
      reply->already_applied = true;
    } else {
      ++entry.applied;
      reply->accepted = true;
    }
  }
  reply->value = entry.applied;
  ResourceOpRecord rec;
  rec.kind = ResourceOpKind::kWrite;
  rec.write = true;
  rec.token = e.token;
  rec.value = entry.applied;
  rec.lease_value = e.receipt;
  rec.iteration = e.iteration;
  rec.message_id = e.message_id;
  rec.receipt = e.receipt;
  if (reply->accepted)
    rec.effect = fmt::format("applied the effect of {} (application {})", e.message_id, entry.applied);
  record(m, *reply, std::move(rec));
  // The marks of this message, not the register's.
  svc_.history().resource_ops.back().last_written = entry.highest;
  svc_.history().resource_ops.back().last_seen = entry.highest;
  if (reply->accepted) {
    ++svc_.accepted_writes;
  } else {
    ++svc_.rejected_writes;
  }
  node_.reply(m, reply);
}

}  // namespace fencesim::resource
