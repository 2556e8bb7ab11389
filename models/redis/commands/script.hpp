// models/redis/commands/script.hpp — EVAL, EVALSHA and SCRIPT LOAD in the
// simulated Redis with real Lua 5.1 (Debian's liblua5.1, the version Redis
// embeds), as Redis 7.0.15 runs them (redis/redis tag 7.0.15: src/eval.c,
// src/script_lua.c, src/script.c). Issue #31, "Real Lua in the simulated
// Redis".
//
// What a script sees (script_lua.c luaRegisterRedisAPI / luaLoadLibraries):
//   KEYS, ARGV          tables of the key and argument strings
//   redis.call(...)     runs a command through `call` against the same
//                       keyspace; an error reply raises it (the script stops)
//   redis.pcall(...)    the same, returning the error as {err="..."}
//   redis.error_reply(s), redis.status_reply(s), redis.sha1hex(s),
//   redis.log (checked, writes nothing), redis.LOG_*, REDIS_VERSION(_NUM)
//   ("7.0.15"), redis.acl_check_cmd (the default user may run anything),
//   redis.replicate_commands (true), redis.breakpoint (false), redis.debug,
//   redis.set_repl, redis.setresp (accepted, see below), redis.REPL_*
//   libraries: base without dofile/loadfile/print, table, string, math (its
//   random/randomseed replaced by Redis's rand.c lrand48), cjson and bit
//   (Debian's lua-cjson 2.1.0 and lua-bitop 1.0.2, the versions Redis 7.0
//   vendors); struct and cmsgpack are absent (Debian ships no Lua 5.1
//   module of either): a script that uses them gets "Script attempted to
//   access nonexistent global variable 'struct'". No os, io, package, debug.
//
// Conversions (script_lua.c): a reply to Lua — integer → number, bulk →
// string, nil → false, status → {ok=s}, error → {err=s}, array → table.
// Lua to a reply — number → integer (truncated), string → bulk, true → 1,
// false/nil → nil, {err=s} → error, {ok=s} → status, other table → array up
// to its first nil. redis.call's arguments: strings, numbers as "%.17g";
// anything else fails with "Lua redis lib command arguments must be strings
// or integers".
//
// Errors, as 7.0.15 words them (eval.c's __redis__err__handler, luaCallFunction):
// a script that fails returns "<err> script: <sha>, on @user_script:<line>."
// (e.g. "ERR user_script:1: boom script: 8290…, on @user_script:1."); a
// compile error "ERR Error compiling script (new function): user_script:1: …";
// EVALSHA of an unknown digest "NOSCRIPT No matching script. Please use EVAL.".
// Globals are read-only (eval.c scriptingInit, luaSetTableProtectionRecursively):
// setting one fails with "user_script:1: Attempt to modify a readonly table",
// reading a missing one with "Script attempted to access nonexistent global
// variable 'x'"; the library tables, the metatables and the strings'
// metatable are read-only too, and rawset/setmetatable on them fail without
// a line. Redis patches its Lua with a read-only flag; Debian's stock Lua
// has none, so each protected table is an empty proxy whose reads go to the
// real one (next, pairs and rawget see through it; ipairs over a library
// table sees nothing). _G holds what a 7.0.15 server's does (no getfenv,
// setfenv, newproxy), KEYS and ARGV included.
//
// Work bound: real Redis lets a script run on; after busy-reply-threshold
// (lua-time-limit, 5000 ms) other clients get "BUSY Redis is busy running a
// script…" until SCRIPT KILL ends it with "ERR Script killed by user with
// SCRIPT KILL...". The simulation cannot wait for real time, so a script
// gets kInstructionBudget Lua VM instructions (counted by a count hook every
// kHookEvery); past it the script fails with kBudgetError (plus the
// " script: <sha>, on @user_script:<line>." suffix), and, like Redis after a
// kill, the hook then fires on every line so pcall cannot swallow it. The
// commands it ran before stay run (Redis has no rollback).
//
// Determinism: no os/io libraries, no clock; math.random is Redis's lrand48
// whose state lives in the ScriptCache (7.0 does not reseed it per script:
// scripts replicate as effects), starting at rand.c's seed. Not deterministic
// in real Redis either, and not here: tostring() of a table or function
// (an address) and pairs() over a table keyed by tables or functions.
//
// One deliberate difference: error({}) (an error table without "err")
// crashes a real 7.0.15 server (luaCallFunction formats a NULL message); the
// model answers "(null) script: <sha>, on @user_script:1.".
//
// Not modelled: shebang flags (#!lua flags=…), EVAL_RO/EVALSHA_RO, FUNCTION,
// redis.set_repl (accepted, ignored: effects always replicate),
// redis.setresp (RESP2 only), the RESP3 reply shapes (double, map, set,
// big_number, verbatim_string tables are returned as arrays).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/redis/commands/commands.hpp"

struct lua_State;

namespace fencesim::redis::commands {

/// Runs one command for redis.call/pcall (its argv already checked by
/// check_command) and returns its reply.
using CommandCall = std::function<RespValue(const std::vector<std::string>& argv)>;

/// A server's script cache and its Lua interpreter (one per server, as in
/// Redis: a script's compiled function is kept by its SHA1 until SCRIPT
/// FLUSH). Not thread-safe; a run is single-threaded.
class ScriptCache {
 public:
  static constexpr std::int64_t kInstructionBudget = 10'000'000;
  static constexpr int kHookEvery = 10'000;
  /// Bytes the interpreter may hold (scripts, their data, the libraries):
  /// an allocation past it fails with Lua's "not enough memory", and the
  /// script with "ERR Error running script <sha>, not enough memory".
  /// Real Redis has no such bound (only the machine's memory).
  static constexpr std::size_t kMemoryLimit = std::size_t{64} << 20;
  static const char* const kBudgetError;

  ScriptCache();
  ~ScriptCache();
  ScriptCache(const ScriptCache&) = delete;
  ScriptCache& operator=(const ScriptCache&) = delete;

  /// SHA1 of `body` as 40 lowercase hex digits (eval.c sha1hex).
  static std::string sha1hex(const std::string& body);

  /// SCRIPT LOAD: the digest as a bulk string, or the compile error.
  RespValue script_load(const std::string& body);
  /// EVAL: compiles (and caches) `body` and runs it.
  RespValue eval(const std::string& body, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                 const CommandCall& call);
  /// EVALSHA: runs a cached script (any case of the digest), or NOSCRIPT.
  RespValue evalsha(const std::string& sha, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                    const CommandCall& call);
  /// SCRIPT EXISTS for one digest.
  bool exists(const std::string& sha) const;
  /// SCRIPT FLUSH: forgets every script and starts a fresh interpreter (the
  /// math.random state survives, as Redis's lives outside Lua).
  void flush();

  /// The whole command surface of a server: EVAL/EVALSHA (numkeys parsed as
  /// eval.c does), SCRIPT LOAD|EXISTS|FLUSH|KILL, and every other command
  /// through commands::execute; a script's commands run against the same
  /// keyspace and append their effects to `effects` (Redis 7 replicates a
  /// script as the effects of its commands).
  RespValue execute(Keyspace& keys, const std::vector<std::string>& argv, const ExpiryClock& clock,
                    std::vector<Effect>& effects);

  /// The interpreter and the run in progress (opaque; script.cpp).
  struct State;

 private:
  friend struct ScriptAccess;
  RespValue run(const std::string& sha, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                const CommandCall& call);
  RespValue compile(const std::string& body, std::string& sha);
  RespValue execute_script_command(const std::vector<std::string>& argv);
  std::unique_ptr<State> state_;
  std::uint32_t rand_x_[3];  ///< rand.c's lrand48 state (math.random)
};

}  // namespace fencesim::redis::commands
