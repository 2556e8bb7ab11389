// models/program/requests.cpp — see requests.hpp.
#include "models/program/requests.hpp"

namespace fencesim::program {

RequestKind redis_request_kind();
RequestKind etcd_request_kind();

std::vector<RequestKind> service_request_kinds() { return {redis_request_kind(), etcd_request_kind()}; }

}  // namespace fencesim::program
