// counter (docs/FORMAT.md "Workloads"): each iteration increments the counter by one.
#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class Counter final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;

 private:
  std::int64_t next_value(const Seen& seen) const override { return next_register_value(setup().spec, seen.value); }
  /// "ok: wrote 5".
  std::string success_text(const Seen&, std::int64_t written) const override { return counter_success_text(written); }
};

}  // namespace

std::unique_ptr<Workload> make_counter(const WorkloadSetup& setup) { return std::make_unique<Counter>(setup); }

}  // namespace fencesim::workloads
