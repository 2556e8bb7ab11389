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
//  * MULTI/EXEC/DISCARD/WATCH/UNWATCH per (client, connection), as 7.0's
//    multi.c: queued commands answer QUEUED, one that cannot run (unknown,
//    wrong arity) is refused at once and EXEC then answers EXECABORT; EXEC
//    runs the queue as one atomic step and answers nil when a WATCHed key
//    was written since (any write the server applied to it, its expiry's
//    deletion included). The state is lost when the server crashes.
//
// Not modelled yet: WAIT, Redis Cluster's MOVED and CROSSSLOT for program
// commands (a cluster server answers with an error that says so), pub/sub,
// blocking commands.
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

namespace {
std::string lower(const std::string& s) {
  std::string out;
  for (const char ch : s) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}
}  // namespace

void RedisServer::handle_raw(const sim::Message& m, const RawCommand& c) {
  if (cluster_) {
    reply(node_, m,
          commands::RespValue::error("ERR fencesim does not route a program's commands in Redis Cluster mode yet"));
    return;
  }
  const std::string name = c.argv.empty() ? "" : lower(c.argv[0]);
  if (name == "multi" || name == "exec" || name == "discard" || name == "watch" || name == "unwatch") {
    reply(node_, m, transaction_command(m, c, name));
    return;
  }
  if (auto conn = connections_.find({m.from, c.connection}); conn != connections_.end() && conn->second.in_multi) {
    // multi.c queueMultiCommand: a command that cannot run is refused now
    // and dooms the transaction; the others are queued.
    if (commands::check_command(c.argv) == commands::CommandCheck::kUnknown ||
        commands::check_command(c.argv) == commands::CommandCheck::kWrongArity) {
      conn->second.queue_failed = true;
      commands::Keyspace none;
      std::vector<Effect> no_effects;
      reply(node_, m, commands::execute(none, c.argv, Time{0}, no_effects));  // its error text
      return;
    }
    conn->second.queued.push_back(c.argv);
    reply(node_, m, commands::RespValue::status("QUEUED"));
    return;
  }
  reply(node_, m, std::move(run_atomically(m.from, {c.argv}).front()));
}

commands::RespValue RedisServer::transaction_command(const sim::Message& m, const RawCommand& c,
                                                     const std::string& name) {
  using commands::RespValue;
  Connection& conn = connections_[{m.from, c.connection}];
  if (name == "multi") {
    if (conn.in_multi) return RespValue::error("ERR MULTI calls can not be nested");
    conn.in_multi = true;
    return RespValue::status("OK");
  }
  if (name == "watch" || name == "unwatch") {
    if (conn.in_multi) return RespValue::error("ERR WATCH inside MULTI is not allowed");
    if (name == "unwatch") {
      conn.watched.clear();
      return RespValue::status("OK");
    }
    if (c.argv.size() < 2) return RespValue::error("ERR wrong number of arguments for 'watch' command");
    for (std::size_t i = 1; i < c.argv.size(); ++i) conn.watched.emplace(c.argv[i], key_versions_[c.argv[i]]);
    return RespValue::status("OK");
  }
  if (!conn.in_multi) return RespValue::error(name == "exec" ? "ERR EXEC without MULTI" : "ERR DISCARD without MULTI");
  Connection done = std::move(conn);
  conn = Connection{};  // EXEC and DISCARD end the transaction and unwatch every key
  if (name == "discard") return RespValue::status("OK");
  if (done.queue_failed) return RespValue::error("EXECABORT Transaction discarded because of previous errors.");
  for (const auto& [key, version] : done.watched) {
    if (key_versions_[key] != version) return RespValue::nil();  // a watched key was written: aborted
  }
  return RespValue::of_array(run_atomically(m.from, done.queued));
}

std::vector<commands::RespValue> RedisServer::run_atomically(NodeId client,
                                                             const std::vector<std::vector<std::string>>& cmds) {
  std::vector<commands::RespValue> replies;
  for (const auto& argv : cmds) {
    if (!primary_ && !argv.empty() && writes(argv[0])) {
      replies.push_back(commands::RespValue::error("READONLY You can't write against a read only replica."));
      return replies.size() == cmds.size() ? replies : std::vector<commands::RespValue>(cmds.size(), replies.back());
    }
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
  for (const auto& argv : cmds) replies.push_back(scripts_->execute(scratch, argv, clock, effects));
  if (!primary_ && !effects.empty()) {
    // A script that wrote on a replica (plain writes were refused above).
    return std::vector<commands::RespValue>(
        cmds.size(), commands::RespValue::error("READONLY You can't write against a read only replica."));
  }
  if (effects.empty()) return replies;
  for (const Effect& e : effects) {
    // A key the command found expired and deleted: its value is the one
    // that expired (RedisService's lease-end reason).
    if (auto it = data_.find(e.key); e.kind == Effect::kDel && it != data_.end() && expired(it->second)) {
      expired_[e.key] = it->second.value;
    }
  }
  write(effects);
  note_raw_grants(client, before, effects);
  svc_.reevaluate();
  return replies;
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
