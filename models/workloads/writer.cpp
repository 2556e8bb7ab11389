// writer (SCENARIO_FORMAT.md): each iteration reads the file's version v and
// writes version v + 1 (for now exactly the counter's iteration).
#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class Writer final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;

 private:
  std::int64_t next_value(const Seen& seen) const override { return seen.value + 1; }
  std::string success_text(const Seen&, std::int64_t written) const override {
    return "ok: wrote " + std::to_string(written);
  }
};

}  // namespace

std::unique_ptr<Workload> make_writer(const WorkloadSetup& setup) { return std::make_unique<Writer>(setup); }

}  // namespace fencesim::workloads
