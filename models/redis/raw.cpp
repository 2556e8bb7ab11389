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
//  * WAIT numreplicas timeout, as 7.0's replication.c waitCommand: the
//    replicas that acknowledged the connection's last write; the primary
//    asks them (REPLCONF GETACK, every 100 ms while a WAIT is pending: the
//    only time these messages flow) and answers when enough have, or at
//    the timeout on its own clock.
//
//  * Redis Cluster (cluster.c getNodeByQuery): a command whose keys span
//    slots answers CROSSSLOT, one whose slot another node owns "MOVED
//    <slot> <node name>" (a node name where Redis gives host:port).
//
// Not modelled yet: pub/sub, blocking commands, ASK during a migration.
#include <fmt/format.h>

#include "models/redis/cluster.hpp"
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

/// The keys of a command (its key-specs in Redis 7.0's commands table):
/// EVAL/EVALSHA's numkeys keys, every argument of DEL/EXISTS/UNLINK/WATCH,
/// the first argument of the string and expiry commands; none for the
/// others (SCRIPT, WAIT, MULTI, EXEC…), which any node serves.
std::vector<std::string> command_keys(const std::string& name, const std::vector<std::string>& argv) {
  if (name == "eval" || name == "evalsha") {
    std::int64_t n = 0;
    if (argv.size() < 3 || !commands::string_to_int64(argv[2], n) || n < 0 ||
        static_cast<std::size_t>(n) > argv.size() - 3) {
      return {};  // the command's own error answers it
    }
    return {argv.begin() + 3, argv.begin() + 3 + n};
  }
  if (name == "del" || name == "exists" || name == "unlink" || name == "watch") {
    return {argv.begin() + std::min<std::size_t>(1, argv.size()), argv.end()};
  }
  static const char* const kOneKey[] = {"get",       "set",  "setnx",  "getdel", "getset",  "incr",
                                        "incrby",    "decr", "decrby", "expire", "pexpire", "expireat",
                                        "pexpireat", "ttl",  "pttl",   "persist"};
  for (const char* k : kOneKey) {
    if (name == k && argv.size() >= 2) return {argv[1]};
  }
  return {};
}

std::string lower(const std::string& s) {
  std::string out;
  for (const char ch : s) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}
}  // namespace

void RedisServer::handle_raw(const sim::Message& m, const RawCommand& c) {
  const std::string name = c.argv.empty() ? "" : lower(c.argv[0]);
  if (cluster_) {
    if (std::optional<std::string> no = cluster_->refusal(command_keys(name, c.argv))) {
      reply(node_, m, commands::RespValue::error(*no));
      return;
    }
  }
  if (name == "multi" || name == "exec" || name == "discard" || name == "watch" || name == "unwatch") {
    reply(node_, m, transaction_command(m, c, name));
    return;
  }
  if (name == "wait") {
    wait_command(m, c);
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
  reply(node_, m, std::move(run_atomically(m.from, {c.argv}, c.connection).front()));
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
  return RespValue::of_array(run_atomically(m.from, done.queued, c.connection));
}

std::vector<commands::RespValue> RedisServer::run_atomically(NodeId client,
                                                             const std::vector<std::vector<std::string>>& cmds,
                                                             std::uint32_t connection) {
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
  if (!effects.empty() && too_few_good_replicas()) {
    // min-replicas-to-write: a write is refused (processCommand; a script at
    // its first write call, scriptVerifyWriteCommandAllow). Deviation: the
    // model refuses what would change the data set, so a write command
    // that changes nothing (DEL of a missing key) passes here.
    return std::vector<commands::RespValue>(
        cmds.size(), commands::RespValue::error("NOREPLICAS Not enough good replicas to write."));
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
  last_write_[{client, connection}] = offset_;
  note_raw_grants(client, before, effects);
  svc_.reevaluate();
  return replies;
}

void RedisServer::wait_command(const sim::Message& m, const RawCommand& c) {
  using commands::RespValue;
  // replication.c waitCommand (7.0): on a replica, an error; the number of
  // replicas that acknowledged the client's last write, at once if enough
  // have, else when enough have or at the timeout (milliseconds, 0: never).
  if (c.argv.size() != 3) return reply(node_, m, RespValue::error("ERR wrong number of arguments for 'wait' command"));
  if (!primary_) {
    return reply(node_, m,
                 RespValue::error("ERR WAIT cannot be used with replica instances. Please also note that since Redis "
                                  "4.0 if a replica is configured to be writable (which is not the default) writes to "
                                  "replicas are just local and are not propagated."));
  }
  std::int64_t needed = 0, timeout = 0;
  if (!commands::string_to_int64(c.argv[1], needed)) {
    return reply(node_, m, RespValue::error("ERR value is not an integer or out of range"));
  }
  if (!commands::string_to_int64(c.argv[2], timeout)) {
    return reply(node_, m, RespValue::error("ERR timeout is not an integer or out of range"));
  }
  if (timeout < 0) return reply(node_, m, RespValue::error("ERR timeout is negative"));
  const std::uint64_t target = last_write_[{m.from, c.connection}];
  if (acked_at_least(target) >= needed || target == 0) {
    return reply(
        node_, m,
        RespValue::of_integer(target == 0 ? static_cast<std::int64_t>(replicas_.size()) : acked_at_least(target)));
  }
  const std::uint64_t id = ++next_wait_;
  waits_.push_back(PendingWait{m, target, needed, id});
  if (!asking_) ask_for_acks(role_epoch_);
  if (timeout > 0) {
    const std::uint64_t epoch = role_epoch_;
    node_.after(std::chrono::milliseconds(timeout), [this, id, epoch] {
      if (role_epoch_ != epoch) return;
      for (auto it = waits_.begin(); it != waits_.end(); ++it) {
        if (it->id != id) continue;
        reply(node_, it->request, commands::RespValue::of_integer(acked_at_least(it->target)));
        waits_.erase(it);
        return;
      }
    });
  }
}

std::int64_t RedisServer::acked_at_least(std::uint64_t offset) const {
  std::int64_t n = 0;
  for (NodeId r : replicas_) {
    if (auto it = acked_.find(r); it != acked_.end() && it->second >= offset) ++n;
  }
  return n;
}

void RedisServer::ask_for_acks(std::uint64_t epoch) {
  asking_ = !waits_.empty() && primary_ && role_epoch_ == epoch;
  if (!asking_) return;
  for (NodeId r : replicas_) node_.send(r, sim::make_payload<ReplGetAck>());
  node_.after(std::chrono::milliseconds(100), [this, epoch] { ask_for_acks(epoch); });
}

void RedisServer::on_replica_ack(NodeId replica, std::uint64_t offset) {
  // replconfCommand: REPLCONF ACK sets repl_ack_time to server.unixtime.
  if (svc_.spec().min_replicas_to_write > 0 && replicas_.count(replica) != 0) {
    ack_seconds_[replica] = std::chrono::floor<std::chrono::seconds>(node_.wall()).count();
  }
  std::uint64_t& acked = acked_[replica];
  acked = std::max(acked, offset);
  for (auto it = waits_.begin(); it != waits_.end();) {
    if (acked_at_least(it->target) >= it->needed) {
      reply(node_, it->request, commands::RespValue::of_integer(acked_at_least(it->target)));
      it = waits_.erase(it);
    } else {
      ++it;
    }
  }
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
