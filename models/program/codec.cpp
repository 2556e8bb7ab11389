// models/program/codec.cpp — see codec.hpp. The request kinds of the
// resource, the lock table and the queue are here; Redis's and etcd's are
// in requests_redis.cpp and requests_etcd.cpp.
#include "models/program/codec.hpp"

#include <cmath>
#include <limits>

#include "models/program/requests.hpp"
#include "models/queue/queue.hpp"
#include "models/resource/resource.hpp"
#include "models/table/table.hpp"

namespace fencesim::program {

std::string bytes_to_json_text(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x80) {
      out.push_back(ch);
    } else {
      out.push_back(static_cast<char>(0xC0 | (b >> 6)));
      out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
    }
  }
  return out;
}

std::string json_text_to_bytes(const std::string& utf8, const std::string& field) {
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
    } else if ((b == 0xC2 || b == 0xC3) && i + 1 < utf8.size()) {
      // U+0080–U+00FF: two bytes, 110000xx 10xxxxxx.
      out.push_back(static_cast<char>(((b & 0x03) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3F)));
      ++i;
    } else {
      throw BadField("\"" + field +
                     "\" has a code point above U+00FF: service data is sent as latin-1 text, one code point per "
                     "byte (docs/PROTOCOL.md \"Transport\")");
    }
  }
  return out;
}

std::string quote_line(const std::string& line) { return line.size() <= 200 ? line : line.substr(0, 200) + "…"; }

std::string dump_message(json msg) {
  const std::string type = msg.at("type").dump();
  msg.erase("type");
  return msg.empty() ? "{\"type\":" + type + "}" : "{\"type\":" + type + "," + msg.dump().substr(1);
}

namespace {
/// The string field `field` of `j` as written; "" when absent or null (a
/// BadField when `required`), a BadField when it is not a string.
std::string string_field(const json& j, const char* field, bool required) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (required) throw BadField(std::string("the field \"") + field + "\" is missing");
    return "";
  }
  if (!it->is_string()) throw BadField(std::string("\"") + field + "\" must be a string, got " + it->dump());
  return it->get<std::string>();
}
}  // namespace

std::string text_field(const json& j, const char* field, bool required) {
  return json_text_to_bytes(string_field(j, field, required), field);
}

std::string free_text_field(const json& j, const char* field, bool required) {
  std::string text = string_field(j, field, required);  // valid UTF-8: the parser checked it
  const std::size_t written = text.size();
  if (text.size() > kFreeTextMaxBytes) {
    std::size_t cut = kFreeTextMaxBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a code point
    text.resize(cut);
    text += "… (cut: " + std::to_string(written) + " bytes)";
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  // Invisible format characters that reorder or hide what the report shows
  // (bidi overrides and isolates, zero-width characters) become spaces too.
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto b1 = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const auto b2 = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
    const bool format = static_cast<unsigned char>(text[i]) == 0xE2 &&
                        ((b1 == 0x80 && ((b2 >= 0x8B && b2 <= 0x8F) || (b2 >= 0xAA && b2 <= 0xAE))) ||
                         (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9));
    if (format) {
      out += ' ';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool blank_text(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ') continue;
    if (text.compare(i, 2, "\xC2\xA0") == 0) {  // U+00A0, no-break space
      ++i;
      continue;
    }
    return false;
  }
  return true;
}

std::optional<std::int64_t> int_field(const json& j, const char* field, bool required) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (required) throw BadField(std::string("the field \"") + field + "\" is missing");
    return std::nullopt;
  }
  return int64_value(*it, std::string("\"") + field + "\"");
}

std::int64_t int64_value(const json& v, const std::string& what) {
  const bool fits = v.is_number_integer() &&
                    (!v.is_number_unsigned() ||
                     v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  if (!fits) {
    const bool beyond = v.is_number_float() && std::abs(v.get<double>()) >= 9.2e18;
    throw BadField(what + " must be an integer from -9223372036854775808 to 9223372036854775807 (64-bit signed), got " +
                   (beyond ? "a number beyond that range (" + v.dump() + ")" : v.dump()));
  }
  return v.get<std::int64_t>();
}

json parse_line(const std::string& line) {
  try {
    return json::parse(line);
  } catch (const json::parse_error& e) {
    // nlohmann's id 101 names the byte; an ill-formed UTF-8 sequence is the
    // usual mistake of an SDK that writes raw bytes.
    if (std::string(e.what()).find("UTF-8") != std::string::npos) {
      throw BadField("a line that is not UTF-8 (byte " + std::to_string(e.byte) +
                     "); service data travels as latin-1 code points U+0000-U+00FF inside JSON strings "
                     "(docs/PROTOCOL.md, Transport)");
    }
    throw BadField("expected a JSON object");
  } catch (const json::exception&) {  // out_of_range 406: a number such as 1e400
    throw BadField("a number beyond the range of a double (integers are 64-bit signed: docs/PROTOCOL.md, Transport)");
  }
}

std::optional<bool> bool_field(const json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) throw BadField(std::string("\"") + field + "\" must be true or false, got " + it->dump());
  return it->get<bool>();
}

namespace {

/// docs/PROTOCOL.md "Resource operations".
sim::PayloadPtr encode_resource(const json& j, std::int64_t, RequestContext& ctx) {
  const std::string op = text_field(j, "op", true);
  if (op == "read") {
    auto r = sim::make_payload<resource::ReadRequest>();
    r->token = int_field(j, "token", false);
    r->lease_value = ctx.lease_value;
    r->iteration = ctx.iteration;
    return r;
  }
  if (op != "write") throw BadField("\"op\" must be \"read\" or \"write\", got \"" + op + "\"");
  auto w = sim::make_payload<resource::WriteRequest>();
  w->token = int_field(j, "token", false);
  w->value = *int_field(j, "value", true);
  w->read_value = int_field(j, "read_value", false).value_or(0);
  w->expected_version = int_field(j, "expected_version", false);
  w->tag = text_field(j, "tag", false);
  w->lease_value = ctx.lease_value;
  w->iteration = ctx.iteration;
  return w;
}

std::optional<json> decode_resource(const sim::Message& m) {
  const auto* r = m.as<resource::OpReply>();
  if (r == nullptr) return std::nullopt;
  return json{{"accepted", r->accepted},
              {"value", r->value},
              {"version", r->version},
              {"tag", bytes_to_json_text(r->tag)},
              {"reason", r->reason}};
}

/// docs/PROTOCOL.md "Lock-table statements" (models/table/table.hpp).
sim::PayloadPtr encode_table(const json& j, std::int64_t, RequestContext& ctx) {
  static const std::pair<const char*, table::Op> kOps[] = {
      {"insert", table::Op::kInsert}, {"acquire", table::Op::kAcquire}, {"extend", table::Op::kExtend},
      {"unlock", table::Op::kUnlock}, {"get", table::Op::kGet},         {"cas", table::Op::kCas}};
  const std::string op = text_field(j, "op", true);
  auto s = sim::make_payload<table::Statement>();
  const auto* found = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& o) { return op == o.first; });
  if (found == std::end(kOps)) {
    throw BadField("\"op\" must be one of \"insert\", \"acquire\", \"extend\", \"unlock\", \"get\", \"cas\", got \"" +
                   op + "\"");
  }
  s->op = found->second;
  s->holder = j.contains("holder") ? text_field(j, "holder", true) : ctx.client;
  s->value = text_field(j, "value", false);
  s->now = sim::Time{int_field(j, "now", false).value_or(0)};
  s->lock_until = sim::Time{int_field(j, "lock_until", false).value_or(0)};
  s->expected_version = int_field(j, "expected_version", false).value_or(0);
  s->lease_duration = sim::Duration{int_field(j, "lease_duration", false).value_or(0)};
  return s;
}

std::optional<json> decode_table(const sim::Message& m) {
  const auto* r = m.as<table::Result>();
  if (r == nullptr) return std::nullopt;
  return json{{"ok", r->ok},
              {"found", r->found},
              {"holder", bytes_to_json_text(r->holder)},
              {"version", r->version},
              {"lease_duration", r->lease_duration.count()}};
}

/// docs/PROTOCOL.md "Queue calls" (models/queue/queue.hpp).
sim::PayloadPtr encode_queue(const json& j, std::int64_t, RequestContext&) {
  const std::string op = text_field(j, "op", true);
  if (op == "receive") return sim::make_payload<queue::ReceiveRequest>();
  if (op == "change_visibility") {
    auto c = sim::make_payload<queue::ChangeVisibilityRequest>();
    c->message_id = text_field(j, "message_id", true);
    c->receipt = text_field(j, "receipt", true);
    c->timeout = sim::Duration{*int_field(j, "visibility_timeout", true)};
    return c;
  }
  if (op == "delete") {
    auto d = sim::make_payload<queue::DeleteRequest>();
    d->message_id = text_field(j, "message_id", true);
    d->receipt = text_field(j, "receipt", true);
    return d;
  }
  throw BadField("\"op\" must be one of \"receive\", \"change_visibility\", \"delete\", got \"" + op + "\"");
}

std::optional<json> decode_queue(const sim::Message& m) {
  if (const auto* r = m.as<queue::ReceiveReply>()) {
    if (!r->found) return json{{"found", false}};
    return json{{"found", true},
                {"message_id", bytes_to_json_text(r->message_id)},
                {"receipt", bytes_to_json_text(r->receipt)},
                {"receive_count", r->receive_count}};
  }
  if (const auto* r = m.as<queue::QueueReply>()) return json{{"ok", r->ok}, {"error", r->error}};
  return std::nullopt;
}

}  // namespace

const std::vector<RequestKind>& request_kinds() {
  static const std::vector<RequestKind> kKinds = [] {
    std::vector<RequestKind> k = {{"resource", true, encode_resource, decode_resource},
                                  {"table", false, encode_table, decode_table},
                                  {"queue", false, encode_queue, decode_queue}};
    for (const RequestKind& s : service_request_kinds()) k.push_back(s);
    return k;
  }();
  return kKinds;
}

const RequestKind* find_request_kind(const std::string& type) {
  for (const RequestKind& k : request_kinds()) {
    if (type == k.type) return &k;
  }
  return nullptr;
}

}  // namespace fencesim::program
