// models/etcd/raft/message.hpp — the Raft log entry and the one message type
// Raft members exchange over sim's network.
//
// One payload type with a `type` field, as etcd raft's pb.Message
// (raftpb/raft.proto): a layer above routes every `RaftMessage` it receives
// to its member's `RaftNode::step` and handles its own payloads itself.
//
//   AppendEntries  index/log_term = prevLogIndex/prevLogTerm, entries, commit
//                  (Raft paper Figure 2 "AppendEntries RPC")
//   AppendResp     success: index = last index now known to match;
//                  reject: index = the rejected prevLogIndex, reject_hint =
//                  the follower's last index (etcd MsgAppResp RejectHint)
//   Heartbeat      commit = min(follower's match, leader commit), context =
//                  the newest pending ReadIndex round (etcd MsgHeartbeat)
//   HeartbeatResp  context echoed back (etcd MsgHeartbeatResp)
//   Vote/PreVote   index/log_term = candidate's last log index and term;
//                  a PreVote carries the term the sender *would* campaign in
//                  (term + 1) without having moved to it (Ongaro's thesis
//                  §9.6, etcd MsgPreVote); `transfer` bypasses the voter's
//                  leader lease as etcd's campaignTransfer does
//   VoteResp/PreVoteResp  reject or grant
//   ReadIndex      follower → leader, term 0 like etcd's local MsgReadIndex,
//                  context = the follower's request id
//   ReadIndexResp  leader → follower, index = the confirmed read index
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "sim/simulation.hpp"

namespace fencesim::raft {

using Index = std::uint64_t;
using Term = std::uint64_t;

/// A log entry's command: immutable text shared by every copy of the entry
/// (the leader's log, append messages, the followers' logs, the history), so
/// that replicating an entry copies a pointer, not the text. Reads as a
/// `const std::string&`. The count of references is not atomic: a command
/// belongs to one simulation, and a simulation runs on one thread.
class Command {
 public:
  Command() = default;
  Command(std::string text) : rep_(text.empty() ? nullptr : new Rep{1, std::move(text), {}, nullptr}) {}  // NOLINT
  Command(const char* text) : Command(std::string(text)) {}                                               // NOLINT
  Command(const Command& o) : rep_(o.rep_) {
    if (rep_ != nullptr) ++rep_->refs;
  }
  Command(Command&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  Command& operator=(Command o) noexcept {
    std::swap(rep_, o.rep_);
    return *this;
  }
  ~Command() {
    if (rep_ != nullptr && --rep_->refs == 0) delete rep_;
  }

  /// A command made by the layer that proposes it from a decoded form (etcd
  /// attaches the parsed request), so that every member applies it without
  /// parsing text. Its text is `Render(*decoded)`, made the first time
  /// something reads it (the history's reports, a safety counterexample) and
  /// kept: a run that never shows its commands never renders them. Raft never
  /// looks at the decoded form; the text stays the command's identity
  /// (equality, history). `Render` must never return an empty text.
  template <class T, std::string (*Render)(const T&)>
  static Command with_decoded(std::shared_ptr<const T> decoded) {
    Command c;
    c.rep_ = new Rep{1, {}, Decoded{std::move(decoded), &typeid(T)}, &render_as<T, Render>};
    return c;
  }
  /// The decoded form attached by `with_decoded`, if it is a T; else null
  /// (a command built from text alone: parse the text).
  template <class T>
  const T* decoded() const {
    if (rep_ == nullptr || rep_->decoded.type == nullptr || *rep_->decoded.type != typeid(T)) return nullptr;
    return static_cast<const T*>(rep_->decoded.value.get());
  }

  const std::string& str() const {
    if (rep_ == nullptr) return empty_text();
    if (rep_->render != nullptr) {
      rep_->text = rep_->render(rep_->decoded.value.get());
      rep_->render = nullptr;
    }
    return rep_->text;
  }
  operator const std::string&() const { return str(); }  // NOLINT: implicit
  bool empty() const { return rep_ == nullptr; }

  friend bool operator==(const Command& a, const Command& b) { return a.rep_ == b.rep_ || a.str() == b.str(); }
  friend bool operator==(const Command& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const Command& a, const char* b) { return a.str() == b; }

 private:
  struct Decoded {
    std::shared_ptr<const void> value;
    const std::type_info* type = nullptr;
  };
  struct Rep {
    std::uint32_t refs;
    std::string text;  ///< rendered from `decoded` on first read while `render` is set
    Decoded decoded;
    std::string (*render)(const void*);
  };
  template <class T, std::string (*Render)(const T&)>
  static std::string render_as(const void* decoded) {
    return Render(*static_cast<const T*>(decoded));
  }
  static const std::string& empty_text() {
    static const std::string empty;
    return empty;
  }
  Rep* rep_ = nullptr;
};

/// One log entry. The index is its position in the log (1-based). An empty
/// `command` is the empty entry a leader appends at the start of its term
/// (Raft paper §8, etcd becomeLeader); `propose` refuses empty commands, so
/// the two never mix.
struct Entry {
  Term term = 0;
  Command command;
  bool operator==(const Entry&) const = default;
};

enum class MessageType : std::uint8_t {
  kAppend,
  kAppendResp,
  kHeartbeat,
  kHeartbeatResp,
  kVote,
  kVoteResp,
  kPreVote,
  kPreVoteResp,
  kReadIndex,
  kReadIndexResp,
};

const char* message_type_name(MessageType t);

struct RaftMessage final : sim::Payload {
  MessageType type = MessageType::kHeartbeat;
  Term term = 0;
  Index index = 0;
  Term log_term = 0;
  Index commit = 0;
  /// Most appends carry no entry or one: room for one inside the message,
  /// so replicating an entry allocates nothing.
  boost::container::small_vector<Entry, 1> entries;
  bool reject = false;
  Index reject_hint = 0;
  std::uint64_t context = 0;
  bool transfer = false;
  std::string describe() const override;
};

}  // namespace fencesim::raft
