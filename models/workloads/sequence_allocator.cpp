// sequence_allocator (docs/FORMAT.md "Workloads"): acquire, read the counter, work,
// write counter + block, claim the block if the write was accepted, release.
#include <fmt/format.h>

#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class SequenceAllocator final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;

 private:
  std::int64_t next_value(const Seen& seen) const override { return next_register_value(setup().spec, seen.value); }
  /// "ok: claimed 1000..1099": the block the accepted write reserved.
  std::string success_text(const Seen& seen, std::int64_t written) const override {
    return allocator_success_text(seen.value, written);
  }
};

}  // namespace

std::unique_ptr<Workload> make_sequence_allocator(const WorkloadSetup& setup) {
  return std::make_unique<SequenceAllocator>(setup);
}

}  // namespace fencesim::workloads
