// models/redis/raw.cpp — a client program's own Redis commands and Lua
// scripts (issue 31; docs/PROTOCOL.md "Redis commands"), as Redis 7.0.15
// runs them (redis/redis tag 7.0.15): the command surface is
// commands::ScriptCache::execute (commands/commands.hpp, script.hpp: t_string.c,
// db.c, expire.c, eval.c, script_lua.c); this file is the server around it.
//
//  * The command runs on a copy of the keyspace, at one reading of the
//    server's clocks (script.c freezes time for a whole script); its effects
//    — a script's commands' effects, Redis 7's effect replication — are then
//    written as every write of the server is (RedisServer::write): applied,
//    streamed to the replicas and appended to the AOF. The copy is how the
//    effects are computed without applying them twice.
//  * A replica answers a write command with READONLY (server.c
//    processCommand: "-READONLY You can't write against a read only
//    replica."); a script that writes on a replica fails the same way (the
//    model rejects the whole script; Redis 7 fails the redis.call that
//    writes).
//  * The script cache is the server's own, lost on a crash and empty on a
//    replica (Redis 7 no longer replicates scripts: EVALSHA after a failover
//    answers NOSCRIPT until the client loads the script again).
//  * A command or script that makes a lock key (lock.key or one of
//    lock.keys) hold a value it did not hold is a grant to the sender
//    (docs/FORMAT.md "Grants and tokens"); its token is the lock's counter
//    after the same command or script INCRed it, as in the seed article's
//    acquire script; otherwise none. The lease then ends the way every
//    Redis lease does (RedisService::reevaluate).
//
// Not modelled yet: MULTI/EXEC/WATCH, WAIT, Redis Cluster's MOVED and
// CROSSSLOT for program commands (a cluster server answers with an error
// that says so), pub/sub, blocking commands.
#include <fmt/format.h>

#include "models/redis/commands/script.hpp"
#include "models/redis/commands/wire.hpp"
#include "models/redis/redis.hpp"

namespace fencesim::redis {

std::string RawCommand::describe() const {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::vector<std::string> RedisService::lock_keys() const {
  std::vector<std::string> keys{key_};
  for (const std::string& k : lock_.keys) {
    if (k != key_) keys.push_back(k);
  }
  return keys;
}

namespace {

/// The commands that write (server.c's CMD_WRITE flag among the commands
/// commands::execute knows).
bool writes(const std::string& name) {
  static const char* const kWrite[] = {"set",      "setnx",     "getdel",  "del",    "incr",
                                       "incrby",   "decr",      "decrby",  "expire", "pexpire",
                                       "expireat", "pexpireat", "persist", "unlink", "getset"};
  std::string lower;
  for (const char ch : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  for (const char* w : kWrite) {
    if (lower == w) return true;
  }
  return false;
}

void reply(sim::Node& node, const sim::Message& m, commands::RespValue v) {
  auto r = sim::make_payload<RawReply>();
  r->value = std::move(v);
  node.reply(m, r);
}

}  // namespace

void RedisServer::handle_raw(const sim::Message& m, const RawCommand& c) {
  if (cluster_) {
    reply(node_, m,
          commands::RespValue::error("ERR fencesim does not route a program's commands in Redis Cluster mode yet"));
    return;
  }
  if (!primary_ && !c.argv.empty() && writes(c.argv[0])) {
    reply(node_, m, commands::RespValue::error("READONLY You can't write against a read only replica."));
    return;
  }
  if (!scripts_) scripts_ = std::make_unique<commands::ScriptCache>();
  const commands::ExpiryClock clock{node_.clock(svc_.expiry_clock()), node_.wall(), primary_};
  // What the lock keys held before (unexpired), to tell a grant.
  std::map<std::string, std::string> before;
  for (const std::string& k : svc_.lock_keys()) {
    if (auto it = data_.find(k); it != data_.end() && !expired(it->second)) before.emplace(k, it->second.value);
  }
  commands::Keyspace scratch = data_;
  std::vector<Effect> effects;
  commands::RespValue result = scripts_->execute(scratch, c.argv, clock, effects);
  if (!primary_ && !effects.empty()) {
    // A script that wrote on a replica (plain writes were refused above).
    reply(node_, m, commands::RespValue::error("READONLY You can't write against a read only replica."));
    return;
  }
  if (!effects.empty()) {
    for (const Effect& e : effects) {
      // A key the command found expired and deleted: its value is the one
      // that expired (RedisService's lease-end reason).
      if (auto it = data_.find(e.key); e.kind == Effect::kDel && it != data_.end() && expired(it->second)) {
        expired_[e.key] = it->second.value;
      }
    }
    write(effects);
    note_raw_grants(m.from, before, effects);
  }
  reply(node_, m, std::move(result));
  if (!effects.empty()) svc_.reevaluate();
}

void RedisServer::note_raw_grants(NodeId client, const std::map<std::string, std::string>& before,
                                  const std::vector<Effect>& effects) {
  for (const std::string& k : svc_.lock_keys()) {
    auto it = data_.find(k);
    if (it == data_.end() || expired(it->second)) continue;
    if (auto b = before.find(k); b != before.end() && b->second == it->second.value) continue;
    const std::string counter = svc_.counter_key_of(k);
    std::optional<std::int64_t> token;
    const bool counted = std::any_of(effects.begin(), effects.end(), [&](const Effect& e) {
      return e.key == counter && (e.kind == Effect::kIncr || e.kind == Effect::kSet || e.kind == Effect::kSetInt);
    });
    if (auto ct = data_.find(counter); counted && ct != data_.end()) {
      std::int64_t v = 0;
      if (commands::string_to_int64(ct->second.value, v)) token = v;
    }
    svc_.on_grant(*this, client, k, it->second.value, token);
  }
}

}  // namespace fencesim::redis
