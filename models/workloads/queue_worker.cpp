// queue_worker (docs/FORMAT.md "Workloads"): the client's iteration is one
// message. ClientNode receives it (the queue client's acquire: an empty
// queue is asked again after retry_interval), this workload works on it for
// `work` and applies its effect at the ledger (models/resource/resource.hpp),
// and ClientNode deletes it after a success (LockClient::finish), then
// thinks. The effect request waits at most command_timeout and is not
// retried. Outcomes:
//   "ok: applied msg-3"            applied: success (the message is deleted)
//   "ok: msg-3 already applied"    an idempotent ledger had applied it: treated
//                                  as done, a success (the message is deleted)
//   "effect rejected: <reason>"    a fenced ledger refused it: not deleted
//   "effect timed out"             no answer: not deleted
#include "models/resource/resource.hpp"
#include "models/workloads/workload.hpp"

namespace fencesim::workloads {
namespace {

class QueueWorker final : public Workload {
 public:
  explicit QueueWorker(WorkloadSetup setup) : setup_(std::move(setup)) {}

  IterationResult iterate(const Iteration& it) override {
    it.process.sleep(it.work.value_or(setup_.spec.work));
    auto req = sim::make_payload<resource::EffectRequest>();
    req->message_id = it.message_id;
    req->receipt = it.lease_value;
    req->token = it.token;
    req->iteration = it.index;
    std::optional<sim::Message> reply = it.process.call(setup_.copy, std::move(req), setup_.command_timeout);
    const auto* r = reply ? reply->as<resource::OpReply>() : nullptr;
    if (r == nullptr) return {false, "effect timed out"};
    if (r->accepted) return {true, "ok: applied " + it.message_id};
    if (r->already_applied) return {true, "ok: " + it.message_id + " already applied"};
    return {false, "effect rejected: " + r->reason};
  }

 private:
  WorkloadSetup setup_;
};

}  // namespace

std::unique_ptr<Workload> make_queue_worker(const WorkloadSetup& setup) { return std::make_unique<QueueWorker>(setup); }

}  // namespace fencesim::workloads
