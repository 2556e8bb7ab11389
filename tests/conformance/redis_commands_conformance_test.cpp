// models/redis/commands (commands::execute and ScriptCache) against a real
// redis-server 7.0 (Debian 12 ships 7.0.15, the source the model cites).
//
// One list of steps — plain commands, their syntax and arity errors, EVAL
// and EVALSHA with the scripts lock clients send (the seed article's,
// redis-py 4.3's Lock), every script-side error path, conversions, the
// read-only globals, math.random, cjson and bit — is sent to a fresh
// redis-server over hiredis and to a fresh Keyspace + ScriptCache, and the
// replies are compared exactly (errors with their whole text, not only the
// code). The model reads the same wall clock as the real server at each
// step, so PXAT and the TTLs agree; a TTL in milliseconds may differ by the
// time between the two sends and is compared within 1 s ("pttl ~N").
//
// Not compared: error({}) (an error table without "err": 7.0.15's
// luaCallFunction formats its NULL message and the real server crashes;
// the model answers "(null) script: …"), and a script that loops for ever (the real server would answer
// BUSY to other clients after busy-reply-threshold and need SCRIPT KILL;
// the model stops it at its instruction budget: tests/models/redis).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/redis/commands/commands.hpp"
#include "models/redis/commands/script.hpp"
#include "tests/conformance/conformance.hpp"

namespace fencesim::conformance {
namespace {

using namespace std::chrono_literals;
using redis::commands::ExpiryClock;
using redis::commands::Keyspace;
using redis::commands::RespValue;
using redis::commands::ScriptCache;
using Argv = std::vector<std::string>;

RespValue from_hiredis(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING: return RespValue::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS: return RespValue::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return RespValue::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return RespValue::of_integer(r->integer);
    case REDIS_REPLY_NIL: return RespValue::nil();
    case REDIS_REPLY_ARRAY: {
      std::vector<RespValue> items;
      for (std::size_t i = 0; i < r->elements; ++i) items.push_back(from_hiredis(r->element[i]));
      return RespValue::of_array(std::move(items));
    }
    default: return RespValue::error(fmt::format("(hiredis reply type {})", r->type));
  }
}

/// One redis-server on a free loopback port, no persistence; stopped on
/// destruction (and so on a failed assertion or an exception).
class Server {
 public:
  explicit Server(const std::filesystem::path& dir) {
    const std::string bin = require_program("redis-server", "redis-server", {}, "FENCESIM_REDIS_SERVER");
    for (int attempt = 0; attempt < 3 && c_ == nullptr; ++attempt) {
      port_ = free_port();
      child_ = std::make_unique<Child>(Argv{bin, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                                            "--appendonly", "no", "--dir", dir.string(), "--daemonize", "no"},
                                       dir / "stdout", dir / "stderr");
      connect();
    }
    if (c_ == nullptr) throw std::runtime_error("redis-server did not start: " + tail(dir / "stdout"));
  }
  ~Server() {
    if (c_ != nullptr) redisFree(c_);
    if (child_) child_->stop();
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  RespValue send(const Argv& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) throw std::runtime_error(std::string("redis: ") + c_->errstr);
    RespValue v = from_hiredis(r);
    freeReplyObject(r);
    return v;
  }

 private:
  void connect() {
    const auto end = Clock::now() + 10s;
    while (Clock::now() < end && child_->running()) {
      redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, timeval{1, 0});
      if (c != nullptr && c->err == 0) {
        redisSetTimeout(c, timeval{15, 0});
        c_ = c;
        return;
      }
      if (c != nullptr) redisFree(c);
      std::this_thread::sleep_for(20ms);
    }
    child_->stop();
  }
  int port_ = 0;
  std::unique_ptr<Child> child_;
  redisContext* c_ = nullptr;
};

/// The model's side: a primary's keyspace at the wall clock's reading.
struct Model {
  Keyspace keys;
  ScriptCache scripts;
  std::vector<redis::Effect> effects;
  RespValue send(const Argv& argv) {
    const auto wall = std::chrono::duration_cast<sim::Duration>(std::chrono::system_clock::now().time_since_epoch());
    return scripts.execute(keys, argv, ExpiryClock{sim::Time{wall.count()}, sim::Time{wall.count()}, true}, effects);
  }
};

/// A step: its argv and how its answer is compared (exactly, or a TTL in
/// ms within 1 s).
struct Step {
  Step(Argv a, bool ms = false, std::string dev = "") : argv(std::move(a)), ttl_ms(ms), deviation(std::move(dev)) {}
  Argv argv;
  bool ttl_ms = false;
  std::string deviation;
};

std::string answer(const Step& s, const RespValue& v) {
  if (s.ttl_ms && v.kind == RespValue::Kind::kInteger && v.integer > 0) {
    return fmt::format("pttl ~{}", (v.integer + 500) / 1000 * 1000);
  }
  return v.describe();
}

const char* const kSeedAcquire =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return "
    "false";
// redis-py 4.3.4 redis/lock.py (Debian python3-redis 4.3.4-3), verbatim.
const char* const kRedisPyRelease = R"(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('del', KEYS[1])
        return 1
    )";
const char* const kRedisPyExtend = R"(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        local expiration = redis.call('pttl', KEYS[1])
        if not expiration then
            expiration = 0
        end
        if expiration < 0 then
            return 0
        end

        local newttl = ARGV[2]
        if ARGV[3] == "0" then
            newttl = ARGV[2] + expiration
        end
        redis.call('pexpire', KEYS[1], newttl)
        return 1
    )";
const char* const kRedisPyReacquire = R"(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 1
    )";

Argv eval(const std::string& body, Argv rest = {"0"}) {
  Argv a = {"EVAL", body};
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

std::vector<Step> command_steps() {
  const std::string far = std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count() +
      100'000);
  return {
      {{"SET", "k", "v"}},
      {{"GET", "k"}},
      {{"get", "nope"}},
      {{"SET", "k", "w", "NX"}},
      {{"SET", "k", "w", "XX", "GET"}},
      {{"SET", "n", "w", "XX"}},
      {{"SET", "n", "w", "NX", "GET"}},
      {{"SET", "k"}},
      {{"GET"}},
      {{"FOO", "a", "b"}},
      {{"FOO"}},
      {{"foo", std::string(200, 'x'), "y"}},
      {{"SET", "k", "v", "NX", "XX"}},
      {{"SET", "k", "v", "PX"}},
      {{"SET", "k", "v", "EX", "1", "PX", "1"}},
      {{"SET", "k", "v", "EX", "1", "EX", "100"}},
      {{"SET", "k", "v", "KEEPTTL", "PX", "1"}},
      {{"SET", "k", "v", "PX", "abc"}},
      {{"SET", "k", "v", "PX", "0"}},
      {{"SET", "k", "v", "EX", "-5"}},
      {{"SET", "k", "v", "EX", "9223372036854775807"}},
      {{"SET", "k", "v", "BOGUS"}},
      {{"SET", "t", "v", "PX", "100000"}},
      {{"PTTL", "t"}, true},
      {{"TTL", "t"}},
      {{"SET", "t", "w", "KEEPTTL"}},
      {{"PTTL", "t"}, true},
      {{"SET", "t", "v", "PXAT", far}},
      {{"PTTL", "t"}, true},
      {{"PERSIST", "t"}},
      {{"PERSIST", "t"}},
      {{"PTTL", "t"}},
      {{"PTTL", "nope"}},
      {{"TTL", "nope"}},
      {{"PEXPIRE", "t", "50000", "XX"}},
      {{"PEXPIRE", "t", "50000", "GT"}},
      {{"PEXPIRE", "t", "50000", "NX"}},
      {{"PEXPIRE", "t", "90000", "NX"}},
      {{"PEXPIRE", "t", "90000", "LT"}},
      {{"PEXPIRE", "t", "10000", "LT"}},
      {{"EXPIRE", "t", "100", "GT"}},
      {{"PTTL", "t"}, true},
      {{"PEXPIRE", "t", "1", "NX", "XX"}},
      {{"PEXPIRE", "t", "1", "GT", "LT"}},
      {{"PEXPIRE", "t", "1", "YY"}},
      {{"PEXPIRE", "t", "x"}},
      {{"EXPIRE", "t", "9223372036854775807"}},
      {{"PEXPIRE", "nope", "100"}},
      {{"PEXPIREAT", "t", far}},
      {{"PTTL", "t"}, true},
      {{"PEXPIRE", "t", "-1"}},
      {{"EXISTS", "t", "k", "k", "nope"}},
      {{"DEL", "k", "nope", "k"}},
      {{"SETNX", "s", "1"}},
      {{"SETNX", "s", "2"}},
      {{"GETDEL", "s"}},
      {{"GETDEL", "s"}},
      {{"INCR", "c"}},
      {{"INCRBY", "c", "10"}},
      {{"DECR", "c"}},
      {{"DECRBY", "c", "3"}},
      {{"INCRBY", "c", "1.5"}},
      {{"SET", "a", "abc"}},
      {{"INCR", "a"}},
      {{"SET", "big", "9223372036854775807"}},
      {{"INCR", "big"}},
      {{"DECRBY", "c", "-9223372036854775808"}},
      {{"SET", "z", "01"}},
      {{"INCR", "z"}},
      {{"SET", "z", "-0"}},
      {{"INCR", "z"}},
      {{"INCR"}},
      {{"DEL"}},
      {{"PEXPIRE", "t"}},
      {{"SET", "far", "v", "PX", "1000000000000000"}},
      {{"GET", "far"}},
      {{"PEXPIRE", "far", "9223372036854775000"}},
      {{"PEXPIREAT", "far", "9223372036854775000"}},
      {{"EXISTS", "far"}},
  };
}

std::vector<Step> script_steps() {
  const std::string sha_release = ScriptCache::sha1hex(kRedisPyRelease);
  return {
      {eval("return {math.random(), math.random(100), math.random(5, 10)}")},
      {eval("math.randomseed(42) return {math.random(1000000), math.random(1000000)}")},
      {eval(kSeedAcquire, {"2", "lock", "lock:token", "v1", "10000"})},
      {eval(kSeedAcquire, {"2", "lock", "lock:token", "v2", "10000"})},
      {{"GET", "lock:token"}},
      {{"PTTL", "lock"}, true},
      {eval(kRedisPyExtend, {"1", "lock", "v1", "5000", "0"})},
      {{"PTTL", "lock"}, true},
      {eval(kRedisPyExtend, {"1", "lock", "v1", "5000", "1"})},
      {{"PTTL", "lock"}, true},
      {eval(kRedisPyExtend, {"1", "lock", "other", "5000", "1"})},
      {eval(kRedisPyReacquire, {"1", "lock", "v1", "8000"})},
      {{"PTTL", "lock"}, true},
      {eval(kRedisPyReacquire, {"1", "lock", "other", "8000"})},
      {{"EVALSHA", sha_release, "1", "lock", "v1"}},
      {{"EVALSHA", "abc", "0"}},
      {{"SCRIPT", "EXISTS", sha_release, "nope"}},
      {{"SCRIPT", "LOAD", kRedisPyRelease}},
      {{"SCRIPT", "EXISTS", sha_release, "nope"}},
      {{"EVALSHA", sha_release, "1", "lock", "other"}},
      {{"EVALSHA", sha_release, "1", "lock", "v1"}},
      {{"EXISTS", "lock"}},
      {eval(kRedisPyRelease, {"1", "lock", "v1"})},
      {{"SET", "lock", "v1"}},
      {eval(kRedisPyExtend, {"1", "lock", "v1", "5000", "0"})},
      {{"SCRIPT", "LOAD"}},
      {{"SCRIPT", "BOGUS"}},
      {{"SCRIPT", "FLUSH", "NOW"}},
      {{"SCRIPT", "KILL"}},
      {{"SCRIPT"}},
      {{"SCRIPT", "FLUSH"}},
      {{"EVALSHA", sha_release, "1", "lock", "v1"}},
      {{"EVAL", "return 1"}},
      {eval("return 1", {"x"})},
      {eval("return 1", {"2", "a"})},
      {eval("return 1", {"-1"})},
      {{"EVALSHA", sha_release, "x"}},
      {eval("return {1, 'two', true, false, 3.99, -3.99, {ok='fine'}, {1, {2}}, nil, 4}")},
      {eval("return 1e20")},
      {eval("return -1e20")},
      {eval("return 0/0")},
      {eval("return {}")},
      {eval("return nil")},
      {eval("return true")},
      {eval("return {err='MY table'}")},
      {eval("return {ok='a\\r\\nb'}")},
      {eval("return redis.status_reply('FINE')")},
      {eval("return redis.error_reply('MY x')")},
      {eval("return redis.error_reply('x')")},
      {eval("return redis.error_reply('-MY y')")},
      {eval("return redis.error_reply(1)")},
      {eval("return redis.status_reply()")},
      {eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", {"1", "a", "b", "c"})},
      {eval("return redis.call('SET', 'n', 0.1)")},
      {{"GET", "n"}},
      {eval("return redis.call('SET', 'n', 12345678901234)")},
      {{"GET", "n"}},
      {eval("return redis.call('GET', 'nope')")},
      {eval("return type(redis.call('GET', 'nope'))")},
      {eval("return redis.call('SET', 'k', 'v')['ok']")},
      {eval("return redis.pcall('INCR', 'k')['err']")},
      {eval("return redis.call('INCR', 'k')")},
      {eval("return redis.pcall('INCR', 'k')")},
      {eval("return redis.call('nosuch')")},
      {eval("return redis.pcall('nosuch')")},
      {eval("return redis.call('set', 'a')")},
      {eval("return redis.pcall('set', 'a')")},
      {eval("return redis.call('incr', 'a', {})")},
      {eval("return redis.call()")},
      {eval("return redis.call('eval', 'return 1', '0')")},
      {eval("return redis.call('script', 'load', 'x')")},
      {eval("error('boom')")},
      {eval("\nerror({err='MY boom'})")},
      {eval("error()")},
      {eval("error(42)")},
      {eval("syntax error here")},
      {eval("return 'unfinished")},
      {eval("return pcall(function() redis.call('INCR', 'k') end)")},
      {eval("local ok, e = pcall(function() redis.call('INCR', 'k') end) return e")},
      {eval("local ok, e = pcall(error, {err='X y'}) return e")},
      {eval("return {pcall(error, {1})}")},
      {eval("x = 1")},
      {eval("return x")},
      {eval("string.x = 1")},
      {eval("redis.call = nil")},
      {eval("_G.y = 2")},
      {eval("local t = {} t.x = 1 return t.x")},
      {eval("return type(os)")},
      {eval("return type(io)")},
      {eval("return type(print)")},
      {eval("return type(dofile)")},
      {eval("return type(loadfile)")},
      {eval("return type(debug)")},
      {eval("return type(package)")},
      {eval("return type(require)")},
      {eval("return {type(loadstring), type(pcall), type(coroutine)}")},
      {eval("return loadstring('return 7')()")},
      {eval("return redis.REDIS_VERSION")},
      {eval("return redis.REDIS_VERSION_NUM")},
      {eval("return redis.log(redis.LOG_WARNING, 'hello')")},
      {eval("return redis.log(redis.LOG_WARNING)")},
      {eval("return redis.log('x', 'y')")},
      {eval("return redis.log(9, 'y')")},
      {eval("return redis.sha1hex('')")},
      {eval("return redis.sha1hex()")},
      {eval("return {type(cjson), type(bit)}")},
      {eval("return cjson.encode({1, 2, 'x'})")},
      {eval("return cjson.decode('[1,2,3]')[3]")},
      {eval("return cjson.encode({a=1})")},
      {eval("return bit.tohex(bit.band(0xff, 0x0f))")},
      {eval("return bit.bxor(5, 3)")},
      {eval("return {string.format('%d-%s', 3, 'x'), table.concat({1, 2}, ','), string.rep('a', 3)}")},
      {eval("return math.floor(7.5) + math.max(1, 9)")},
      {eval("return tonumber('0x10')")},
      {eval("rawset(_G, 'x', 1)")},
      {eval("setmetatable(_G, {})")},
      {eval("return type(getmetatable(_G))")},
      {eval("getmetatable(_G).__index = nil")},
      {eval("getmetatable('').__index = nil")},
      {eval("return string.upper('still works')")},
      {eval("return rawget(_G, 'redis') ~= nil")},
      {eval("return rawget(_G, 'nope')")},
      {eval("return rawget(string, 'rep') ~= nil")},
      {eval("local t = {} for k in pairs(_G) do if k ~= 'struct' and k ~= 'cmsgpack' then t[#t+1] = k end end "
            "table.sort(t) return table.concat(t, ' ')")},
      {eval("local n = 0 for k, v in pairs(redis) do n = n + 1 end return n")},
      {eval("local n = 0 for k in next, math do n = n + 1 end return n")},
      {eval("local t = {} for k in pairs(string) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')")},
      {eval("local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')")},
      {eval("local t = {} for k in pairs(bit) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')")},
      {eval("KEYS[1] = 'x' return KEYS[1]", {"1", "k"})},
      {eval("return type(newproxy)")},
      {eval("return type(getfenv)")},
      {eval("return _VERSION")},
      {eval("return string.format('%.17g', math.pi)")},
      {eval("return redis.acl_check_cmd('get')")},
      {eval("return redis.acl_check_cmd('nosuch')")},
      {eval("return redis.acl_check_cmd()")},
      {eval("return redis.replicate_commands()")},
      {eval("return redis.breakpoint()")},
      {eval("return redis.debug('x')")},
      {eval("return redis.set_repl(redis.REPL_ALL)")},
      {eval("return type(__redis__err__handler)")},
      {eval("return type(struct)"), false, "struct-cmsgpack"},
      {eval("return type(cmsgpack)"), false, "struct-cmsgpack"},
  };
}

const std::vector<Deviation>& deviations() {
  static const std::vector<Deviation> kList = {
      {"struct-cmsgpack",
       "Redis 7.0 vendors the struct and cmsgpack Lua libraries; Debian 12 ships no Lua 5.1 module of either, so "
       "the model's scripts do not have them (script.hpp)",
       "\"table\"",
       "\\(error\\) ERR user_script:1: Script attempted to access nonexistent global variable '(struct|cmsgpack)'.*",
       "\"table\"", "(error) ERR user_script:1: Script attempted to access nonexistent global variable 'struct' ...",
       nullptr},
  };
  return kList;
}

void run_steps(const std::vector<Step>& steps) {
  print_deviations("redis commands and scripts", deviations(), {});
  Transcript real("redis-server"), model("model");
  {
    TempDir dir("redis-commands");
    Server server(dir.path());
    Model m;
    for (const Step& s : steps) {
      std::string name;
      for (const std::string& a : s.argv) name += (name.empty() ? "" : " ") + a.substr(0, 60);
      real.add(name, answer(s, server.send(s.argv)), "", s.deviation);
      model.add(name, answer(s, m.send(s.argv)), "", s.deviation);
    }
  }
  compare_transcripts(real, model, deviations());
}

TEST(RedisCommandsConformance, CommandsAndTheirErrors) { run_steps(command_steps()); }

TEST(RedisCommandsConformance, ScriptsConversionsAndErrors) { run_steps(script_steps()); }

}  // namespace
}  // namespace fencesim::conformance
