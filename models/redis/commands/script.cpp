// EVAL/EVALSHA/SCRIPT with Lua 5.1, as Redis 7.0.15 runs them; see
// script.hpp for what a script sees and the sources.
//
// Lua reports errors with longjmp (Debian's liblua5.1 is built as C), which
// skips C++ destructors: every lua_CFunction here does its C++ work in a
// helper that returns first, and only then calls lua_error from a frame
// with nothing to destroy.
#include "models/redis/commands/script.hpp"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

#include <fmt/format.h>

#include <algorithm>
#include <boost/uuid/detail/sha1.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace fencesim::redis::commands {

const char* const ScriptCache::kBudgetError =
    "ERR Script exceeded the simulation's budget of 10000000 Lua instructions (real Redis 7.0 runs it on and "
    "answers BUSY to other clients until SCRIPT KILL)";

/// The interpreter and the run in progress.
struct ScriptCache::State {
  lua_State* L = nullptr;
  ScriptCache* owner = nullptr;
  std::set<std::string> scripts;      ///< digests of the compiled scripts
  const CommandCall* call = nullptr;  ///< set while a script runs
  std::size_t bytes = 0;              ///< what the interpreter holds
  std::int64_t hooks = 0;
  bool over_budget = false;
  int gc_count = 0;
  ~State() {
    if (L != nullptr) lua_close(L);
  }
};

/// What the C callbacks reach through the registry.
struct ScriptAccess {
  static ScriptCache::State& state(lua_State* L);
  static std::uint32_t* rand_state(lua_State* L) { return state(L).owner->rand_x_; }
};

namespace {

const char kStateKey = 0;      // registry key (its address) of the State
const char kGlobalsKey = 0;    // registry key of the real globals table
const char kProtectedKey = 0;  // registry key of the weak set of read-only proxies

// ------------------------------------------------------------ rand.c lrand48 --

constexpr std::uint32_t kLow = 0xFFFF;
constexpr std::int32_t kLrand48Max = 0x7FFFFFFF;  // REDIS_LRAND48_MAX = INT32_MAX

void mul(std::uint32_t x, std::uint32_t y, std::uint32_t z[2]) {
  const std::uint32_t l = x * y;
  z[0] = l & kLow;
  z[1] = (l >> 16) & kLow;
}

/// rand.c next(): the 48-bit linear congruential step, in 16-bit limbs.
void lrand48_next(std::uint32_t x[3]) {
  const std::uint32_t a[3] = {0xE66D, 0xDEEC, 0x5};
  std::uint32_t p[2], q[2], r[2];
  mul(a[0], x[0], p);
  const std::uint32_t carry0a = p[0] + 0xB > kLow ? 1 : 0;
  p[0] = (p[0] + 0xB) & kLow;
  const std::uint32_t carry1 = p[1] + carry0a > kLow ? 1 : 0;
  p[1] = (p[1] + carry0a) & kLow;
  mul(a[0], x[1], q);
  const std::uint32_t carry0 = p[1] + q[0] > kLow ? 1 : 0;
  p[1] = (p[1] + q[0]) & kLow;
  mul(a[1], x[0], r);
  const std::uint32_t carry2 = p[1] + r[0] > kLow ? 1 : 0;
  x[2] = (carry0 + carry1 + carry2 + q[1] + r[1] + a[0] * x[2] + a[1] * x[1] + a[2] * x[0]) & kLow;
  x[1] = (p[1] + r[0]) & kLow;
  x[0] = p[0];
}

std::int32_t lrand48(std::uint32_t x[3]) {
  lrand48_next(x);
  return static_cast<std::int32_t>((x[2] << 15) + (x[1] >> 1));
}

void srand48(std::uint32_t x[3], std::int32_t seed) {
  const auto s = static_cast<std::uint32_t>(seed);
  x[0] = 0x330E;
  x[1] = s & kLow;
  x[2] = (s >> 16) & kLow;
}

// ------------------------------------------------------------ error tables --

/// script_lua.c luaPushErrorBuff: "-CODE msg" keeps its code, anything else
/// gets ERR; the message loses surrounding CR/LF. Pushes {err="CODE msg"}.
void push_error(lua_State* L, const std::string& err) {
  std::string code = "ERR";
  std::string msg = err;
  if (!err.empty() && err[0] == '-') {
    const auto sp = err.find(' ');
    if (sp == std::string::npos) {
      msg = err.substr(1);
    } else {
      code = err.substr(1, sp - 1);
      msg = err.substr(sp + 1);
    }
  }
  const auto first = msg.find_first_not_of("\r\n");
  msg = first == std::string::npos ? "" : msg.substr(first, msg.find_last_not_of("\r\n") - first + 1);
  const std::string final_msg = code + " " + msg;
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushstring(L, final_msg.c_str());
  lua_settable(L, -3);
}

/// The error of a redis.call whose command failed (flagged as Redis does,
/// so that pcall's table shows the same fields).
void push_command_error(lua_State* L, const std::string& err) {
  push_error(L, err);
  lua_pushstring(L, "ignore_error_stats_update");
  lua_pushboolean(L, 1);
  lua_settable(L, -3);
}

// ------------------------------------------------------------- conversions --

void push_reply(lua_State* L, const RespValue& v);

void push_array(lua_State* L, const std::vector<RespValue>& items) {
  lua_newtable(L);
  for (std::size_t j = 0; j < items.size(); ++j) {
    lua_pushnumber(L, static_cast<lua_Number>(j + 1));
    push_reply(L, items[j]);
    lua_settable(L, -3);
  }
}

/// script_lua.c redisProtocolToLuaType.
void push_reply(lua_State* L, const RespValue& v) {
  luaL_checkstack(L, 4, "reply too deep");
  switch (v.kind) {
    case RespValue::Kind::kInteger: lua_pushnumber(L, static_cast<lua_Number>(v.integer)); return;
    case RespValue::Kind::kBulk: lua_pushlstring(L, v.text.data(), v.text.size()); return;
    case RespValue::Kind::kNil: lua_pushboolean(L, 0); return;
    case RespValue::Kind::kStatus:
      lua_newtable(L);
      lua_pushstring(L, "ok");
      lua_pushlstring(L, v.text.data(), v.text.size());
      lua_settable(L, -3);
      return;
    case RespValue::Kind::kError: push_command_error(L, "-" + v.text); return;
    case RespValue::Kind::kArray: push_array(L, v.array); return;
  }
}

/// CR and LF become spaces (addReplyErrorFormat, sdsmapchars for statuses).
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\r', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

/// (long long) of a double as x86-64 converts it: out of range or NaN is
/// INT64_MIN (C leaves it undefined; Redis runs on what the CPU does).
std::int64_t truncate(lua_Number d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<std::int64_t>(d);
}

std::string raw_string_field(lua_State* L, int idx, const char* field, bool& found) {
  lua_pushstring(L, field);
  lua_rawget(L, idx < 0 ? idx - 1 : idx);
  found = lua_type(L, -1) == LUA_TSTRING;
  std::string out = found ? std::string(lua_tostring(L, -1), lua_strlen(L, -1)) : "";
  lua_pop(L, 1);
  return out;
}

/// script_lua.c luaReplyToRedisReply, RESP2 (the value at the top; not popped).
RespValue to_reply(lua_State* L, int depth = 0) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: return RespValue::bulk(std::string(lua_tostring(L, -1), lua_strlen(L, -1)));
    case LUA_TBOOLEAN: return lua_toboolean(L, -1) ? RespValue::of_integer(1) : RespValue::nil();
    case LUA_TNUMBER: return RespValue::of_integer(truncate(lua_tonumber(L, -1)));
    case LUA_TTABLE: break;
    default: return RespValue::nil();
  }
  bool found = false;
  std::string err = raw_string_field(L, -1, "err", found);
  if (found) return RespValue::error(one_line(err));
  std::string ok = raw_string_field(L, -1, "ok", found);
  if (found) return RespValue::status(one_line(ok));
  std::vector<RespValue> items;
  if (depth > 100 || !lua_checkstack(L, 4)) return RespValue::error("ERR reached lua stack limit");
  for (int j = 1;; ++j) {
    lua_rawgeti(L, -1, j);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    items.push_back(to_reply(L, depth + 1));
    lua_pop(L, 1);
  }
  return RespValue::of_array(std::move(items));
}

// --------------------------------------------------------------- redis.call --

/// script_lua.c luaArgsToRedisArgv: pops the arguments; false when one is
/// neither a string nor a number (numbers are "%.17g", as Lua's own
/// tostring would lose precision).
bool lua_args(lua_State* L, std::vector<std::string>& argv) {
  const int argc = lua_gettop(L);
  bool ok = true;
  for (int j = 1; j <= argc && ok; ++j) {
    if (lua_type(L, j) == LUA_TNUMBER) {
      char buf[64];
      const int n = std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(lua_tonumber(L, j)));
      argv.emplace_back(buf, static_cast<std::size_t>(n));
    } else if (lua_isstring(L, j)) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      argv.emplace_back(s, len);
    } else {
      ok = false;
    }
  }
  lua_pop(L, argc);
  return ok;
}

/// script_lua.c luaRedisGenericCommand and script.c scriptCall. Leaves one
/// value on the stack; `raise` says whether the caller must raise it.
void redis_command(lua_State* L, bool raise_error, bool& raise) {
  ScriptCache::State& s = ScriptAccess::state(L);
  raise = raise_error;
  if (s.call == nullptr) {
    raise = true;
    push_error(L, "redis.call/pcall can only be called inside a script invocation");
    return;
  }
  if (lua_gettop(L) == 0) return push_error(L, "Please specify at least one argument for this redis lib call");
  std::vector<std::string> argv;
  if (!lua_args(L, argv)) return push_error(L, "Lua redis lib command arguments must be strings or integers");
  switch (check_command(argv)) {
    case CommandCheck::kUnknown: return push_command_error(L, "Unknown Redis command called from script");
    case CommandCheck::kWrongArity:
      return push_command_error(L, "Wrong number of args calling Redis command from script");
    case CommandCheck::kNotFromScript: return push_command_error(L, "This Redis command is not allowed from script");
    case CommandCheck::kOk: break;
  }
  const RespValue reply = (*s.call)(argv);
  raise = raise_error && reply.is_error();
  push_reply(L, reply);
}

int l_redis_call(lua_State* L) {
  bool raise = false;
  redis_command(L, true, raise);
  return raise ? lua_error(L) : 1;
}

int l_redis_pcall(lua_State* L) {
  bool raise = false;
  redis_command(L, false, raise);
  return raise ? lua_error(L) : 1;
}

/// script_lua.c luaRedisPcall: Lua's pcall, but an error table becomes its
/// "err" string (what scripts written for Redis 6 expect).
int l_pcall(lua_State* L) {
  luaL_checkany(L, 1);
  const int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) lua_replace(L, -2);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

void push_sha1hex(lua_State* L, const char* s, std::size_t len) {
  const std::string digest = ScriptCache::sha1hex(std::string(s != nullptr ? s : "", s != nullptr ? len : 0));
  lua_pushstring(L, digest.c_str());
}

int l_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    push_error(L, "wrong number of arguments");
    return lua_error(L);
  }
  std::size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  push_sha1hex(L, s, len);
  return 1;
}

void push_error_reply(lua_State* L) {
  const std::string err = lua_tostring(L, -1);
  push_error(L, err[0] != '-' ? "-" + err : err);
}

int l_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error(L, "wrong number or type of arguments");
    return 1;
  }
  push_error_reply(L);
  return 1;
}

int l_status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

/// script_lua.c luaLogCommand's checks; the simulation has no server log.
int l_log(lua_State* L) {
  if (lua_gettop(L) < 2) {
    push_error(L, "redis.log() requires two arguments or more.");
    return lua_error(L);
  }
  if (!lua_isnumber(L, 1)) {
    push_error(L, "First argument must be a number (log level).");
    return lua_error(L);
  }
  const int level = static_cast<int>(lua_tonumber(L, 1));  // LL_DEBUG..LL_WARNING
  if (level < 0 || level > 3) {
    push_error(L, "Invalid debug level.");
    return lua_error(L);
  }
  return 0;
}

/// redis.set_repl and redis.setresp: accepted; effects always replicate and
/// replies are RESP2 (script.hpp). redis.debug: a no-op without the debugger.
int l_accept(lua_State*) { return 0; }

/// redis.breakpoint (false: no debugger) and redis.replicate_commands
/// (deprecated in 7.0: does nothing, returns true) — eval.c.
int l_false(lua_State* L) { return lua_pushboolean(L, 0), 1; }
int l_true(lua_State* L) { return lua_pushboolean(L, 1), 1; }

/// script_lua.c luaRedisAclCheckCmdPermissionsCommand: the simulated server
/// has only the default user, who may run every command.
void acl_check(lua_State* L, bool& raise) {
  std::vector<std::string> argv;
  raise = true;
  if (lua_gettop(L) == 0) return push_error(L, "Please specify at least one argument for this redis lib call");
  if (!lua_args(L, argv)) return push_error(L, "Lua redis lib command arguments must be strings or integers");
  if (check_command(argv) == CommandCheck::kUnknown) {
    return push_error(L, "Invalid command passed to redis.acl_check_cmd()");
  }
  raise = false;
  lua_pushboolean(L, 1);
}

int l_acl_check_cmd(lua_State* L) {
  bool raise = false;
  acl_check(L, raise);
  return raise ? lua_error(L) : 1;
}

/// script_lua.c redis_math_random (Lua's own math.random over lrand48).
int l_math_random(lua_State* L) {
  std::uint32_t* x = ScriptAccess::rand_state(L);
  const lua_Number r = static_cast<lua_Number>(lrand48(x) % kLrand48Max) / static_cast<lua_Number>(kLrand48Max);
  switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, r); break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default: return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int l_math_randomseed(lua_State* L) {
  srand48(ScriptAccess::rand_state(L), luaL_checkint(L, 1));
  return 0;
}

/// The instruction budget (script.hpp); once over it, fires on every line.
void count_hook(lua_State* L, lua_Debug*) {
  ScriptCache::State& s = ScriptAccess::state(L);
  if (!s.over_budget) {
    if (++s.hooks * ScriptCache::kHookEvery < ScriptCache::kInstructionBudget) return;
    s.over_budget = true;
    lua_sethook(L, count_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  }
  push_error(L, std::string("-") + ScriptCache::kBudgetError);  // the temporary is gone before lua_error
  lua_error(L);
}

// ---------------------------------------------------------- read-only globals --
//
// Redis 7.0.15 patches its Lua with read-only tables and marks the globals,
// every table reachable from them and their metatables read-only (eval.c
// scriptingInit, script_lua.c luaSetTableProtectionRecursively). Stock Lua
// 5.1 has no such flag, so each of those tables is replaced by an empty
// proxy whose reads go to the table and whose writes fail; next, pairs and
// rawget see through a proxy, rawset and setmetatable refuse it, and
// getmetatable of a proxy (or of a string) returns a read-only view.

const char* const kReadonly = "Attempt to modify a readonly table";

/// A write through a proxy: a VM-level error in Redis, so with the line.
int l_readonly(lua_State* L) { return luaL_error(L, kReadonly); }

/// script_lua.c luaProtectedTableError, behind the globals proxy's __index.
int l_global_index(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  if (!lua_isstring(L, 2)) return luaL_error(L, "Script attempted to access nonexistent global variable");
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

/// Pushes the table a proxy at `idx` stands for, or nil if it is no proxy.
void push_original(lua_State* L, int idx) {
  idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
  lua_pushlightuserdata(L, const_cast<char*>(&kProtectedKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}

/// Replaces argument 1 with the table it is a proxy of (if it is one).
void unwrap_first(lua_State* L) {
  push_original(L, 1);
  if (lua_istable(L, -1)) {
    lua_replace(L, 1);
  } else {
    lua_pop(L, 1);
  }
}

int l_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  unwrap_first(L);
  lua_settop(L, 2);
  return lua_next(L, 1) != 0 ? 2 : (lua_pushnil(L), 1);
}

int l_pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushcfunction(L, l_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int l_rawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  unwrap_first(L);
  lua_settop(L, 2);
  lua_rawget(L, 1);
  return 1;
}

bool is_proxy(lua_State* L, int idx) {
  push_original(L, idx);
  const bool yes = lua_istable(L, -1);
  lua_pop(L, 1);
  return yes;
}

/// rawset and setmetatable on a read-only table: Redis raises from C,
/// without a line.
int refuse(lua_State* L) {
  lua_pushstring(L, kReadonly);
  return lua_error(L);
}

int l_rawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (is_proxy(L, 1)) return refuse(L);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

/// base's setmetatable, kept as upvalue 1, unless the table is read-only.
int l_setmetatable(lua_State* L) {
  if (lua_istable(L, 1) && is_proxy(L, 1)) return refuse(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/// Pushes a read-only proxy of the table at the top (which stays below it).
void push_proxy(lua_State* L, lua_CFunction index) {
  const int original = lua_gettop(L);
  lua_newtable(L);  // the proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, original);
  if (index != nullptr) lua_pushcclosure(L, index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_readonly);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_pushlightuserdata(L, const_cast<char*>(&kProtectedKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, original);
  lua_rawset(L, -3);  // protected[proxy] = original
  lua_pop(L, 1);
}

/// Makes getmetatable(x) return a read-only view of x's metatable `mt`
/// (at the top) through its __metatable field.
void guard_metatable(lua_State* L) {
  push_proxy(L, nullptr);
  lua_setfield(L, -2, "__metatable");
}

/// Replaces the table at the top with its proxy, metatable guarded.
void make_proxy(lua_State* L, lua_CFunction index) {
  push_proxy(L, index);
  lua_getmetatable(L, -1);
  guard_metatable(L);
  lua_pop(L, 1);
  lua_replace(L, -2);
}

void protect_globals(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(&kProtectedKey));
  lua_newtable(L);
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pushstring(L, "");
  lua_getmetatable(L, -1);  // the strings' metatable: its __index is `string`
  guard_metatable(L);
  lua_pop(L, 2);
  for (const char* lib : {"string", "table", "math", "redis", "cjson", "bit", "coroutine"}) {
    lua_getglobal(L, lib);
    make_proxy(L, nullptr);
    lua_setglobal(L, lib);
  }
  lua_pushlightuserdata(L, const_cast<char*>(&kGlobalsKey));
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  make_proxy(L, l_global_index);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "_G");            // _G is the proxy
  lua_replace(L, LUA_GLOBALSINDEX);  // and so are the globals of every chunk
}

// ----------------------------------------------------------------- the state --

void load_lib(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

void set_fn(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
}

void set_number(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

/// script_lua.c luaRegisterRedisAPI (7.0.15's names and numbers).
void register_redis_api(lua_State* L) {
  lua_newtable(L);
  set_fn(L, "call", l_redis_call);
  set_fn(L, "pcall", l_redis_pcall);
  set_fn(L, "log", l_log);
  set_number(L, "LOG_DEBUG", 0);
  set_number(L, "LOG_VERBOSE", 1);
  set_number(L, "LOG_NOTICE", 2);
  set_number(L, "LOG_WARNING", 3);
  set_number(L, "REDIS_VERSION_NUM", 0x0007000f);
  lua_pushstring(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
  set_fn(L, "setresp", l_accept);
  set_fn(L, "sha1hex", l_sha1hex);
  set_fn(L, "error_reply", l_error_reply);
  set_fn(L, "status_reply", l_status_reply);
  set_fn(L, "set_repl", l_accept);
  set_fn(L, "replicate_commands", l_true);
  set_fn(L, "breakpoint", l_false);
  set_fn(L, "debug", l_accept);
  set_fn(L, "acl_check_cmd", l_acl_check_cmd);
  set_number(L, "REPL_NONE", 0);
  set_number(L, "REPL_AOF", 1);
  set_number(L, "REPL_SLAVE", 2);
  set_number(L, "REPL_REPLICA", 2);
  set_number(L, "REPL_ALL", 3);
  lua_setglobal(L, "redis");
  lua_getglobal(L, "math");
  set_fn(L, "random", l_math_random);
  set_fn(L, "randomseed", l_math_randomseed);
  lua_pop(L, 1);
}

/// eval.c scriptingInit's error handler, verbatim: it adds the source and
/// line of the failing frame to the error table.
const char* const kErrorHandler =
    "local dbg = debug\n"
    "debug = nil\n"
    "function __redis__err__handler(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}"
    "  end"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end"
    "  return err\n"
    "end\n";

/// Lua's allocator with ScriptCache::kMemoryLimit: past it an allocation
/// fails, which Lua reports as "not enough memory" (the script fails; the
/// simulation does not run out of memory on one script's say-so).
void* bounded_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* s = static_cast<ScriptCache::State*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    s->bytes -= osize;
    return nullptr;
  }
  if (nsize > osize && s->bytes + (nsize - osize) > ScriptCache::kMemoryLimit) return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (p != nullptr) s->bytes = s->bytes - osize + nsize;
  return p;
}

/// A Lua error outside any protected call (setting up the interpreter):
/// Lua would exit the process; this is a bug in fencesim, so say so.
int panic(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "fencesim: internal error in the Lua engine: %s\n", msg != nullptr ? msg : "?");
  std::abort();
}

lua_State* new_interpreter(ScriptCache::State* state) {
  lua_State* L = lua_newstate(bounded_alloc, state);
  lua_atpanic(L, panic);
  lua_pushlightuserdata(L, const_cast<char*>(&kStateKey));
  lua_pushlightuserdata(L, state);
  lua_rawset(L, LUA_REGISTRYINDEX);
  load_lib(L, "", luaopen_base);
  load_lib(L, LUA_TABLIBNAME, luaopen_table);
  load_lib(L, LUA_STRLIBNAME, luaopen_string);
  load_lib(L, LUA_MATHLIBNAME, luaopen_math);
  load_lib(L, LUA_DBLIBNAME, luaopen_debug);
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");  // Redis builds its cjson with ENABLE_CJSON_GLOBAL
  load_lib(L, "bit", luaopen_bit);
  // script_lua.c's deny list (dofile, loadfile, print), and what 7.0.15's
  // globals lack besides (getfenv, setfenv, newproxy: not in a real
  // server's _G).
  for (const char* absent : {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, absent);
  }
  lua_pushcfunction(L, l_pcall);
  lua_setglobal(L, "pcall");
  const std::pair<const char*, lua_CFunction> see_through[] = {
      {"rawset", l_rawset}, {"rawget", l_rawget}, {"next", l_next}, {"pairs", l_pairs}};
  for (const auto& [name, fn] : see_through) {
    lua_pushcfunction(L, fn);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, l_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  register_redis_api(L);
  luaL_loadbuffer(L, kErrorHandler, std::char_traits<char>::length(kErrorHandler), "@err_handler_def");
  lua_pcall(L, 0, 0, 0);
  protect_globals(L);
  return L;
}

void push_string_array(lua_State* L, const std::vector<std::string>& items) {
  lua_newtable(L);
  for (std::size_t j = 0; j < items.size(); ++j) {
    lua_pushlstring(L, items[j].data(), items[j].size());
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// luaCallFunction's error reply: "<err> script: <sha>, on <source>:<line>.".
RespValue script_error(lua_State* L, const std::string& sha) {
  if (!lua_istable(L, -1)) {
    const std::string msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    return RespValue::error(one_line(fmt::format("ERR Error running script {}, {}", sha, msg.substr(0, 100))));
  }
  bool has_err = false, has_source = false;
  const std::string err = raw_string_field(L, -1, "err", has_err);
  const std::string source = raw_string_field(L, -1, "source", has_source);
  lua_pushstring(L, "line");
  lua_rawget(L, -2);
  const bool has_line = lua_isstring(L, -1) != 0;
  const std::string line = has_line ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  std::string msg = has_err ? err : "(null)";
  if (has_line && has_source) msg += fmt::format(" script: {}, on {}:{}.", sha, source, line);
  return RespValue::error(one_line(msg));
}

}  // namespace

ScriptCache::State& ScriptAccess::state(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(&kStateKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* s = static_cast<ScriptCache::State*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *s;
}

ScriptCache::ScriptCache() : state_(std::make_unique<State>()), rand_x_{0x330E, 0xABCD, 0x1234} {
  state_->owner = this;
  state_->L = new_interpreter(state_.get());
}

ScriptCache::~ScriptCache() = default;

std::string ScriptCache::sha1hex(const std::string& body) {
  boost::uuids::detail::sha1 h;
  h.process_bytes(body.data(), body.size());
  boost::uuids::detail::sha1::digest_type digest;
  h.get_digest(digest);
  std::string out;
  for (unsigned word : digest) out += fmt::format("{:08x}", word);
  return out;
}

void ScriptCache::flush() {
  state_ = std::make_unique<State>();
  state_->owner = this;
  state_->L = new_interpreter(state_.get());
}

bool ScriptCache::exists(const std::string& sha) const { return state_->scripts.count(lower(sha)) != 0; }

RespValue ScriptCache::compile(const std::string& body, std::string& sha) {
  sha = sha1hex(body);
  if (state_->scripts.count(sha) != 0) return RespValue::bulk(sha);
  lua_State* L = state_->L;
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    const std::string msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    return RespValue::error(one_line("ERR Error compiling script (new function): " + msg));
  }
  lua_setfield(L, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  state_->scripts.insert(sha);
  return RespValue::bulk(sha);
}

RespValue ScriptCache::script_load(const std::string& body) {
  std::string sha;
  return compile(body, sha);
}

RespValue ScriptCache::eval(const std::string& body, const std::vector<std::string>& keys,
                            const std::vector<std::string>& args, const CommandCall& call) {
  std::string sha;
  RespValue compiled = compile(body, sha);
  if (compiled.is_error()) return compiled;
  return run(sha, keys, args, call);
}

RespValue ScriptCache::evalsha(const std::string& sha, const std::vector<std::string>& keys,
                               const std::vector<std::string>& args, const CommandCall& call) {
  if (sha.size() != 40 || !exists(sha)) return RespValue::error("NOSCRIPT No matching script. Please use EVAL.");
  return run(lower(sha), keys, args, call);
}

/// eval.c evalGenericCommand + script_lua.c luaCallFunction.
RespValue ScriptCache::run(const std::string& sha, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args, const CommandCall& call) {
  lua_State* L = state_->L;
  lua_pushlightuserdata(L, const_cast<char*>(&kGlobalsKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  push_string_array(L, keys);
  lua_setfield(L, -2, "KEYS");  // the real globals table: no metatable
  push_string_array(L, args);
  lua_setfield(L, -2, "ARGV");
  lua_getfield(L, -1, "__redis__err__handler");
  lua_replace(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  state_->call = &call;
  state_->hooks = 0;
  state_->over_budget = false;
  lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookEvery);
  const int err = lua_pcall(L, 0, 1, -2);
  lua_sethook(L, nullptr, 0, 0);
  state_->call = nullptr;
  if (++state_->gc_count == 50) {  // luaCallFunction's LUA_GC_CYCLE_PERIOD
    lua_gc(L, LUA_GCSTEP, 50);
    state_->gc_count = 0;
  }
  RespValue reply = err != 0 ? script_error(L, sha) : to_reply(L);
  lua_pop(L, 2);  // the result (or error) and the handler
  return reply;
}

RespValue ScriptCache::execute_script_command(const std::vector<std::string>& argv) {
  const std::string sub = lower(argv[1]);
  auto arity = [](const char* name) {
    return RespValue::error(fmt::format("ERR wrong number of arguments for 'script|{}' command", name));
  };
  if (sub == "load") return argv.size() != 3 ? arity("load") : script_load(argv[2]);
  if (sub == "exists") {
    if (argv.size() < 3) return arity("exists");
    std::vector<RespValue> out;
    for (std::size_t j = 2; j < argv.size(); ++j) out.push_back(RespValue::of_integer(exists(argv[j]) ? 1 : 0));
    return RespValue::of_array(std::move(out));
  }
  if (sub == "flush") {
    if (argv.size() > 3 || (argv.size() == 3 && lower(argv[2]) != "sync" && lower(argv[2]) != "async")) {
      return RespValue::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    flush();
    return RespValue::status("OK");
  }
  if (sub == "kill") {
    // No script runs while a command arrives: the simulation runs one at a time.
    return argv.size() != 2 ? arity("kill") : RespValue::error("NOTBUSY No scripts in execution right now.");
  }
  return RespValue::error(
      one_line(fmt::format("ERR unknown subcommand '{}'. Try SCRIPT HELP.", argv[1].substr(0, 128))));
}

RespValue ScriptCache::execute(Keyspace& keys, const std::vector<std::string>& argv, const ExpiryClock& clock,
                               std::vector<Effect>& effects) {
  const std::string name = argv.empty() ? "" : lower(argv[0]);
  if (name == "script" && argv.size() >= 2) return execute_script_command(argv);
  if ((name != "eval" && name != "evalsha") || argv.size() < 3) return commands::execute(keys, argv, clock, effects);
  if (name == "evalsha" && argv[1].size() != 40)
    return RespValue::error("NOSCRIPT No matching script. Please use EVAL.");
  std::int64_t numkeys = 0;
  if (!string_to_int64(argv[2], numkeys)) return RespValue::error("ERR value is not an integer or out of range");
  const auto rest = static_cast<std::int64_t>(argv.size()) - 3;
  if (numkeys > rest) return RespValue::error("ERR Number of keys can't be greater than number of args");
  if (numkeys < 0) return RespValue::error("ERR Number of keys can't be negative");
  const std::vector<std::string> key_list(argv.begin() + 3, argv.begin() + 3 + numkeys);
  const std::vector<std::string> arg_list(argv.begin() + 3 + numkeys, argv.end());
  const CommandCall call = [&](const std::vector<std::string>& a) {
    return commands::execute(keys, a, clock, effects);
  };
  return name == "eval" ? eval(argv[1], key_list, arg_list, call) : evalsha(argv[1], key_list, arg_list, call);
}

}  // namespace fencesim::redis::commands
