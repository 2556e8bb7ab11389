#include "models/workloads/workload.hpp"

#include <stdexcept>
#include <string>

namespace fencesim::workloads {

std::unique_ptr<Workload> make_workload(const WorkloadSetup& setup) {
  switch (setup.spec.kind) {
    case WorkloadKind::kSequenceAllocator: return make_sequence_allocator(setup);
    case WorkloadKind::kCounter: return make_counter(setup);
    case WorkloadKind::kWriter: return make_writer(setup);
    case WorkloadKind::kQueueWorker: return make_queue_worker(setup);
    case WorkloadKind::kLeader: return make_leader(setup);
  }
  // Only a WorkloadKind outside the enumeration gets here (a cast integer).
  throw std::invalid_argument("unknown workload kind " + std::to_string(static_cast<int>(setup.spec.kind)));
}

}  // namespace fencesim::workloads
