// models/program/requests.cpp — see requests.hpp.
#include "models/program/requests.hpp"

namespace fencesim::program {

std::vector<RequestKind> service_request_kinds() { return {}; }

}  // namespace fencesim::program
