// models/redis/protocol.hpp — messages between Redis clients, servers and
// sentinels. Each is a small immutable sim::Payload.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulation.hpp"

namespace fencesim::redis {

using sim::Duration;
using sim::NodeId;
using sim::Time;

/// Lock commands, each one atomic on the server (a Lua script or a single
/// command in real Redis):
///   kAcquire  SET key value NX PX ttl; with `with_token`, the seed article's
///             script that also INCRs the counter key in the same step and
///             returns the new token (nil when SET NX fails, no INCR then)
///   kRenew    if GET key == value then PEXPIRE key ttl (returns 1 / 0)
///   kRelease  if GET key == value then DEL key (returns 1 / 0)
///   kGet, kDel, kIncr   the plain commands
///   kRedissonAcquire, kRedissonRenew, kRedissonRelease
///             Redisson's RLock scripts (models/client/redisson_client.cpp
///             cites them): the lock is held by `owner` (Redisson's
///             "<uuid>:<threadId>"); the stored value is "<owner>|<nonce>",
///             one per grant, so the History tells grants apart. Acquire:
///             granted when the key is missing or held by `owner` (a
///             re-entry: PEXPIRE, and with `with_token` RFencedLock's INCR
///             of the counter again); otherwise nil with the key's PTTL in
///             `integer`, and the sender is subscribed to the lock's channel
///             (redisson_lock__channel) until the next release. Renew:
///             PEXPIRE if `owner` holds it (1 / 0). Release: DEL if `owner`
///             holds it, publishing to the channel's subscribers (1), else
///             nil (IllegalMonitorStateException).
enum class Op {
  kAcquire,
  kRenew,
  kRelease,
  kGet,
  kDel,
  kIncr,
  kSet,
  kRedissonAcquire,
  kRedissonRenew,
  kRedissonRelease
};

struct Command final : sim::Payload {
  Op op = Op::kGet;
  std::string key;
  std::string value;
  Duration ttl{0};
  bool with_token = false;
  std::string counter_key;
  std::string owner;  ///< the Redisson ops: the lock's owner ("<uuid>:<threadId>")
  std::string describe() const override;
};

/// PUBLISH redisson_lock__channel:{key} 0 (Redisson's UNLOCK_MESSAGE): the
/// lock was released; a subscribed waiter tries again.
struct LockReleased final : sim::Payload {
  std::string key;
  std::string describe() const override { return "PUBLISH redisson_lock__channel:{" + key + "} 0"; }
};

/// A server's answer. `error` is set for READONLY (a write sent to a
/// replica) and similar; `nil` for a nil bulk reply; otherwise `integer` or
/// `text` carry the result.
struct Reply final : sim::Payload {
  bool nil = false;
  std::optional<std::int64_t> integer;
  std::string text;
  std::string error;
  /// Redis Cluster: the node a MOVED error names (kNoNode otherwise).
  NodeId redirect = sim::kNoNode;
  std::string describe() const override;
};

/// One effect of a write, as replicated (Redis 7 propagates the effects of
/// scripts and rewrites relative expiries to absolute PXAT / PEXPIREAT).
struct Effect {
  /// kHashIncr: HINCRBY of a Redisson lock's field by `integer`.
  enum Kind { kSet, kDel, kExpire, kIncr, kSetInt, kHashIncr } kind = kSet;
  std::string key;
  std::string value;
  std::int64_t integer = 0;
  bool has_expiry = false;
  Time expire_at{0};  ///< wall mode: absolute wall-clock deadline (ns)
  Duration ttl{0};    ///< monotonic mode: each node adds this to its own clock
};

/// `replid` names the replication history the offsets count in (Redis's
/// replication ID): a primary that restarts empty or is promoted starts a
/// new one, and a replica that sees an ID other than the one it synced
/// from asks for a full resynchronisation instead of trusting the offset.
struct ReplStream final : sim::Payload {
  std::uint64_t replid = 0;
  std::uint64_t offset = 0;  ///< offset after applying these effects
  std::vector<Effect> effects;
  std::string describe() const override { return "REPLSTREAM " + std::to_string(offset); }
};

/// A key's value. Like Redis, every value is a string; the token counter is
/// the decimal text of an integer that INCR parses.
struct Entry {
  std::string value;
  bool has_expiry = false;
  Time expire_at{0};  ///< a reading of the deciding clock of the node holding it
  /// A Redisson lock: its owner's re-entry count (the hash field's value;
  /// 0 for every other key).
  std::int64_t holds = 0;
};

/// A replica asks its primary for a full resynchronisation (PSYNC that the
/// primary answers with +FULLRESYNC).
struct SyncRequest final : sim::Payload {
  std::string describe() const override { return "PSYNC"; }
};
struct FullSync final : sim::Payload {
  std::uint64_t replid = 0;
  std::uint64_t offset = 0;
  std::map<std::string, Entry> data;              ///< expiries in the sender's clock readings (wall mode: absolute)
  std::map<std::string, Duration> remaining_ttl;  ///< monotonic mode: TTL left per key
  std::string describe() const override { return "FULLRESYNC " + std::to_string(offset); }
};
/// REPLICAOF host / REPLICAOF NO ONE (primary == kNoNode).
struct ReplicaOf final : sim::Payload {
  NodeId primary = sim::kNoNode;
  std::uint64_t epoch = 0;
  std::string describe() const override { return "REPLICAOF"; }
};
/// Sentinel PING / INFO: the reply carries role and replication offset.
struct Ping final : sim::Payload {
  std::string describe() const override { return "PING"; }
};
struct Pong final : sim::Payload {
  bool primary = false;
  std::uint64_t offset = 0;
  NodeId following = sim::kNoNode;  ///< a replica's primary (INFO master_host)
  std::string describe() const override { return "PONG"; }
};
/// Primary -> replica heartbeat (REPLCONF-style) with the offset sent so far.
struct ReplHeartbeat final : sim::Payload {
  std::uint64_t replid = 0;
  std::uint64_t offset = 0;
  std::string describe() const override { return "REPLHEARTBEAT"; }
};

// --- Sentinel ----------------------------------------------------------------

/// SENTINEL get-master-addr-by-name
struct GetPrimary final : sim::Payload {
  std::string describe() const override { return "SENTINEL get-master-addr-by-name"; }
};
struct PrimaryIs final : sim::Payload {
  NodeId primary = sim::kNoNode;
  std::uint64_t epoch = 0;
  std::string describe() const override { return "PRIMARY"; }
};
/// SENTINEL is-master-down-by-addr, optionally asking for a vote
/// (`candidate` set) in `epoch`.
struct IsDown final : sim::Payload {
  NodeId primary = sim::kNoNode;
  std::uint64_t epoch = 0;
  NodeId candidate = sim::kNoNode;
  std::string describe() const override { return "SENTINEL is-master-down-by-addr"; }
};
struct IsDownReply final : sim::Payload {
  bool down = false;
  NodeId voted_for = sim::kNoNode;
  std::uint64_t vote_epoch = 0;
  std::string describe() const override { return "IS-DOWN-REPLY"; }
};
/// Sentinel hello / +switch-master: the new configuration.
struct SwitchPrimary final : sim::Payload {
  NodeId primary = sim::kNoNode;
  std::uint64_t epoch = 0;
  std::string describe() const override { return "+switch-master"; }
};

}  // namespace fencesim::redis
