// writer (docs/FORMAT.md "Workloads"): each iteration reads the file's version v and
// writes version v + 1 tagged with the client name, so a paused writer can
// overwrite a newer version with an older one.
//
// The file is the register: its value is the version number, its tag the
// name of the client that wrote that version (empty for the initial
// version). The write carries the tag; the copy stores it with the version
// and its record of the write says which version it replaced (effect).
#include <fmt/format.h>

#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {
namespace {

class Writer final : public RegisterWorkload {
 public:
  using RegisterWorkload::RegisterWorkload;

 private:
  std::int64_t next_value(const Seen& seen) const override { return next_register_value(setup().spec, seen.value); }
  std::string tag() const override { return setup().client; }
  /// "ok: wrote version 3 over version 2 by B" — the version this client
  /// read, which is not necessarily the one its write replaced.
  std::string success_text(const Seen& seen, std::int64_t written) const override {
    return writer_success_text(written, seen.value, seen.tag);
  }
};

}  // namespace

std::unique_ptr<Workload> make_writer(const WorkloadSetup& setup) { return std::make_unique<Writer>(setup); }

}  // namespace fencesim::workloads
