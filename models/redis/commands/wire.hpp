// models/redis/commands/wire.hpp — a client program's Redis command on the
// simulated network (issue 31, docs/PROTOCOL.md "Redis commands"): an argv
// to a server, the RESP2 reply back. RedisServer runs it with
// commands::ScriptCache::execute (models/redis/raw.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/redis/commands/commands.hpp"
#include "sim/simulation.hpp"

namespace fencesim::redis {

struct RawCommand final : sim::Payload {
  std::vector<std::string> argv;
  /// The client's connection (one client may hold several, each with its
  /// own state; reserved for MULTI and WATCH, which are not modelled yet).
  std::uint32_t connection = 0;
  std::string describe() const override;
};

struct RawReply final : sim::Payload {
  commands::RespValue value;
  std::string describe() const override { return value.describe(); }
};

/// WAIT (replication.c waitCommand): the primary asks its replicas for
/// their replication offset (REPLCONF GETACK), each answers with it
/// (REPLCONF ACK). Only sent while a program's WAIT is pending, so no
/// scenario without one sees them.
struct ReplGetAck final : sim::Payload {
  std::string describe() const override { return "REPLCONF GETACK"; }
};
struct ReplAck final : sim::Payload {
  std::uint64_t offset = 0;
  std::string describe() const override { return "REPLCONF ACK " + std::to_string(offset); }
};

}  // namespace fencesim::redis
