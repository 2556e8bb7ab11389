// models/redis/commands/commands.hpp — Redis 7.0's string and key commands
// over the model's keyspace, as real argv in and RESP2 replies out (issue
// #31: client programs send real Redis commands to the simulated Redis).
//
// Semantics and every error text are Redis 7.0.15's (the version Debian 12
// ships; redis/redis tag 7.0.15): src/t_string.c (SET and its options, GET,
// GETDEL, SETNX, INCR/INCRBY/DECR/DECRBY), src/db.c (DEL, EXISTS, lazy
// expiry in expireIfNeeded), src/expire.c (EXPIRE/PEXPIRE/EXPIREAT/
// PEXPIREAT with NX/XX/GT/LT, TTL/PTTL, PERSIST), src/server.c
// processCommand (unknown command, wrong arity), src/util.c string2ll (what
// an integer argument or value is). tests/conformance/
// redis_commands_conformance_test.cpp compares every reply with a real
// redis-server.
//
// Effects: what a command appends to `effects` is what Redis 7 propagates
// to replicas and the AOF, in the model's Effect kinds (protocol.hpp):
//   SET (any form), SETNX          kSet, a relative EX/PX rewritten to an
//                                   absolute deadline (t_string.c: "SET key
//                                   value PXAT"); KEEPTTL carries the kept one
//   DEL, GETDEL, an expired key     kDel (db.c propagateDeletion: a primary
//   a command touched, PEXPIRE      that finds a key expired deletes it and
//   with a deadline already past    propagates DEL; expire.c: DEL)
//   PEXPIRE/EXPIRE/...AT            kExpire with the absolute deadline
//                                   (expire.c rewrites to PEXPIREAT)
//   INCR                            kIncr
//   INCRBY/DECR/DECRBY, PERSIST     kSet of the resulting value with the
//                                   key's expiry (Redis propagates the command
//                                   itself; the model has no kind for them, and
//                                   the value and expiry are the same state)
// A command that changes nothing appends nothing. Every Effect carries the
// deadline both ways the server needs it: `expire_at` (a reading of the
// deciding clock, ExpiryClock::now's) and `ttl` (what is left of it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/redis/protocol.hpp"

namespace fencesim::redis::commands {

/// The server's data: RedisServer's std::map<std::string, Entry>. The map's
/// order is the key order, so nothing here iterates in hash order.
using Keyspace = std::map<std::string, Entry>;

/// A RESP2 reply. `text` is a bulk string's bytes, a status's text ("OK") or
/// an error's text with its code and without the leading '-' ("ERR syntax
/// error", "NOSCRIPT No matching script. Please use EVAL.").
struct RespValue {
  enum class Kind { kNil, kInteger, kBulk, kStatus, kError, kArray };
  Kind kind = Kind::kNil;
  std::int64_t integer = 0;
  std::string text;
  std::vector<RespValue> array;

  static RespValue nil() { return {}; }
  static RespValue of_integer(std::int64_t v) { return {Kind::kInteger, v, {}, {}}; }
  static RespValue bulk(std::string s) { return {Kind::kBulk, 0, std::move(s), {}}; }
  static RespValue status(std::string s) { return {Kind::kStatus, 0, std::move(s), {}}; }
  static RespValue error(std::string s) { return {Kind::kError, 0, std::move(s), {}}; }
  static RespValue of_array(std::vector<RespValue> v) { return {Kind::kArray, 0, {}, std::move(v)}; }
  bool is_error() const { return kind == Kind::kError; }
  bool operator==(const RespValue&) const = default;
  /// One line, redis-cli's way: (nil), (integer) 1, "v", OK, (error) ERR ...,
  /// arrays as [a, b]. Used in test messages and the conformance transcript.
  std::string describe() const;
};

/// The instant a command runs at, as the server's clocks read it. Redis
/// itself freezes time for a whole script (script.c scriptTimeSnapshot), so a
/// reading, not a live clock, is what a command needs.
struct ExpiryClock {
  /// The deciding clock (lock.expiry_clock: wall or monotonic), in the unit
  /// and origin Entry::expire_at is kept in. An entry is expired when
  /// has_expiry and now >= expire_at (RedisServer::expired); a relative TTL
  /// d expires at now + d.
  Time now{0};
  /// The node's wall clock at the same instant: absolute deadlines
  /// (PXAT/EXAT/PEXPIREAT/EXPIREAT, Unix milliseconds or seconds) count on
  /// it, wall / 1 ms being Redis's mstime(). Equal to `now` in wall mode.
  Time wall{0};
  /// A primary deletes an expired key it touches and propagates DEL (db.c
  /// expireIfNeeded); a replica only hides it (false).
  bool lazy_delete = true;

  bool expired(const Entry& e) const { return e.has_expiry && now >= e.expire_at; }
};

/// Why a command cannot run before it runs (server.c processCommand; a
/// script gets script.c's words for these, not the client's).
enum class CommandCheck { kOk, kUnknown, kWrongArity, kNotFromScript };

/// Looks argv[0] up (case-insensitively) and checks its arity. EVAL, EVALSHA
/// and SCRIPT are known here (kNotFromScript: CMD_NOSCRIPT) but run by
/// ScriptCache (script.hpp), not by execute().
CommandCheck check_command(const std::vector<std::string>& argv);

/// Runs one command. Errors are replies (RespValue::error), never
/// exceptions: an unknown command gets "ERR unknown command 'x', with args
/// beginning with: 'a' " and a wrong arity "ERR wrong number of arguments
/// for 'set' command", as Redis 7.0 words them. An empty argv is an unknown
/// command ''. Appends the effects (see above) to `effects`.
RespValue execute(Keyspace& keys, const std::vector<std::string>& argv, const ExpiryClock& clock,
                  std::vector<Effect>& effects);
/// The same with one reading for both clocks (wall mode, or a test).
RespValue execute(Keyspace& keys, const std::vector<std::string>& argv, Time now, std::vector<Effect>& effects);

/// util.c string2ll: a decimal integer with no spaces, sign '+', or leading
/// zeros, within int64 ("-0" is not one). INCR and every integer argument
/// use it.
bool string_to_int64(const std::string& s, std::int64_t& out);

}  // namespace fencesim::redis::commands
