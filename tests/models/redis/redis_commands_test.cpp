// models/redis/commands: Redis 7.0 commands over a keyspace (commands.hpp)
// and EVAL/EVALSHA with Lua 5.1 (script.hpp). The replies a real
// redis-server 7.0.15 gives for the same argv are compared in
// tests/conformance/redis_commands_conformance_test.cpp; here: the texts
// that matter most, the effects, the expiry arithmetic, and the scripts
// lock clients send (the seed article's, redis-py 4.3's Lock).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "models/redis/commands/commands.hpp"
#include "models/redis/commands/script.hpp"

namespace fencesim::redis::commands {

// Readable replies in gtest messages.
void PrintTo(const RespValue& v, std::ostream* os) { *os << v.describe(); }

namespace {

using namespace std::chrono_literals;
using Argv = std::vector<std::string>;

/// A primary's keyspace at a settable instant, with one script cache.
struct Server {
  Keyspace keys;
  ScriptCache scripts;
  std::vector<Effect> effects;
  Time now = Time{1'700'000'000'000'000'000};  // a wall-clock reading (ns)
  RespValue operator()(const Argv& argv) { return scripts.execute(keys, argv, ExpiryClock{now, now, true}, effects); }
  std::string show(const Argv& argv) { return (*this)(argv).describe(); }
};

RespValue err(const std::string& s) { return RespValue::error(s); }
RespValue num(std::int64_t v) { return RespValue::of_integer(v); }

// ------------------------------------------------------------ the commands --

TEST(RedisCommands, SetGetDelWithTheirReplies) {
  Server s;
  EXPECT_EQ(s({"SET", "k", "v"}), RespValue::status("OK"));
  EXPECT_EQ(s({"get", "k"}), RespValue::bulk("v"));
  EXPECT_EQ(s({"SET", "k", "w", "NX"}), RespValue::nil());
  EXPECT_EQ(s({"SET", "k", "w", "XX", "GET"}), RespValue::bulk("v"));
  EXPECT_EQ(s({"SET", "other", "w", "XX"}), RespValue::nil());
  EXPECT_EQ(s({"EXISTS", "k", "k", "nope"}), num(2));
  EXPECT_EQ(s({"DEL", "k", "nope", "k"}), num(1));
  EXPECT_EQ(s({"GET", "k"}), RespValue::nil());
  EXPECT_EQ(s({"SETNX", "n", "1"}), num(1));
  EXPECT_EQ(s({"SETNX", "n", "2"}), num(0));
  EXPECT_EQ(s({"GETDEL", "n"}), RespValue::bulk("1"));
  EXPECT_EQ(s({"GETDEL", "n"}), RespValue::nil());
}

TEST(RedisCommands, ErrorTextsAreRedis70s) {
  Server s;
  EXPECT_EQ(s({"SET", "k"}), err("ERR wrong number of arguments for 'set' command"));
  EXPECT_EQ(s({"GET"}), err("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(s({"FOO", "a", "b"}), err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(s({"FOO"}), err("ERR unknown command 'FOO', with args beginning with: "));
  EXPECT_EQ(s({"SET", "k", "v", "NX", "XX"}), err("ERR syntax error"));
  EXPECT_EQ(s({"SET", "k", "v", "PX"}), err("ERR syntax error"));
  EXPECT_EQ(s({"SET", "k", "v", "EX", "1", "PX", "1"}), err("ERR syntax error"));
  EXPECT_EQ(s({"SET", "k", "v", "KEEPTTL", "PX", "1"}), err("ERR syntax error"));
  EXPECT_EQ(s({"SET", "k", "v", "PX", "abc"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(s({"SET", "k", "v", "PX", "0"}), err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(s({"SET", "k", "v", "EX", "-5"}), err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(s({"SET", "k", "abc"}), RespValue::status("OK"));
  EXPECT_EQ(s({"INCR", "k"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(s({"INCRBY", "n", "1.5"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(s({"SET", "big", "9223372036854775807"}), RespValue::status("OK"));
  EXPECT_EQ(s({"INCR", "big"}), err("ERR increment or decrement would overflow"));
  EXPECT_EQ(s({"DECRBY", "n", "-9223372036854775808"}), err("ERR decrement would overflow"));
  EXPECT_EQ(s({"PEXPIRE", "k", "100", "NX", "XX"}),
            err("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(s({"PEXPIRE", "k", "100", "GT", "LT"}), err("ERR GT and LT options at the same time are not compatible"));
  EXPECT_EQ(s({"PEXPIRE", "k", "100", "YY"}), err("ERR Unsupported option YY"));
  EXPECT_EQ(s({"EXPIRE", "k", "9223372036854775807"}), err("ERR invalid expire time in 'expire' command"));
}

TEST(RedisCommands, IntegersAreRedisString2ll) {
  std::int64_t v = 0;
  EXPECT_TRUE(string_to_int64("0", v));
  EXPECT_TRUE(string_to_int64("-9223372036854775808", v));
  EXPECT_EQ(v, INT64_MIN);
  for (const char* bad : {"", "-", "-0", "01", "+1", " 1", "1 ", "9223372036854775808", "1e3"}) {
    EXPECT_FALSE(string_to_int64(bad, v)) << bad;
  }
}

TEST(RedisCommands, ExpiryTtlAndTheDeletedKeyIsPropagated) {
  Server s;
  EXPECT_EQ(s({"SET", "k", "v", "PX", "1500"}), RespValue::status("OK"));
  EXPECT_EQ(s({"PTTL", "k"}), num(1500));
  EXPECT_EQ(s({"TTL", "k"}), num(2));  // (1500 + 500) / 1000
  s.now += 1499ms;
  EXPECT_EQ(s({"PTTL", "k"}), num(1));
  s.effects.clear();
  s.now += 1ms;  // now == the deadline: expired (RedisServer::expired)
  EXPECT_EQ(s({"GET", "k"}), RespValue::nil());
  ASSERT_EQ(s.effects.size(), 1u);
  EXPECT_EQ(s.effects[0].kind, Effect::kDel);
  EXPECT_TRUE(s.keys.empty());
  EXPECT_EQ(s({"PTTL", "k"}), num(-2));
  EXPECT_EQ(s({"SET", "k", "v"}), RespValue::status("OK"));
  EXPECT_EQ(s({"PTTL", "k"}), num(-1));
}

TEST(RedisCommands, AReplicaHidesAnExpiredKeyWithoutDeletingIt) {
  Keyspace keys;
  std::vector<Effect> effects;
  const Time t0{1'000'000'000};
  execute(keys, {"SET", "k", "v", "PX", "10"}, t0, effects);
  effects.clear();
  const ExpiryClock replica{t0 + 10ms, t0 + 10ms, false};
  EXPECT_EQ(execute(keys, {"GET", "k"}, replica, effects), RespValue::nil());
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_TRUE(effects.empty());
}

TEST(RedisCommands, EffectsCarryAbsoluteDeadlines) {
  Server s;
  ASSERT_EQ(s({"SET", "k", "v", "PX", "1000"}), RespValue::status("OK"));
  ASSERT_EQ(s.effects.size(), 1u);
  EXPECT_EQ(s.effects[0].kind, Effect::kSet);
  EXPECT_TRUE(s.effects[0].has_expiry);
  EXPECT_EQ(s.effects[0].expire_at, s.now + 1s);  // PXAT
  EXPECT_EQ(s.effects[0].ttl, Duration{1s});
  s.effects.clear();
  s.now += 200ms;
  ASSERT_EQ(s({"PEXPIRE", "k", "5000"}), num(1));
  ASSERT_EQ(s.effects.size(), 1u);
  EXPECT_EQ(s.effects[0].kind, Effect::kExpire);
  EXPECT_EQ(s.effects[0].expire_at, s.now + 5s);  // PEXPIREAT
  s.effects.clear();
  ASSERT_EQ(s({"INCR", "c"}), num(1));
  ASSERT_EQ(s({"INCRBY", "c", "5"}), num(6));
  ASSERT_EQ(s.effects.size(), 2u);
  EXPECT_EQ(s.effects[0].kind, Effect::kIncr);
  EXPECT_EQ(s.effects[1].kind, Effect::kSet);
  EXPECT_EQ(s.effects[1].value, "6");
  s.effects.clear();
  EXPECT_EQ(s({"GET", "k"}), RespValue::bulk("v"));
  EXPECT_EQ(s({"PEXPIRE", "nope", "10"}), num(0));
  EXPECT_TRUE(s.effects.empty()) << "reads and refusals propagate nothing";
  EXPECT_EQ(s({"PEXPIRE", "k", "-1"}), num(1));  // already past: DEL
  ASSERT_EQ(s.effects.size(), 1u);
  EXPECT_EQ(s.effects[0].kind, Effect::kDel);
}

TEST(RedisCommands, ExpireOptionsOf70) {
  Server s;
  s({"SET", "k", "v"});
  EXPECT_EQ(s({"PEXPIRE", "k", "1000", "XX"}), num(0));  // no expiry yet
  EXPECT_EQ(s({"PEXPIRE", "k", "1000", "GT"}), num(0));  // none counts as infinite
  EXPECT_EQ(s({"PEXPIRE", "k", "1000", "NX"}), num(1));
  EXPECT_EQ(s({"PEXPIRE", "k", "2000", "NX"}), num(0));
  EXPECT_EQ(s({"PEXPIRE", "k", "2000", "LT"}), num(0));
  EXPECT_EQ(s({"PEXPIRE", "k", "500", "LT"}), num(1));
  EXPECT_EQ(s({"PEXPIRE", "k", "3000", "GT"}), num(1));
  EXPECT_EQ(s({"PTTL", "k"}), num(3000));
  EXPECT_EQ(s({"PERSIST", "k"}), num(1));
  EXPECT_EQ(s({"PERSIST", "k"}), num(0));
  EXPECT_EQ(s({"PTTL", "k"}), num(-1));
}

TEST(RedisCommands, KeepTtlAndAbsoluteDeadlines) {
  Server s;
  const std::int64_t now_ms = s.now.count() / 1'000'000;
  s({"SET", "k", "v", "PXAT", std::to_string(now_ms + 4000)});
  EXPECT_EQ(s({"PTTL", "k"}), num(4000));
  s({"SET", "k", "w", "KEEPTTL"});
  EXPECT_EQ(s({"PTTL", "k"}), num(4000));
  s({"SET", "k", "x"});
  EXPECT_EQ(s({"PTTL", "k"}), num(-1));
  s({"SET", "k", "v", "EXAT", std::to_string(now_ms / 1000 + 10)});
  EXPECT_GT(s({"PTTL", "k"}).integer, 9000);
  EXPECT_EQ(s({"PEXPIREAT", "k", std::to_string(now_ms + 100)}), num(1));
  EXPECT_EQ(s({"PTTL", "k"}), num(100));
  EXPECT_EQ(s({"DECR", "n"}), num(-1));
  EXPECT_EQ(s({"DECRBY", "n", "4"}), num(-5));
}

TEST(RedisCommands, AFarDeadlineSaturatesInsteadOfWrappingIntoThePast) {
  // The model keeps ns where Redis keeps ms: 10^15 ms does not fit, and a
  // wrapped sum would expire the key at once.
  Server s;
  EXPECT_EQ(s({"SET", "k", "v", "PX", "1000000000000000"}), RespValue::status("OK"));
  EXPECT_EQ(s({"GET", "k"}), RespValue::bulk("v"));
  EXPECT_GT(s({"PTTL", "k"}).integer, 1'000'000'000);
  EXPECT_EQ(s({"PEXPIRE", "k", "9223372036854775000"}), err("ERR invalid expire time in 'pexpire' command"));
  EXPECT_EQ(s({"PEXPIRE", "k", "2000000000000000"}), num(1));
  EXPECT_EQ(s({"EXISTS", "k"}), num(1));
  EXPECT_EQ(s({"PEXPIREAT", "k", "9223372036854775000"}), num(1));
  EXPECT_EQ(s({"EXISTS", "k"}), num(1));
}

TEST(RedisCommands, MonotonicModeCountsTtlsOnTheDecidingClock) {
  // Monotonic mode: expire_at is a monotonic reading; an absolute PXAT is
  // translated through the wall clock read at the same instant.
  Keyspace keys;
  std::vector<Effect> effects;
  const ExpiryClock clock{Time{5'000'000'000}, Time{1'700'000'000'000'000'000}, true};
  execute(keys, {"SET", "k", "v", "PXAT", std::to_string(1'700'000'000'000 + 3000)}, clock, effects);
  EXPECT_EQ(keys.at("k").expire_at, Time{5'000'000'000} + 3s);
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].ttl, Duration{3s});
}

// -------------------------------------------------------------- the scripts --

/// protocol.hpp kAcquire with a token: the seed article's script, verbatim
/// (docs/CONFORMANCE.md, real/real.cpp).
const char* const kSeedAcquire =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return "
    "false";

// redis-py 4.3.4's redis/lock.py (Debian python3-redis 4.3.4-3), verbatim.
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

TEST(RedisLua, SeedArticleAcquireReturnsTheTokenAndItsEffects) {
  Server s;
  EXPECT_EQ(s({"EVAL", kSeedAcquire, "2", "lock", "lock:token", "v1", "10000"}), num(1));
  ASSERT_EQ(s.effects.size(), 2u);
  EXPECT_EQ(s.effects[0].kind, Effect::kSet);
  EXPECT_EQ(s.effects[0].expire_at, s.now + 10s);
  EXPECT_EQ(s.effects[1].kind, Effect::kIncr);
  EXPECT_EQ(s({"EVAL", kSeedAcquire, "2", "lock", "lock:token", "v2", "10000"}), RespValue::nil());
  EXPECT_EQ(s.effects.size(), 2u) << "a refused SET NX writes nothing, and no INCR";
  s.now += 10s;
  EXPECT_EQ(s({"EVAL", kSeedAcquire, "2", "lock", "lock:token", "v3", "10000"}), num(2));
  EXPECT_EQ(s.keys.at("lock").value, "v3");
}

TEST(RedisLua, RedisPyLockScriptsVerbatim) {
  Server s;
  s({"SET", "lock", "tok", "PX", "10000"});
  EXPECT_EQ(s({"EVAL", kRedisPyExtend, "1", "lock", "tok", "5000", "0"}), num(1));
  EXPECT_EQ(s({"PTTL", "lock"}), num(15000));  // ARGV[2] + expiration, sent as "%.17g"
  EXPECT_EQ(s({"EVAL", kRedisPyExtend, "1", "lock", "tok", "5000", "1"}), num(1));
  EXPECT_EQ(s({"PTTL", "lock"}), num(5000));
  EXPECT_EQ(s({"EVAL", kRedisPyExtend, "1", "lock", "other", "5000", "1"}), num(0));
  EXPECT_EQ(s({"EVAL", kRedisPyReacquire, "1", "lock", "tok", "8000"}), num(1));
  EXPECT_EQ(s({"PTTL", "lock"}), num(8000));
  EXPECT_EQ(s({"EVAL", kRedisPyRelease, "1", "lock", "other"}), num(0));
  EXPECT_EQ(s({"EVAL", kRedisPyRelease, "1", "lock", "tok"}), num(1));
  EXPECT_EQ(s({"EXISTS", "lock"}), num(0));
  EXPECT_EQ(s({"EVAL", kRedisPyRelease, "1", "lock", "tok"}), num(0));
  s({"SET", "lock", "tok"});
  EXPECT_EQ(s({"EVAL", kRedisPyExtend, "1", "lock", "tok", "5000", "0"}), num(0)) << "no TTL: pttl is -1";
}

TEST(RedisLua, EvalshaAfterScriptLoadAndNoscriptBefore) {
  Server s;
  const std::string sha = ScriptCache::sha1hex(kRedisPyRelease);
  EXPECT_EQ(ScriptCache::sha1hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(s({"EVALSHA", sha, "1", "lock", "tok"}), err("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(s({"EVALSHA", "abc", "0"}), err("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(s({"SCRIPT", "EXISTS", sha}), RespValue::of_array({num(0)}));
  EXPECT_EQ(s({"SCRIPT", "LOAD", kRedisPyRelease}), RespValue::bulk(sha));
  EXPECT_EQ(s({"SCRIPT", "EXISTS", sha, "nope"}), RespValue::of_array({num(1), num(0)}));
  s({"SET", "lock", "tok"});
  std::string upper = sha;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(s({"EVALSHA", upper, "1", "lock", "tok"}), num(1));
  EXPECT_EQ(s({"EVAL", "return redis.sha1hex(ARGV[1])", "0", kRedisPyRelease}), RespValue::bulk(sha));
  EXPECT_EQ(s({"SCRIPT", "FLUSH"}), RespValue::status("OK"));
  EXPECT_EQ(s({"EVALSHA", sha, "1", "lock", "tok"}), err("NOSCRIPT No matching script. Please use EVAL."));
}

TEST(RedisLua, ConversionsBothWays) {
  Server s;
  s({"SET", "k", "v"});
  EXPECT_EQ(s.show({"EVAL", "return {1, 'two', true, false, 3.99, {ok='fine'}, nil, 4}", "0"}),
            "[(integer) 1, \"two\", (integer) 1, (nil), (integer) 3, fine]");
  EXPECT_EQ(s.show({"EVAL", "return redis.call('GET', 'nope')", "0"}), "(nil)");
  EXPECT_EQ(s.show({"EVAL", "return type(redis.call('GET', 'nope'))", "0"}), "\"boolean\"");
  EXPECT_EQ(s.show({"EVAL", "return redis.call('SET', 'k', 'v')['ok']", "0"}), "\"OK\"");
  EXPECT_EQ(s.show({"EVAL", "return redis.pcall('INCR', 'k')['err']", "0"}),
            "\"ERR value is not an integer or out of range\"");
  EXPECT_EQ(s.show({"EVAL", "return redis.call('SET', 'n', 0.1)", "0"}), "OK");
  EXPECT_EQ(s.show({"GET", "n"}), "\"0.10000000000000001\"");  // %.17g
  EXPECT_EQ(s.show({"EVAL", "return redis.status_reply('FINE')", "0"}), "FINE");
  EXPECT_EQ(s.show({"EVAL", "return redis.error_reply('MY x')", "0"}), "(error) MY x");
  EXPECT_EQ(s.show({"EVAL", "return redis.error_reply('x')", "0"}), "(error) ERR x");
  EXPECT_EQ(s.show({"EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "a", "b"}),
            "[\"a\", \"b\", (integer) 1, (integer) 1]");
}

TEST(RedisLua, ErrorsAsRedis70ReportsThem) {
  Server s;
  s({"SET", "k", "v"});
  const std::string sha = ScriptCache::sha1hex("return redis.call('INCR', 'k')");
  EXPECT_EQ(s.show({"EVAL", "return redis.call('INCR', 'k')", "0"}),
            "(error) ERR value is not an integer or out of range script: " + sha + ", on @user_script:1.");
  EXPECT_EQ(s.show({"EVAL", "return redis.call('nosuch')", "0"}),
            "(error) ERR Unknown Redis command called from script script: " +
                ScriptCache::sha1hex("return redis.call('nosuch')") + ", on @user_script:1.");
  EXPECT_EQ(s.show({"EVAL", "return redis.pcall('set', 'a')", "0"}),
            "(error) ERR Wrong number of args calling Redis command from script");
  EXPECT_EQ(s.show({"EVAL", "return redis.pcall('incr', 'a', {})", "0"}),
            "(error) ERR Lua redis lib command arguments must be strings or integers");
  EXPECT_EQ(s.show({"EVAL", "return redis.pcall()", "0"}),
            "(error) ERR Please specify at least one argument for this redis lib call");
  EXPECT_EQ(s.show({"EVAL", "return redis.pcall('eval', 'return 1', '0')", "0"}),
            "(error) ERR This Redis command is not allowed from script");
  EXPECT_EQ(s.show({"EVAL", "error('boom')", "0"}), "(error) ERR user_script:1: boom script: " +
                                                        ScriptCache::sha1hex("error('boom')") + ", on @user_script:1.");
  EXPECT_EQ(s.show({"EVAL", "\nerror({err='MY boom'})", "0"}),
            "(error) MY boom script: " + ScriptCache::sha1hex("\nerror({err='MY boom'})") + ", on @user_script:2.");
  EXPECT_EQ(s.show({"EVAL", "syntax error here", "0"}),
            "(error) ERR Error compiling script (new function): user_script:1: '=' expected near 'error'");
  EXPECT_EQ(s.show({"EVAL", "return 1", "x"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(s.show({"EVAL", "return 1", "2", "a"}), "(error) ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(s.show({"EVAL", "return 1", "-1"}), "(error) ERR Number of keys can't be negative");
  EXPECT_EQ(s.show({"EVAL", "return 1"}), "(error) ERR wrong number of arguments for 'eval' command");
  EXPECT_EQ(s.show({"EVAL", "return pcall(function() redis.call('INCR', 'k') end)", "0"}), "(nil)")
      << "pcall catches redis.call's error: false, then the message (a string after Redis 7's pcall)";
  EXPECT_EQ(s.show({"EVAL", "local ok, e = pcall(function() redis.call('INCR', 'k') end) return e", "0"}),
            "\"ERR value is not an integer or out of range\"");
}

TEST(RedisLua, GlobalsAreReadOnly) {
  Server s;
  auto failed = [&](const std::string& body, const std::string& what) {
    return "(error) ERR user_script:1: " + what + " script: " + ScriptCache::sha1hex(body) + ", on @user_script:1.";
  };
  EXPECT_EQ(s.show({"EVAL", "x = 1", "0"}), failed("x = 1", "Attempt to modify a readonly table"));
  EXPECT_EQ(s.show({"EVAL", "return x", "0"}),
            failed("return x", "Script attempted to access nonexistent global variable 'x'"));
  EXPECT_EQ(s.show({"EVAL", "string.x = 1", "0"}), failed("string.x = 1", "Attempt to modify a readonly table"));
  EXPECT_EQ(s.show({"EVAL", "redis.call = nil", "0"}),
            failed("redis.call = nil", "Attempt to modify a readonly table"));
  EXPECT_EQ(s.show({"EVAL", "local t = {} t.x = 1 return t.x", "0"}), "(integer) 1") << "locals are free";
  EXPECT_EQ(s.show({"EVAL", "return type(os)", "0"}),
            failed("return type(os)", "Script attempted to access nonexistent global variable 'os'"));
  EXPECT_EQ(s.show({"EVAL", "return type(print)", "0"}),
            failed("return type(print)", "Script attempted to access nonexistent global variable 'print'"));
  EXPECT_EQ(s.show({"EVAL", "rawset(_G, 'x', 1)", "0"}),
            "(error) ERR Attempt to modify a readonly table script: " + ScriptCache::sha1hex("rawset(_G, 'x', 1)") +
                ", on @user_script:1.");
  EXPECT_EQ(s.show({"EVAL", "getmetatable('').__index = nil", "0"}),
            failed("getmetatable('').__index = nil", "Attempt to modify a readonly table"));
  EXPECT_EQ(s.show({"EVAL", "return ('abc'):upper()", "0"}), "\"ABC\"") << "string methods survive";
  EXPECT_EQ(s.show({"EVAL", "local n = 0 for k in pairs(_G) do n = n + 1 end return n", "0"}), "(integer) 33")
      << "pairs sees through the proxy: a 7.0.15 server's 35 globals less struct and cmsgpack";
  EXPECT_EQ(s.show({"EVAL", "return rawget(_G, 'redis') ~= nil", "0"}), "(integer) 1");
  EXPECT_EQ(s.show({"EVAL", "return {type(cjson), type(bit), type(string.format)}", "0"}),
            "[\"table\", \"table\", \"function\"]");
  EXPECT_EQ(s.show({"EVAL", "return cjson.encode({1, 2}) .. bit.tohex(bit.band(0xff, 0x0f))", "0"}),
            "\"[1,2]0000000f\"");
}

TEST(RedisLua, RunawayScriptStopsAtTheBudgetAndKeepsWhatItRan) {
  Server s;
  const std::string body = "redis.call('SET', 'before', '1')\nwhile true do end";
  const RespValue r = s({"EVAL", body, "0"});
  EXPECT_EQ(r, err(std::string(ScriptCache::kBudgetError) + " script: " + ScriptCache::sha1hex(body) +
                   ", on @user_script:2."));
  EXPECT_EQ(s({"GET", "before"}), RespValue::bulk("1")) << "no rollback, as in Redis";
  const std::string caught = "while true do pcall(function() while true do end end) end";
  EXPECT_TRUE(s({"EVAL", caught, "0"}).is_error()) << "pcall cannot swallow the budget";
  EXPECT_EQ(s({"EVAL", "return 1", "0"}), num(1)) << "the next script runs with a fresh budget";
}

TEST(RedisLua, AScriptThatEatsMemoryFailsAndTheNextOneRuns) {
  Server s;
  const std::string body = "local s = 'x' while true do s = s .. s end";  // doubles until the limit
  EXPECT_EQ(s({"EVAL", body, "0"}),
            err("ERR Error running script " + ScriptCache::sha1hex(body) + ", not enough memory"));
  EXPECT_EQ(s({"EVAL", "return string.rep('y', 3)", "0"}), RespValue::bulk("yyy"));
}

TEST(RedisLua, TwoCachesGiveTheSameAnswersToTheSameScripts) {
  // Determinism: table iteration over string keys, cjson's key order and
  // the random stream depend only on what ran before, not on the process.
  const std::vector<Argv> scripts = {
      {"EVAL",
       "local t = {b=1, a=2, c=3, zz=4, [10]=5} local o = {} for k in pairs(t) do o[#o+1] = tostring(k) end "
       "return table.concat(o, ',')",
       "0"},
      {"EVAL", "return cjson.encode({b=1, a=2, c={x=1, y=2}})", "0"},
      {"EVAL", "return {math.random(100), math.random(100)}", "0"},
      {"EVAL", "return collectgarbage('count') > 0", "0"},
  };
  Server a, b;
  for (const Argv& script : scripts) EXPECT_EQ(a(script), b(script)) << script[1];
}

TEST(RedisLua, MathRandomIsRedisLrand48) {
  // rand.c's lrand48 from its fixed seed, and randomseed as Redis does it:
  // the same sequence on every run and machine.
  Server a, b;
  const Argv script = {"EVAL", "return {math.random(1000000), math.random(1000000)}", "0"};
  EXPECT_EQ(a(script), b(script));
  const Argv seeded = {"EVAL", "math.randomseed(7) return math.random(100)", "0"};
  EXPECT_EQ(a(seeded), a(seeded));
}

}  // namespace
}  // namespace fencesim::redis::commands
