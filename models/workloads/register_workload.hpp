// models/workloads/register_workload.hpp — the read, work, write iteration
// that sequence_allocator, counter and writer share, against the register
// of models/resource/.
//
// One iteration: a ReadRequest (carrying the token only with fence_reads),
// then `work`, then a WriteRequest of `next_value(read)` with the token, the
// value read (an annotation for no_lost_update), the tag the kind gives and,
// for a `cas` resource, the version read (the lock-free CAS loop). Each
// request waits at most `command_timeout` and is not retried: a timeout or
// a rejection ends the iteration unsuccessfully with one of
//   "read timed out", "read rejected: <reason>",
//   "write timed out", "write rejected: <reason>";
// an accepted write ends it successfully with the kind's success text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/resource/resource.hpp"
#include "models/workloads/workload.hpp"

namespace fencesim::workloads {

class RegisterWorkload : public Workload {
 public:
  explicit RegisterWorkload(WorkloadSetup setup) : setup_(std::move(setup)) {}
  IterationResult iterate(const Iteration& it) final;

 protected:
  /// What an accepted read returned.
  struct Seen {
    std::int64_t value = 0;
    std::int64_t version = 0;  ///< the CAS version
    std::string tag;           ///< who tagged the value ("" untagged)
  };
  /// The value the iteration writes after reading `seen`.
  virtual std::int64_t next_value(const Seen& seen) const = 0;
  /// The tag the write carries; empty: untagged.
  virtual std::string tag() const { return {}; }
  /// The outcome of an accepted write of `written` computed from `seen`.
  virtual std::string success_text(const Seen& seen, std::int64_t written) const = 0;

  const WorkloadSetup& setup() const { return setup_; }

 private:
  /// Sends `req` to the client's copy; the reply, or nullptr on timeout.
  std::shared_ptr<const resource::OpReply> ask(sim::Process& p, sim::PayloadPtr req) const;
  /// The read step: what was seen, or the failed outcome in `failure`.
  std::optional<Seen> read(const Iteration& it, std::string& failure) const;
  /// The write step after `seen`.
  IterationResult write(const Iteration& it, const Seen& seen) const;

  WorkloadSetup setup_;
};

}  // namespace fencesim::workloads
