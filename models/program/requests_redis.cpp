// models/program/requests_redis.cpp — a program's Redis commands
// (docs/PROTOCOL.md "Redis commands"): an argv in, the RESP2 reply out, as
// redis::RawCommand / RawReply (models/redis/commands/wire.hpp) on the
// simulated network.
#include "models/program/codec.hpp"
#include "models/program/requests.hpp"
#include "models/redis/commands/wire.hpp"

namespace fencesim::program {

namespace {

using redis::commands::RespValue;

/// RESP2 as JSON: nil null, integer a number, bulk a (latin-1) string,
/// status {"status": s}, error {"error": s}, array an array.
json resp_json(const RespValue& v) {
  switch (v.kind) {
    case RespValue::Kind::kNil: return nullptr;
    case RespValue::Kind::kInteger: return v.integer;
    case RespValue::Kind::kBulk: return bytes_to_json_text(v.text);
    case RespValue::Kind::kStatus: return json{{"status", v.text}};
    case RespValue::Kind::kError: return json{{"error", v.text}};
    case RespValue::Kind::kArray: {
      json a = json::array();
      for (const RespValue& e : v.array) a.push_back(resp_json(e));
      return a;
    }
  }
  return nullptr;
}

sim::PayloadPtr encode_redis(const json& j, std::int64_t, RequestContext&) {
  const auto args = j.find("args");
  if (args == j.end() || !args->is_array() || args->empty()) {
    throw BadField("\"args\" must be a non-empty array: the command and its arguments, e.g. [\"GET\", \"lock\"]");
  }
  auto c = sim::make_payload<redis::RawCommand>();
  for (std::size_t i = 0; i < args->size(); ++i) {
    const json& a = (*args)[i];
    const std::string field = "args[" + std::to_string(i) + "]";
    if (a.is_string()) {
      c->argv.push_back(json_text_to_bytes(a.get<std::string>(), field));
    } else if (a.is_number_integer()) {
      c->argv.push_back(a.dump());  // the integer's own digits, as redis-py and ioredis send them
    } else {
      throw BadField("\"" + field + "\" must be a string or an integer, got " + a.dump());
    }
  }
  const std::optional<std::int64_t> conn = int_field(j, "connection", false);
  if (conn && (*conn < 0 || *conn > 65535)) throw BadField("\"connection\" must be from 0 to 65535");
  c->connection = static_cast<std::uint32_t>(conn.value_or(0));
  return c;
}

std::optional<json> decode_redis(const sim::Message& m) {
  const auto* r = m.as<redis::RawReply>();
  if (r == nullptr) return std::nullopt;
  return resp_json(r->value);
}

}  // namespace

RequestKind redis_request_kind() { return {"redis", false, encode_redis, decode_redis}; }

}  // namespace fencesim::program
