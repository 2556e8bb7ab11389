// models/program/requests_etcd.cpp — a program's etcd calls (docs/PROTOCOL.md
// "etcd requests"): the calls client-go's concurrency.Mutex makes (etcd
// v3.5 client/v3/concurrency/mutex.go and session.go), mapped onto the
// requests the simulated etcd serves (models/etcd/etcd.hpp ReqKind), so a
// program can build its own Mutex — its own session, keepalive cadence,
// waits and checks — on the same Raft, leases and revisions the built-in
// client uses. Not the general v3 API yet: Txn is the Mutex's transaction,
// Range one key or the Mutex's last-created query, Watch the deletion of one
// key.
#include "models/etcd/etcd.hpp"
#include "models/program/codec.hpp"
#include "models/program/requests.hpp"

namespace fencesim::program {

namespace {

using etcd::ReqKind;

json kv_json(const etcd::KeyValue& kv) {
  return json{{"key", bytes_to_json_text(kv.key)},
              {"value", bytes_to_json_text(kv.value)},
              {"create_revision", kv.create_revision},
              {"mod_revision", kv.mod_revision},
              {"version", kv.version},
              {"lease", kv.lease}};
}

std::int64_t positive(const json& j, const char* field) {
  const std::int64_t v = *int_field(j, field, true);
  if (v <= 0) throw BadField(std::string("\"") + field + "\" must be positive");
  return v;
}

/// The method's ReqKind; throws BadField for an unknown method.
ReqKind method_kind(const std::string& method) {
  static const std::pair<const char*, ReqKind> kMethods[] = {{"LeaseGrant", ReqKind::kLeaseGrant},
                                                             {"LeaseRevoke", ReqKind::kLeaseRevoke},
                                                             {"LeaseKeepAlive", ReqKind::kKeepAlive},
                                                             {"MutexTxn", ReqKind::kLockTxn},
                                                             {"RangeLastCreated", ReqKind::kLastCreated},
                                                             {"Range", ReqKind::kGet},
                                                             {"DeleteRange", ReqKind::kDelete},
                                                             {"WatchDelete", ReqKind::kWatch},
                                                             {"Put", ReqKind::kPut},
                                                             {"LeaseTimeToLive", ReqKind::kTimeToLive},
                                                             {"RangePrefix", ReqKind::kRangePrefix}};
  for (const auto& [name, kind] : kMethods) {
    if (method == name) return kind;
  }
  throw BadField(
      "\"method\" must be one of \"LeaseGrant\", \"LeaseRevoke\", \"LeaseKeepAlive\", \"LeaseTimeToLive\", "
      "\"Put\", \"Range\", \"RangePrefix\", "
      "\"RangeLastCreated\", \"DeleteRange\", \"MutexTxn\", \"WatchDelete\", got \"" +
      method + "\"");
}

sim::PayloadPtr encode_etcd(const json& j, std::int64_t id, RequestContext& ctx) {
  auto r = sim::make_payload<etcd::Request>();
  r->kind = method_kind(text_field(j, "method", true));
  switch (r->kind) {
    case ReqKind::kLeaseGrant: r->ttl = std::chrono::seconds(positive(j, "TTL")); break;
    case ReqKind::kLeaseRevoke:
    case ReqKind::kKeepAlive:
    case ReqKind::kTimeToLive: r->lease = positive(j, "ID"); break;
    case ReqKind::kLockTxn:
      r->key = text_field(j, "key", true);
      r->prefix = text_field(j, "prefix", true);
      r->lease = positive(j, "lease");
      break;
    case ReqKind::kLastCreated:
      r->prefix = text_field(j, "prefix", true);
      r->revision = *int_field(j, "max_create_revision", true);
      break;
    case ReqKind::kGet:
      r->key = text_field(j, "key", true);
      r->lock_check = bool_field(j, "mutex_check").value_or(false);
      break;
    case ReqKind::kDelete: r->key = text_field(j, "key", true); break;
    case ReqKind::kRangePrefix:
      r->prefix = text_field(j, "prefix", true);
      r->revision = int_field(j, "limit", false).value_or(0);
      if (r->revision < 0) throw BadField("\"limit\" must not be negative");
      break;
    case ReqKind::kPut:
      r->key = text_field(j, "key", true);
      r->value = text_field(j, "value", false);
      r->lease = int_field(j, "lease", false).value_or(0);
      break;
    case ReqKind::kWatch:
      r->key = text_field(j, "key", true);
      r->revision = *int_field(j, "start_revision", true);
      r->watch_id = static_cast<std::uint64_t>(id);
      ctx.answered_by_push = true;
      break;
  }
  return r;
}

std::optional<json> decode_etcd(const sim::Message& m) {
  const auto* r = m.as<etcd::Response>();
  if (r == nullptr) return std::nullopt;
  json out{{"header", {{"revision", r->header_revision}}}};
  if (!r->error.empty()) out["error"] = "etcdserver: " + r->error;
  if (r->lease != 0) out["ID"] = r->lease;
  if (r->ttl != Duration{0} || r->lease != 0)
    out["TTL"] = std::chrono::duration_cast<std::chrono::seconds>(r->ttl).count();
  if (r->granted_ttl != Duration{0}) {
    out["grantedTTL"] = std::chrono::duration_cast<std::chrono::seconds>(r->granted_ttl).count();
  }
  out["succeeded"] = r->succeeded;
  out["kvs"] = json::array();
  if (r->kv) out["kvs"].push_back(kv_json(*r->kv));
  for (const etcd::KeyValue& kv : r->range) out["kvs"].push_back(kv_json(kv));
  if (r->owner) out["owner"] = kv_json(*r->owner);
  return out;
}

std::optional<std::pair<std::int64_t, json>> decode_watch(const sim::Message& m) {
  const auto* e = m.as<etcd::WatchEvent>();
  if (e == nullptr) return std::nullopt;
  json ev{{"type", "DELETE"}, {"kv", {{"key", bytes_to_json_text(e->key)}, {"mod_revision", e->revision}}}};
  return std::make_pair(static_cast<std::int64_t>(e->watch_id), json{{"events", json::array({ev})}});
}

}  // namespace

RequestKind etcd_request_kind() { return {"etcd", false, encode_etcd, decode_etcd, decode_watch, "watch"}; }

}  // namespace fencesim::program
