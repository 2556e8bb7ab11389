// models/client/redis_primary_client.hpp — what the lock clients of one
// Redis primary (with Sentinel) share: the connection to the current
// primary, learnt from the sentinels (SENTINEL get-master-addr-by-name at
// start and after a timeout or READONLY) and from +switch-master, which
// also retries the pending commands on the new primary. The seed article's
// client (redis_client.cpp) and Redisson's (redisson_client.cpp) build on it.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/client/client.hpp"
#include "models/redis/protocol.hpp"

namespace fencesim::client {

enum class CallStatus { kReply, kTimeout, kSwitched };

struct CallResult {
  CallStatus status = CallStatus::kTimeout;
  redis::Reply reply;
};

/// A command of `lock` for `value` (the token script with `with_token`).
std::shared_ptr<redis::Command> make_command(redis::Op op, const LockSpec& lock, const std::string& value,
                                             bool with_token);

class RedisPrimaryClient : public LockClientBase {
 public:
  RedisPrimaryClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                     std::vector<sim::NodeId> servers, std::vector<sim::NodeId> sentinels);
  void init(sim::Process& p) override;
  /// +switch-master: the primary moves; pending commands are retried there.
  void on_message(const sim::Message& m) override;
  void on_crash() override;

 protected:
  /// Sends `cmd` to the current primary and waits up to command_timeout:
  /// its reply, a timeout (the sentinels are asked again), or kSwitched
  /// when +switch-master abandoned it.
  /// `ask_on_timeout` false: a timeout returns at once, and the sentinels
  /// are asked before the next call instead (go-redis's FailoverClient
  /// looks the primary up when it dials again).
  CallResult call(sim::Process& p, std::shared_ptr<redis::Command> cmd, bool ask_on_timeout = true);
  /// SENTINEL get-master-addr-by-name, to the first sentinel that answers.
  void ask_sentinels(sim::Process& p);
  sim::NodeId primary() const { return primary_; }

 private:
  std::vector<sim::NodeId> servers_;
  std::vector<sim::NodeId> sentinels_;
  sim::NodeId primary_;
  std::uint64_t primary_epoch_ = 0;
  std::set<std::uint64_t> inflight_;
  bool redial_ = false;  ///< a timeout with ask_on_timeout false: ask the sentinels before the next call
};

}  // namespace fencesim::client
