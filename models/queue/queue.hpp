// models/queue/queue.hpp — a work queue with visibility timeouts (SQS-like),
// as a design that replaces the lock (`lock.service: "queue"`).
//
// Semantics modelled from Amazon SQS's documentation:
//  * ReceiveMessage / visibility timeout: "Amazon SQS Developer Guide",
//    ChangeMessageVisibility in the AWS SDK for .NET v3 API reference
//    (docs.aws.amazon.com/sdkfornet/v3/apidocs/items/SQS/TChangeMessageVisibilityRequest.html):
//    a received message stays in the queue, invisible to other consumers
//    for the visibility timeout; each receive returns a new receipt handle;
//    ChangeMessageVisibility counts the new timeout from the moment of the
//    call, and a change or delete after the timeout ran out "might result
//    in an error".
//  * DeleteMessage (API reference, as mirrored in
//    chris-armstrong.github.io/smaws/smaws-clients/Smaws_Client_SQS/DeleteMessage):
//    "you must provide the most recently received ReceiptHandle for the
//    message (otherwise, the request succeeds, but the message will not be
//    deleted)"; and AWS re:Post "ReceiptHandleIsInvalid / InvalidParameterValue
//    errors" (repost.aws/knowledge-center/sqs-receipt-handle-error): on a FIFO
//    queue a receipt handle expires after the visibility timeout and a
//    delete with it fails ("The receipt handle has expired"); on a standard
//    queue an older handle may succeed.
//  * Dead-letter queues (Developer Guide, "Using dead-letter queues in Amazon
//    SQS", docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues;
//    RedrivePolicy.maxReceiveCount): a message whose receive count exceeds
//    maxReceiveCount is moved to the dead-letter queue instead of being
//    delivered again.
//
// Shape: one durable node `queue` (group "queues") holds `messages` messages
// msg-0 … enqueued at time 0. A message is visible, in flight (invisible
// until a reading of the queue's *wall* clock), deleted, or dead-lettered.
// Requests (protocol below), each answered by the queue node when it is up
// and not paused:
//   Receive             the first visible message in id order (FIFO: none
//                       while an earlier message is in flight — one message
//                       group); its receive count + 1, a new receipt
//                       "msg-3#2" (message, receive count), invisible for
//                       visibility_timeout. Recorded as a grant (value: the
//                       receipt, token: the receive count, server "queue").
//                       A message already received max_receives times is
//                       moved to the dead-letter queue instead (a note and
//                       MessageRecord::dead_lettered).
//   ChangeVisibility    with the current receipt of a message in flight:
//                       invisible for `timeout` from now; otherwise refused
//                       ("ReceiptHandleIsInvalid" for a stale receipt,
//                       "MessageNotInflight" when its timeout has run out).
//   Delete              current receipt: the message is deleted (standard:
//                       also when its timeout ran out but nobody received it
//                       again). Stale receipt: standard answers success and
//                       deletes nothing; FIFO answers "InvalidParameterValue:
//                       the receipt handle has expired" (also for a current
//                       receipt whose timeout ran out).
// The end of a receipt's visibility is the lease end of its grant
// (History::lease_end, value = receipt): the first true time at which the
// queue's wall clock reaches the deadline (an observer that ignores pauses
// and crashes, so a clock fault on `queue` moves it), or the deletion.
// Durable: a crash keeps every message, receive count and deadline; while
// down or paused the queue answers nothing, but deadlines still pass.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/lock_service.hpp"

namespace fencesim::queue {

struct ReceiveRequest final : sim::Payload {
  std::string describe() const override { return "ReceiveMessage"; }
};

/// The answer to a ReceiveRequest: a message, or none visible.
struct ReceiveReply final : sim::Payload {
  bool found = false;
  std::string message_id;
  std::string receipt;
  std::int64_t receive_count = 0;
  std::string describe() const override { return found ? "MESSAGE " + receipt : "EMPTY"; }
};

struct ChangeVisibilityRequest final : sim::Payload {
  std::string message_id;
  std::string receipt;
  Duration timeout{0};
  std::string describe() const override { return "ChangeMessageVisibility " + receipt; }
};

struct DeleteRequest final : sim::Payload {
  std::string message_id;
  std::string receipt;
  std::string describe() const override { return "DeleteMessage " + receipt; }
};

/// The answer to ChangeVisibility and Delete: success, or the SQS error.
struct QueueReply final : sim::Payload {
  bool ok = false;
  std::string error;  ///< "ReceiptHandleIsInvalid: …", "MessageNotInflight: …", …
  std::string describe() const override { return ok ? "OK" : "ERROR " + error; }
};

/// The running queue of one world (LockService: no roles, no faults of its own).
class QueueService final : public LockService, public sim::NodeBehaviour {
 public:
  QueueService(sim::Simulation& s, History& h, const Scenario& sc, sim::NodeId node);
  void start() override {}
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t index) override;
  void on_message(const sim::Message& m) override;

 private:
  enum class State { kVisible, kInflight, kDeleted, kDead };
  struct Message {
    std::string id;
    int receives = 0;
    State state = State::kVisible;
    std::string receipt;      ///< the current (latest) receipt handle
    Time invisible_until{0};  ///< queue wall-clock reading
    std::uint64_t gen = 0;    ///< bumps with every new deadline
  };

  Time clock() const;
  /// An in-flight message whose deadline has passed becomes visible; its
  /// receipt's lease ends (first end wins).
  void refresh(std::size_t i);
  void watch(std::size_t i);
  Message* find(const std::string& id);
  void receive(const sim::Message& m);
  void change_visibility(const sim::Message& m, const ChangeVisibilityRequest& r);
  void remove(const sim::Message& m, const DeleteRequest& r);

  sim::Simulation& sim_;
  History& history_;
  QueueSpec spec_;
  LockSpec lock_;
  sim::Node& node_;
  std::vector<Message> messages_;
  /// Every message before this index is deleted or dead-lettered (a state
  /// nothing leaves): receive() and its refresh start here, so a run that
  /// works through a long queue does not rescan the finished part on every
  /// receive.
  std::size_t first_open_ = 0;
  /// The indexes of the messages in flight, in index order: the only ones
  /// refresh() can change.
  std::set<std::size_t> inflight_;
  /// Message id → index in messages_ (looked up, never iterated).
  std::map<std::string, std::size_t> index_;
};

const ServiceDescriptor& descriptor();

}  // namespace fencesim::queue
