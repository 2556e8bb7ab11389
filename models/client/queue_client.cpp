// The queue worker's client of the work queue (models/queue/queue.hpp; SQS
// semantics and sources there). A "lock" here is one received message:
//
//   acquire  ReceiveMessage, each call awaited at most command_timeout; an
//            empty answer or a timeout: retry after retry_interval. The
//            belief starts when the message is handled (value: the receipt
//            handle, token: the receive count, message_id).
//   renewal  with `renew`, ChangeMessageVisibility(receipt,
//            visibility_timeout) every renew_interval on renew_clock (as
//            the AWS SDKs' and Celery's visibility "heartbeats" do); a
//            timeout is retried at once; a refusal (stale receipt, timeout
//            run out) is a lease loss: the belief ends ("extension refused")
//            and the worker has learned it lost the message.
//   finish   after a successful workload step, DeleteMessage(receipt): the
//            belief ends when it is sent ("delete sent"); retried on
//            timeout until the queue answers (an error answer — a FIFO
//            queue's expired receipt — is noted, not retried). After a
//            failed step nothing is deleted: the belief ends ("effect not
//            applied") and the message comes back when its timeout runs out.
#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/queue/queue.hpp"

namespace fencesim::client {

namespace {

class QueueClient final : public LockClientBase {
 public:
  QueueClient(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock, sim::NodeId queue)
      : LockClientBase(node, h, spec, lock), queue_(queue) {}

  Lease acquire(sim::Process& p) override {
    for (;;) {
      auto r = p.call(queue_, sim::make_payload<queue::ReceiveRequest>(), spec_.command_timeout);
      const auto* reply = r ? r->as<queue::ReceiveReply>() : nullptr;
      if (reply != nullptr && reply->found) {
        Lease lease{reply->receipt, reply->receive_count, reply->message_id};
        begin_belief(lease);
        start_renewal(lease);
        return lease;
      }
      p.sleep(spec_.retry_interval);
    }
  }

  void release(sim::Process& p) override { finish(p, true); }

  void finish(sim::Process& p, bool succeeded) override {
    ++renew_gen_;
    const Lease lease = lease_;
    if (!succeeded) {
      end_belief("effect not applied");
      return;
    }
    end_belief("delete sent");
    for (;;) {
      auto req = sim::make_payload<queue::DeleteRequest>();
      req->message_id = lease.message_id;
      req->receipt = lease.value;
      auto r = p.call(queue_, req, spec_.command_timeout);
      const auto* reply = r ? r->as<queue::QueueReply>() : nullptr;
      if (reply == nullptr) continue;  // timed out: ask again
      if (!reply->ok) {
        history_.note(node_.sim().now(), spec_.name, "delete_refused",
                      fmt::format("DeleteMessage {} refused: {}", lease.value, reply->error));
      }
      return;
    }
  }

 private:
  void start_renewal(const Lease& lease) {
    lease_ = lease;
    const std::uint64_t gen = ++renew_gen_;
    if (!renews()) return;
    const sim::Time received = clock_now();
    node_.spawn("visibility", [this, gen, lease, received](sim::Process& p) { renew_loop(p, gen, lease, received); });
  }

  void renew_loop(sim::Process& p, std::uint64_t gen, const Lease& lease, sim::Time granted) {
    sim::Time last = granted;
    for (int renewals = 0;; ++renewals) {
      sleep_until_renewal(p, granted, last, renewals);
      if (gen != renew_gen_) return;
      const sim::Time first_sent = node_.sim().now();
      for (int failures = 1;; ++failures) {
        auto req = sim::make_payload<queue::ChangeVisibilityRequest>();
        req->message_id = lease.message_id;
        req->receipt = lease.value;
        req->timeout = lock_.queue().visibility_timeout;
        auto r = p.call(queue_, req, spec_.command_timeout);
        if (gen != renew_gen_) return;
        const auto* reply = r ? r->as<queue::QueueReply>() : nullptr;
        if (reply == nullptr) {  // timed out: ask again, unless the policy gives up
          if (renewal_failed(first_sent, failures)) return;
          continue;
        }
        history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), reply->ok});
        if (reply->ok) {
          last = clock_now();
          break;
        }
        ++history_.lease_losses;
        end_belief("extension refused");
        return;
      }
    }
  }

  sim::NodeId queue_;
  Lease lease_;
};

}  // namespace

std::unique_ptr<LockClient> make_queue_client(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock,
                                              sim::NodeId queue) {
  return std::make_unique<QueueClient>(node, h, spec, lock, queue);
}

}  // namespace fencesim::client
