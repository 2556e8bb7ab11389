// counter (docs/FORMAT.md "Workloads"): each iteration increments the counter by one.
#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class Counter final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;

 private:
  std::int64_t next_value(const Seen& seen) const override { return seen.value + 1; }
  /// "ok: wrote 5".
  std::string success_text(const Seen&, std::int64_t written) const override {
    return "ok: wrote " + std::to_string(written);
  }
};

}  // namespace

std::unique_ptr<Workload> make_counter(const WorkloadSetup& setup) { return std::make_unique<Counter>(setup); }

}  // namespace fencesim::workloads
