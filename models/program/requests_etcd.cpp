// models/program/requests_etcd.cpp — a program's etcd calls (docs/PROTOCOL.md
// "etcd requests"), mapped onto the requests the simulated etcd serves
// (models/etcd/etcd.hpp ReqKind): the v3 KV API (Range with a range end and
// a limit, Put, DeleteRange, Txn with compares — models/etcd/txn.hpp), the
// lease API (LeaseGrant, LeaseKeepAlive one round, LeaseTimeToLive,
// LeaseRevoke), Watch of a key or a range (every put and delete until
// cancelled), and the calls client-go's concurrency.Mutex makes (etcd v3.5
// client/v3/concurrency/mutex.go and session.go: MutexTxn,
// RangeLastCreated, WatchDelete), so a program can run its own Mutex on the
// same Raft, leases and revisions the built-in client uses. Field names
// follow etcd's JSON gateway (api/etcdserverpb/rpc.proto); keys and values
// are latin-1 strings, not base64.
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
                                                             {"Txn", ReqKind::kTxn},
                                                             {"Watch", ReqKind::kWatchRange},
                                                             {"LeaseRevoke", ReqKind::kLeaseRevoke},
                                                             {"LeaseKeepAlive", ReqKind::kKeepAlive},
                                                             {"MutexTxn", ReqKind::kLockTxn},
                                                             {"RangeLastCreated", ReqKind::kLastCreated},
                                                             {"Range", ReqKind::kGet},
                                                             {"DeleteRange", ReqKind::kDelete},
                                                             {"WatchDelete", ReqKind::kWatch},
                                                             {"Put", ReqKind::kPut},
                                                             {"LeaseTimeToLive", ReqKind::kTimeToLive},
                                                             {"RangePrefix", ReqKind::kRange}};
  for (const auto& [name, kind] : kMethods) {
    if (method == name) return kind;
  }
  throw BadField(
      "\"method\" must be one of \"LeaseGrant\", \"LeaseRevoke\", \"LeaseKeepAlive\", \"LeaseTimeToLive\", "
      "\"Put\", \"Range\", \"RangePrefix\", \"DeleteRange\", \"Txn\", \"Watch\", "
      "\"RangeLastCreated\", \"MutexTxn\", \"WatchDelete\", got \"" +
      method + "\"");
}

std::int64_t not_negative(const json& j, const char* field) {
  const std::int64_t v = int_field(j, field, false).value_or(0);
  if (v < 0) throw BadField(std::string("\"") + field + "\" must not be negative");
  return v;
}

/// One of `names` (the enum's order); BadField naming `where` otherwise.
template <typename E, std::size_t N>
E enum_field(const json& j, const char* field, const std::string& where, const char* const (&names)[N]) {
  const std::string v = text_field(j, field, true);
  std::string list;
  for (std::size_t i = 0; i < N; ++i) {
    if (v == names[i]) return static_cast<E>(i);
    list += std::string(i == 0 ? "" : ", ") + "\"" + names[i] + "\"";
  }
  throw BadField(where + "\"" + field + "\" must be one of " + list + ", got \"" + v + "\"");
}

const json& object_at(const json& j, const char* field, const std::string& where) {
  const auto it = j.find(field);
  if (it == j.end() || !it->is_object()) throw BadField(where + "\"" + field + "\" must be an object");
  return *it;
}

etcd::TxnCompare read_compare(const json& c, const std::string& where) {
  static const char* const kTargets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
  static const char* const kFields[] = {"version", "create_revision", "mod_revision", "value", "lease"};
  static const char* const kResults[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
  if (!c.is_object()) throw BadField(where + "must be an object");
  etcd::TxnCompare out;
  out.key = text_field(c, "key", true);
  out.range_end = text_field(c, "range_end", false);
  out.target = enum_field<etcd::TxnCompare::Target>(c, "target", where, kTargets);
  out.result = enum_field<etcd::TxnCompare::Result>(c, "result", where, kResults);
  const char* field = kFields[static_cast<int>(out.target)];
  if (!c.contains(field)) {
    throw BadField(where + "a " + kTargets[static_cast<int>(out.target)] + " compare needs \"" + field + "\"");
  }
  if (out.target == etcd::TxnCompare::Target::kValue) {
    out.value = text_field(c, field, true);
  } else {
    out.number = *int_field(c, field, true);
  }
  return out;
}

etcd::TxnOp read_op(const json& o, const std::string& where) {
  if (!o.is_object() || o.size() != 1) {
    throw BadField(where +
                   "must be an object with one of \"request_put\", \"request_range\", "
                   "\"request_delete_range\"");
  }
  etcd::TxnOp op;
  if (o.contains("request_put")) {
    const json& p = object_at(o, "request_put", where);
    op.kind = etcd::TxnOp::Kind::kPut;
    op.key = text_field(p, "key", true);
    op.value = text_field(p, "value", false);
    op.lease = not_negative(p, "lease");
  } else if (o.contains("request_range")) {
    const json& p = object_at(o, "request_range", where);
    op.kind = etcd::TxnOp::Kind::kRange;
    op.key = text_field(p, "key", true);
    op.range_end = text_field(p, "range_end", false);
    op.limit = not_negative(p, "limit");
  } else if (o.contains("request_delete_range")) {
    const json& p = object_at(o, "request_delete_range", where);
    op.kind = etcd::TxnOp::Kind::kDelete;
    op.key = text_field(p, "key", true);
    op.range_end = text_field(p, "range_end", false);
  } else if (o.contains("request_txn")) {
    throw BadField(where + "a nested txn (\"request_txn\") is not modelled");
  } else {
    throw BadField(where + "must hold one of \"request_put\", \"request_range\", \"request_delete_range\", got " +
                   o.dump());
  }
  return op;
}

/// `read(item, where)` for an element of a txn's list, with the element's
/// place in front of any field error the reader's own checks did not place.
template <typename Read>
auto read_at(const json& item, const std::string& where, Read read) {
  try {
    return read(item, where);
  } catch (const BadField& e) {
    const std::string what = e.what();
    if (what.rfind(where, 0) == 0) throw;
    throw BadField(where + what);
  }
}

std::vector<etcd::TxnOp> read_ops(const json& j, const char* field) {
  std::vector<etcd::TxnOp> ops;
  const auto it = j.find(field);
  if (it == j.end()) return ops;
  if (!it->is_array()) throw BadField(std::string("\"") + field + "\" must be an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    ops.push_back(read_at((*it)[i], std::string(field) + "[" + std::to_string(i) + "]: ", read_op));
  }
  return ops;
}

std::shared_ptr<const etcd::TxnSpec> read_txn(const json& j) {
  auto txn = std::make_shared<etcd::TxnSpec>();
  if (const auto it = j.find("compare"); it != j.end()) {
    if (!it->is_array()) throw BadField("\"compare\" must be an array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      txn->compare.push_back(read_at((*it)[i], "compare[" + std::to_string(i) + "]: ", read_compare));
    }
  }
  txn->success = read_ops(j, "success");
  txn->failure = read_ops(j, "failure");
  return txn;
}

sim::PayloadPtr encode_etcd(const json& j, std::int64_t id, RequestContext& ctx) {
  auto r = sim::make_payload<etcd::Request>();
  r->kind = method_kind(text_field(j, "method", true));
  if (r->kind == ReqKind::kGet && (j.contains("range_end") || j.contains("limit"))) r->kind = ReqKind::kRange;
  if (r->kind == ReqKind::kDelete && j.contains("range_end")) {
    // DeleteRange over a range: a txn of that one delete.
    auto txn = std::make_shared<etcd::TxnSpec>();
    etcd::TxnOp del;
    del.kind = etcd::TxnOp::Kind::kDelete;
    del.key = text_field(j, "key", true);
    del.range_end = text_field(j, "range_end", true);
    txn->success.push_back(std::move(del));
    r->kind = ReqKind::kTxn;
    r->txn = std::move(txn);
    return r;
  }
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
    case ReqKind::kRange:
      if (j.contains("prefix")) {  // RangePrefix
        r->key = text_field(j, "prefix", true);
        r->range_end = etcd::prefix_end(r->key);
      } else {
        r->key = text_field(j, "key", true);
        r->range_end = text_field(j, "range_end", false);
      }
      r->revision = not_negative(j, "limit");
      break;
    case ReqKind::kTxn: r->txn = read_txn(j); break;
    case ReqKind::kWatchRange:
      r->key = text_field(j, "key", true);
      r->range_end = text_field(j, "range_end", false);
      r->revision = not_negative(j, "start_revision");
      r->watch_id = static_cast<std::uint64_t>(id);
      ctx.answered_by_push = true;
      break;
    case ReqKind::kWatchCancel: break;  // not a method: sent by cancel_watch
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
  if (!r->error.empty()) {
    // etcd's client-side text: the lessor's ErrLeaseNotFound reaches a
    // client as rpctypes.ErrGRPCLeaseNotFound, "requested lease not found".
    out["error"] = "etcdserver: " + (r->error == "lease not found" ? "requested lease not found" : r->error);
  }
  if (r->lease != 0) out["ID"] = r->lease;
  if (r->ttl != Duration{0} || r->lease != 0) {
    out["TTL"] = std::chrono::duration_cast<std::chrono::seconds>(r->ttl).count();
  }
  if (r->granted_ttl != Duration{0}) {
    out["grantedTTL"] = std::chrono::duration_cast<std::chrono::seconds>(r->granted_ttl).count();
  }
  out["succeeded"] = r->succeeded;
  out["kvs"] = json::array();
  if (r->kv) out["kvs"].push_back(kv_json(*r->kv));
  for (const etcd::KeyValue& kv : r->range) out["kvs"].push_back(kv_json(kv));
  const auto found = static_cast<std::int64_t>(out["kvs"].size());
  out["count"] = std::max(r->count, found);
  out["more"] = r->count > found;
  if (r->owner) out["owner"] = kv_json(*r->owner);
  std::int64_t deleted = r->deleted;
  if (!r->responses.empty()) {
    json& responses = out["responses"] = json::array();
    for (const etcd::TxnOpResult& op : r->responses) {
      if (op.kind == etcd::TxnOp::Kind::kPut) {
        responses.push_back({{"response_put", json::object()}});
      } else if (op.kind == etcd::TxnOp::Kind::kRange) {
        json kvs = json::array();
        for (const etcd::KeyValue& kv : op.kvs) kvs.push_back(kv_json(kv));
        responses.push_back({{"response_range", {{"kvs", std::move(kvs)}, {"count", op.count}, {"more", op.more}}}});
      } else {
        responses.push_back({{"response_delete_range", {{"deleted", op.deleted}}}});
        deleted += op.deleted;
      }
    }
  }
  out["deleted"] = deleted;
  return out;
}

json event_json(const etcd::WatchEvents::Event& e) {
  if (e.put) return json{{"type", "PUT"}, {"kv", kv_json(e.kv)}};
  return json{{"type", "DELETE"}, {"kv", {{"key", bytes_to_json_text(e.kv.key)}, {"mod_revision", e.kv.mod_revision}}}};
}

std::optional<PushedAnswer> decode_watch(const sim::Message& m) {
  if (const auto* w = m.as<etcd::WatchEvents>()) {
    json events = json::array();
    for (const etcd::WatchEvents::Event& e : w->events) events.push_back(event_json(e));
    return PushedAnswer{static_cast<std::int64_t>(w->watch_id),
                        json{{"header", {{"revision", w->header_revision}}}, {"events", std::move(events)}}, true};
  }
  const auto* e = m.as<etcd::WatchEvent>();
  if (e == nullptr) return std::nullopt;
  json ev{{"type", "DELETE"}, {"kv", {{"key", bytes_to_json_text(e->key)}, {"mod_revision", e->revision}}}};
  return PushedAnswer{static_cast<std::int64_t>(e->watch_id), json{{"events", json::array({ev})}}, false};
}

sim::PayloadPtr cancel_watch(std::int64_t id) {
  auto r = sim::make_payload<etcd::Request>();
  r->kind = ReqKind::kWatchCancel;
  r->watch_id = static_cast<std::uint64_t>(id);
  return r;
}

}  // namespace

RequestKind etcd_request_kind() {
  return {"etcd", false, encode_etcd, decode_etcd, decode_watch, "watch", cancel_watch};
}

}  // namespace fencesim::program
