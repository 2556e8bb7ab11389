// Redis 7.0.15's string and key commands over the model's keyspace; see
// commands.hpp for the sources, the replies and the effects.
#include "models/redis/commands/commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

namespace fencesim::redis::commands {

namespace {

using std::int64_t;
using Argv = std::vector<std::string>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kNsPerMs = 1'000'000;

const char* const kNotInteger = "ERR value is not an integer or out of range";
const char* const kSyntax = "ERR syntax error";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// One command's run: the keyspace, the instant, the effects it appends.
struct Ctx {
  Keyspace& keys;
  const ExpiryClock& clock;
  std::vector<Effect>& effects;
  const Argv& argv;
  std::string name;  ///< lower case, for "invalid expire time in 'set' command"
};

Effect effect(Effect::Kind kind, const std::string& key) {
  return Effect{kind, key, "", 0, false, Time{0}, Duration{0}};
}

/// An effect carrying `e`'s deadline both ways (see commands.hpp).
void with_expiry(Effect& eff, const Entry& e, const ExpiryClock& clock) {
  if (!e.has_expiry) return;
  eff.has_expiry = true;
  eff.expire_at = e.expire_at;
  eff.ttl = e.expire_at - clock.now;
}

/// db.c lookupKey + expireIfNeeded: the live entry, or null. A primary
/// deletes an expired key and propagates DEL; a replica only hides it.
Entry* lookup(Ctx& c, const std::string& key) {
  auto it = c.keys.find(key);
  if (it == c.keys.end()) return nullptr;
  if (!c.clock.expired(it->second)) return &it->second;
  if (c.clock.lazy_delete) {
    c.keys.erase(it);
    c.effects.push_back(effect(Effect::kDel, key));
  }
  return nullptr;
}

/// Overwrites (or adds) `key` and propagates the whole entry.
void store(Ctx& c, const std::string& key, Entry e) {
  Effect eff = effect(Effect::kSet, key);
  eff.value = e.value;
  with_expiry(eff, e, c.clock);
  c.keys[key] = std::move(e);
  c.effects.push_back(eff);
}

/// Milliseconds to a Time offset, saturating (Redis counts in int64 ms; the
/// model keeps ns, so a deadline beyond ~292 years is clamped).
Duration ms_to_duration(int64_t ms) {
  if (ms > kMax / kNsPerMs) return Duration{kMax};
  if (ms < kMin / kNsPerMs) return Duration{kMin};
  return Duration{ms * kNsPerMs};
}

int64_t now_ms(const Time& t) { return t.count() / kNsPerMs; }

/// t + d without wrapping: a TTL of 10^15 ms stays in the far future.
Time add_saturating(Time t, Duration d) {
  int64_t out = 0;
  if (__builtin_add_overflow(t.count(), d.count(), &out)) return Time{d.count() > 0 ? kMax : kMin};
  return Time{out};
}

/// An absolute Unix-ms deadline as a reading of the deciding clock.
Time at_unix_ms(const ExpiryClock& clock, int64_t ms) {
  const Time at_wall = ms_to_duration(ms);
  return add_saturating(clock.now, at_wall - Duration{clock.wall.count()});
}

RespValue expire_time_error(const Ctx& c) {
  return RespValue::error(fmt::format("ERR invalid expire time in '{}' command", c.name));
}

// --------------------------------------------------------------------- SET --

struct SetOptions {
  bool nx = false, xx = false, get = false, keepttl = false;
  enum class Unit { kNone, kEx, kPx, kExat, kPxat } unit = Unit::kNone;
  std::string expire;
};

/// t_string.c parseExtendedStringArgumentsOrReply (COMMAND_SET): each
/// option once, NX/XX exclusive, one of KEEPTTL/EX/PX/EXAT/PXAT, and an
/// expiry option needs a following argument; otherwise a syntax error.
bool parse_set_options(const Argv& argv, SetOptions& o) {
  using U = SetOptions::Unit;
  for (std::size_t j = 3; j < argv.size(); ++j) {
    const std::string opt = lower(argv[j]);
    const bool has_next = j + 1 < argv.size();
    if (opt == "nx" && !o.xx) {
      o.nx = true;
    } else if (opt == "xx" && !o.nx) {
      o.xx = true;
    } else if (opt == "get") {
      o.get = true;
    } else if (opt == "keepttl" && o.unit == U::kNone) {
      o.keepttl = true;
    } else if ((opt == "ex" || opt == "px" || opt == "exat" || opt == "pxat") && has_next && !o.keepttl) {
      const U u = opt == "ex" ? U::kEx : opt == "px" ? U::kPx : opt == "exat" ? U::kExat : U::kPxat;
      if (o.unit != U::kNone && o.unit != u) return false;  // EX then PX: the flags exclude each other
      o.unit = u;
      o.expire = argv[++j];
    } else {
      return false;
    }
  }
  return true;
}

/// t_string.c getExpireMillisecondsOrReply: the absolute deadline, or an error.
std::optional<RespValue> set_deadline(const Ctx& c, const SetOptions& o, Time& at) {
  using U = SetOptions::Unit;
  int64_t ms = 0;
  if (!string_to_int64(o.expire, ms)) return RespValue::error(kNotInteger);
  const bool seconds = o.unit == U::kEx || o.unit == U::kExat;
  if (ms <= 0 || (seconds && ms > kMax / 1000)) return expire_time_error(c);
  if (seconds) ms *= 1000;
  if (o.unit == U::kEx || o.unit == U::kPx) {
    const int64_t base = now_ms(c.clock.wall);
    if (ms > kMax - base) return expire_time_error(c);  // mstime() + ms overflows: Redis sees <= 0
    at = add_saturating(c.clock.now, ms_to_duration(ms));
  } else {
    at = at_unix_ms(c.clock, ms);
  }
  return std::nullopt;
}

RespValue cmd_set(Ctx& c) {
  SetOptions o;
  if (!parse_set_options(c.argv, o)) return RespValue::error(kSyntax);
  Time at{0};
  if (o.unit != SetOptions::Unit::kNone) {
    if (auto err = set_deadline(c, o, at)) return *err;
  }
  const std::string& key = c.argv[1];
  const Entry* old = lookup(c, key);
  RespValue reply = RespValue::status("OK");
  if (o.get) reply = old != nullptr ? RespValue::bulk(old->value) : RespValue::nil();
  if ((o.nx && old != nullptr) || (o.xx && old == nullptr)) return o.get ? reply : RespValue::nil();
  Entry e;
  e.value = c.argv[2];
  if (o.unit != SetOptions::Unit::kNone) {
    e.has_expiry = true;
    e.expire_at = at;
  } else if (o.keepttl && old != nullptr) {
    e.has_expiry = old->has_expiry;
    e.expire_at = old->expire_at;
  }
  store(c, key, std::move(e));
  return reply;
}

RespValue cmd_setnx(Ctx& c) {
  if (lookup(c, c.argv[1]) != nullptr) return RespValue::of_integer(0);
  store(c, c.argv[1], Entry{c.argv[2], false, Time{0}});
  return RespValue::of_integer(1);
}

RespValue cmd_get(Ctx& c) {
  const Entry* e = lookup(c, c.argv[1]);
  return e != nullptr ? RespValue::bulk(e->value) : RespValue::nil();
}

RespValue cmd_getdel(Ctx& c) {
  const Entry* e = lookup(c, c.argv[1]);
  if (e == nullptr) return RespValue::nil();
  RespValue reply = RespValue::bulk(e->value);
  c.keys.erase(c.argv[1]);
  c.effects.push_back(effect(Effect::kDel, c.argv[1]));
  return reply;
}

RespValue cmd_del(Ctx& c) {
  int64_t n = 0;
  for (std::size_t j = 1; j < c.argv.size(); ++j) {
    if (lookup(c, c.argv[j]) == nullptr) continue;
    c.keys.erase(c.argv[j]);
    c.effects.push_back(effect(Effect::kDel, c.argv[j]));
    ++n;
  }
  return RespValue::of_integer(n);
}

RespValue cmd_exists(Ctx& c) {
  int64_t n = 0;
  for (std::size_t j = 1; j < c.argv.size(); ++j) n += lookup(c, c.argv[j]) != nullptr ? 1 : 0;
  return RespValue::of_integer(n);
}

// -------------------------------------------------------------------- INCR --

/// t_string.c incrDecrCommand.
RespValue incr_by(Ctx& c, int64_t incr) {
  const std::string& key = c.argv[1];
  Entry* e = lookup(c, key);
  int64_t value = 0;
  if (e != nullptr && !string_to_int64(e->value, value)) return RespValue::error(kNotInteger);
  if ((incr < 0 && value < 0 && incr < kMin - value) || (incr > 0 && value > 0 && incr > kMax - value)) {
    return RespValue::error("ERR increment or decrement would overflow");
  }
  value += incr;
  if (incr == 1 && c.name == "incr") {
    // INCR propagates as itself; Effect::kIncr keeps the TTL as Redis does.
    if (e != nullptr) {
      e->value = std::to_string(value);
    } else {
      c.keys[key] = Entry{std::to_string(value), false, Time{0}};
    }
    c.effects.push_back(effect(Effect::kIncr, key));
  } else {
    Entry next = e != nullptr ? *e : Entry{};
    next.value = std::to_string(value);
    store(c, key, std::move(next));
  }
  return RespValue::of_integer(value);
}

RespValue cmd_incr(Ctx& c) { return incr_by(c, 1); }
RespValue cmd_decr(Ctx& c) { return incr_by(c, -1); }
RespValue cmd_incrby(Ctx& c) {
  int64_t incr = 0;
  if (!string_to_int64(c.argv[2], incr)) return RespValue::error(kNotInteger);
  return incr_by(c, incr);
}
RespValue cmd_decrby(Ctx& c) {
  int64_t incr = 0;
  if (!string_to_int64(c.argv[2], incr)) return RespValue::error(kNotInteger);
  if (incr == kMin) return RespValue::error("ERR decrement would overflow");
  return incr_by(c, -incr);
}

// ------------------------------------------------------------------ EXPIRE --

enum ExpireFlag { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

/// expire.c parseExtendedExpireArgumentsOrReply.
std::optional<RespValue> parse_expire_flags(const Argv& argv, int& flags) {
  for (std::size_t j = 3; j < argv.size(); ++j) {
    const std::string opt = lower(argv[j]);
    if (opt == "nx") {
      flags |= kNx;
    } else if (opt == "xx") {
      flags |= kXx;
    } else if (opt == "gt") {
      flags |= kGt;
    } else if (opt == "lt") {
      flags |= kLt;
    } else {
      return RespValue::error("ERR Unsupported option " + argv[j]);
    }
  }
  if ((flags & kNx) && (flags & (kXx | kGt | kLt))) {
    return RespValue::error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if ((flags & kGt) && (flags & kLt))
    return RespValue::error("ERR GT and LT options at the same time are not compatible");
  return std::nullopt;
}

/// Whether NX/XX/GT/LT let the new deadline replace the current one.
bool expire_allowed(int flags, const Entry& e, Time when) {
  if ((flags & kNx) && e.has_expiry) return false;
  if ((flags & kXx) && !e.has_expiry) return false;
  if ((flags & kGt) && (!e.has_expiry || when <= e.expire_at)) return false;
  if ((flags & kLt) && e.has_expiry && when >= e.expire_at) return false;
  return true;
}

/// expire.c expireGenericCommand: `relative` (EXPIRE/PEXPIRE: basetime is
/// mstime()) or absolute (…AT: Unix time), in `seconds` or milliseconds.
RespValue expire_generic(Ctx& c, bool relative, bool seconds) {
  int flags = 0;
  if (auto err = parse_expire_flags(c.argv, flags)) return *err;
  int64_t when = 0;
  if (!string_to_int64(c.argv[2], when)) return RespValue::error(kNotInteger);
  if (seconds) {
    if (when > kMax / 1000 || when < kMin / 1000) return expire_time_error(c);
    when *= 1000;
  }
  const int64_t base = relative ? now_ms(c.clock.wall) : 0;
  if (when > kMax - base) return expire_time_error(c);
  const Time at = relative ? add_saturating(c.clock.now, ms_to_duration(when)) : at_unix_ms(c.clock, when);
  const std::string& key = c.argv[1];
  Entry* e = lookup(c, key);
  if (e == nullptr || !expire_allowed(flags, *e, at)) return RespValue::of_integer(0);
  if (at <= c.clock.now) {
    // checkAlreadyExpired: a deadline already past deletes the key (DEL).
    c.keys.erase(key);
    c.effects.push_back(effect(Effect::kDel, key));
    return RespValue::of_integer(1);
  }
  e->has_expiry = true;
  e->expire_at = at;
  Effect eff = effect(Effect::kExpire, key);
  with_expiry(eff, *e, c.clock);
  c.effects.push_back(eff);
  return RespValue::of_integer(1);
}

RespValue cmd_expire(Ctx& c) { return expire_generic(c, true, true); }
RespValue cmd_pexpire(Ctx& c) { return expire_generic(c, true, false); }
RespValue cmd_expireat(Ctx& c) { return expire_generic(c, false, true); }
RespValue cmd_pexpireat(Ctx& c) { return expire_generic(c, false, false); }

/// expire.c ttlGenericCommand: -2 no key, -1 no expiry, else the time left
/// (never negative; TTL rounds to the nearest second).
RespValue ttl_generic(Ctx& c, bool ms) {
  const Entry* e = lookup(c, c.argv[1]);
  if (e == nullptr) return RespValue::of_integer(-2);
  if (!e->has_expiry) return RespValue::of_integer(-1);
  const int64_t left = std::max<int64_t>(0, (e->expire_at - c.clock.now).count() / kNsPerMs);
  return RespValue::of_integer(ms ? left : (left + 500) / 1000);
}
RespValue cmd_ttl(Ctx& c) { return ttl_generic(c, false); }
RespValue cmd_pttl(Ctx& c) { return ttl_generic(c, true); }

RespValue cmd_persist(Ctx& c) {
  const Entry* e = lookup(c, c.argv[1]);
  if (e == nullptr || !e->has_expiry) return RespValue::of_integer(0);
  store(c, c.argv[1], Entry{e->value, false, Time{0}});
  return RespValue::of_integer(1);
}

// ------------------------------------------------------------------- table --

struct CommandInfo {
  const char* name;
  int arity;  ///< server.c: > 0 exactly, < 0 at least -arity (argv[0] counted)
  RespValue (*run)(Ctx&);
  bool no_script = false;  ///< CMD_NOSCRIPT: run by ScriptCache
};

const std::vector<CommandInfo>& table() {
  static const std::vector<CommandInfo> kTable = {
      {"get", 2, cmd_get},
      {"set", -3, cmd_set},
      {"setnx", 3, cmd_setnx},
      {"getdel", 2, cmd_getdel},
      {"del", -2, cmd_del},
      {"exists", -2, cmd_exists},
      {"incr", 2, cmd_incr},
      {"decr", 2, cmd_decr},
      {"incrby", 3, cmd_incrby},
      {"decrby", 3, cmd_decrby},
      {"expire", -3, cmd_expire},
      {"pexpire", -3, cmd_pexpire},
      {"expireat", -3, cmd_expireat},
      {"pexpireat", -3, cmd_pexpireat},
      {"ttl", 2, cmd_ttl},
      {"pttl", 2, cmd_pttl},
      {"persist", 2, cmd_persist},
      {"eval", -3, nullptr, true},
      {"evalsha", -3, nullptr, true},
      {"script", -2, nullptr, true},
  };
  return kTable;
}

const CommandInfo* find(const Argv& argv) {
  if (argv.empty()) return nullptr;
  const std::string name = lower(argv[0]);
  for (const CommandInfo& info : table()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

bool arity_ok(const CommandInfo& info, std::size_t argc) {
  const auto n = static_cast<int>(argc);
  return info.arity > 0 ? n == info.arity : n >= -info.arity;
}

/// server.c processCommand's unknown-command text: each argument quoted,
/// stopping once 128 bytes were written, newlines as spaces.
std::string unknown_command(const Argv& argv) {
  std::string args;
  for (std::size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    args += "'" + argv[i].substr(0, 128 - args.size()) + "' ";
  }
  std::string err = fmt::format("ERR unknown command '{}', with args beginning with: {}",
                                argv.empty() ? std::string() : argv[0].substr(0, 128), args);
  std::replace(err.begin(), err.end(), '\r', ' ');
  std::replace(err.begin(), err.end(), '\n', ' ');
  return err;
}

}  // namespace

bool string_to_int64(const std::string& s, std::int64_t& out) {
  const std::size_t n = s.size();
  if (n == 0 || n >= 21) return false;
  if (n == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  std::size_t p = 0;
  const bool negative = s[0] == '-';
  if (negative && ++p == n) return false;
  if (s[p] < '1' || s[p] > '9') return false;
  unsigned long long v = 0;
  for (; p < n; ++p) {
    if (s[p] < '0' || s[p] > '9') return false;
    const unsigned d = static_cast<unsigned>(s[p] - '0');
    if (v > std::numeric_limits<unsigned long long>::max() / 10) return false;
    v *= 10;
    if (v > std::numeric_limits<unsigned long long>::max() - d) return false;
    v += d;
  }
  if (negative) {
    if (v > static_cast<unsigned long long>(kMax) + 1) return false;
    out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<unsigned long long>(kMax)) return false;
    out = static_cast<int64_t>(v);
  }
  return true;
}

CommandCheck check_command(const std::vector<std::string>& argv) {
  const CommandInfo* info = find(argv);
  if (info == nullptr) return CommandCheck::kUnknown;
  if (!arity_ok(*info, argv.size())) return CommandCheck::kWrongArity;
  return info->no_script ? CommandCheck::kNotFromScript : CommandCheck::kOk;
}

RespValue execute(Keyspace& keys, const std::vector<std::string>& argv, const ExpiryClock& clock,
                  std::vector<Effect>& effects) {
  const CommandInfo* info = find(argv);
  if (info == nullptr) return RespValue::error(unknown_command(argv));
  if (!arity_ok(*info, argv.size())) {
    return RespValue::error(fmt::format("ERR wrong number of arguments for '{}' command", info->name));
  }
  if (info->run == nullptr) return RespValue::error(unknown_command(argv));  // EVAL etc.: ScriptCache::execute
  Ctx ctx{keys, clock, effects, argv, info->name};
  return info->run(ctx);
}

RespValue execute(Keyspace& keys, const std::vector<std::string>& argv, Time now, std::vector<Effect>& effects) {
  return execute(keys, argv, ExpiryClock{now, now, true}, effects);
}

std::string RespValue::describe() const {
  switch (kind) {
    case Kind::kNil: return "(nil)";
    case Kind::kInteger: return "(integer) " + std::to_string(integer);
    case Kind::kBulk: return "\"" + text + "\"";
    case Kind::kStatus: return text;
    case Kind::kError: return "(error) " + text;
    case Kind::kArray: {
      std::string out = "[";
      for (std::size_t i = 0; i < array.size(); ++i) out += (i ? ", " : "") + array[i].describe();
      return out + "]";
    }
  }
  return "?";
}

}  // namespace fencesim::redis::commands
