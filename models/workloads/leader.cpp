// leader (docs/FORMAT.md "Workloads"): the shape of most real lock users —
// a cron leader, a controller, a single writer. It acquires the lock, then
// writes every `work` interval while it believes it holds it, and
// re-acquires once it has learned that the lease is lost.
//
// One iteration is one write: read the value, write value + 1 (no wait in
// between). ClientNode keeps the lock across iterations (keeps_lock): it
// acquires only when the client does not believe it holds the lock, waits
// `work` between two writes while it still does, releases after the last
// write or once the belief has ended, and then waits `think` before
// acquiring again. Before each step the leader checks its own belief — its
// loop condition, as Go code ranging over work until session.Done() — and
// an iteration that finds it ended is not written ("not written: the lease
// was lost (…)"). The History therefore has one IterationRecord per write.
// `progress` for leader clients is about leadership (someone leads within
// `settle` whenever a candidate waits), not each write: standbys wait by
// design (models/checkers/leader_progress.cpp).
#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class Leader final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;
  bool keeps_lock() const override { return true; }

 private:
  std::int64_t next_value(const Seen& seen) const override { return seen.value + 1; }
  /// "ok: wrote 5".
  std::string success_text(const Seen&, std::int64_t written) const override {
    return "ok: wrote " + std::to_string(written);
  }
  std::optional<Duration> work_between() const override { return std::nullopt; }
  std::optional<std::string> own_stop(const Iteration& it) const override {
    if (it.lease == nullptr || it.lease->believes()) return std::nullopt;
    const std::string why = it.lease->lost_reason();
    return "not written: the lease was lost" + (why.empty() ? std::string() : " (" + why + ")");
  }
};

}  // namespace

std::unique_ptr<Workload> make_leader(const WorkloadSetup& setup) { return std::make_unique<Leader>(setup); }

}  // namespace fencesim::workloads
