// models/program/codec.hpp — reading and writing the JSON of
// docs/PROTOCOL.md: the fields of a request, service data as latin-1 JSON
// strings, and the request kinds a program can send across the simulated
// network (each kind: its payload from a request, its result from a reply).
//
// Errors: a request's bad field throws BadField (the field and what was
// expected); ProgramClient turns it into the protocol error of the line.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/simulation.hpp"

namespace fencesim::program {

using json = nlohmann::json;

/// A request field that is missing or of the wrong shape.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Service data to JSON: each byte one code point U+0000–U+00FF.
std::string bytes_to_json_text(const std::string& bytes);
/// The reverse; BadField naming `field` for a code point above U+00FF.
std::string json_text_to_bytes(const std::string& utf8, const std::string& field);

/// More lines than this within one delivery: a program in a loop.
inline constexpr int kMaxLinesPerDelivery = 1'000'000;

/// A line as error messages quote it: its first 200 bytes.
std::string quote_line(const std::string& line);

/// One line with "type" first (json's keys are sorted), for people reading
/// transcripts and error messages; the rest in key order.
std::string dump_message(json msg);

/// One line from a program as JSON; BadField saying what is wrong: not
/// UTF-8 (the byte), a number beyond a double's range, or not JSON.
json parse_line(const std::string& line);

/// Field readers: `required` ones throw BadField when the field is absent.
std::string text_field(const json& j, const char* field, bool required);
/// A field of free text for people (a note, a reason, an outcome): kept as
/// UTF-8, not read as latin-1 service data; control characters become
/// spaces (it is shown on one line). Text longer than kFreeTextMaxBytes is
/// cut at a code point boundary and ends "… (cut: N bytes)".
/// Bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069) and
/// zero-width characters (U+200B-U+200F) become spaces as well.
inline constexpr std::size_t kFreeTextMaxBytes = 1000;
std::string free_text_field(const json& j, const char* field, bool required);
/// Whether free text shows nothing: spaces and no-break spaces only.
bool blank_text(const std::string& text);
std::optional<std::int64_t> int_field(const json& j, const char* field, bool required);
/// `v` as a signed 64-bit integer; BadField naming `what` when it is not an
/// integer or lies outside -2^63 … 2^63-1 (a JSON integer such as
/// 18446744073709551615 is refused, never wrapped).
std::int64_t int64_value(const json& v, const std::string& what);
std::optional<bool> bool_field(const json& j, const char* field);

/// What a request kind's encoder may need besides the request itself.
struct RequestContext {
  std::string client;       ///< the client's name
  std::string lease_value;  ///< the open belief's value ("" without one)
  int iteration = 0;        ///< the program's current iteration (0 before any)
  /// Set by an encoder whose request gets no reply but a pushed message
  /// later (an etcd watch): `decode_push` answers it, with no timeout.
  bool answered_by_push = false;
};

/// A pushed answer: the program's id of the request it answers, the
/// delivery's fields, and whether more may follow (a watch of every
/// change) or this was the only one (a watch of one deletion).
struct PushedAnswer {
  std::int64_t id = 0;
  json fields;
  bool more = false;
};

/// One kind of request that crosses the simulated network
/// (docs/PROTOCOL.md "Requests"): `type` is the message's "type".
struct RequestKind {
  const char* type;
  /// Sent to a resource copy ("node" one of the copies, default the
  /// client's copy); otherwise to a node of the lock service ("node" any of
  /// its nodes, default its first: redis-0, etcd-0, the table, the queue).
  bool to_resource;
  /// The payload for request `j` (`id`: the program's id for it); throws BadField.
  sim::PayloadPtr (*encode)(const json& j, std::int64_t id, RequestContext& ctx);
  /// The result for a reply; nullopt when `m` is not an answer of this kind.
  std::optional<json> (*decode)(const sim::Message& m);
  /// A pushed message (not a reply) that answers a request made with
  /// `answered_by_push`; nullopt when `m` is not one. nullptr: none.
  std::optional<PushedAnswer> (*decode_push)(const sim::Message& m) = nullptr;
  /// The delivery's "type" for a pushed answer ("watch").
  const char* push_type = "";
  /// The message that tells the service to stop pushing for request `id`
  /// (the program cancelled it); nullptr or a null payload: none needed.
  sim::PayloadPtr (*cancel_push)(std::int64_t id) = nullptr;
};

/// Every request kind, in a fixed order: resource, table, queue, redis, etcd.
const std::vector<RequestKind>& request_kinds();
/// The kind of `type`; nullptr when no kind has it.
const RequestKind* find_request_kind(const std::string& type);

}  // namespace fencesim::program
