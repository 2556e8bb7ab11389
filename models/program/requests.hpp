// models/program/requests.hpp — the request kinds of the lock services a
// program talks to (docs/PROTOCOL.md "Redis commands", "etcd requests"):
// each in its own file beside its service's wire messages.
#pragma once

#include <vector>

#include "models/program/codec.hpp"

namespace fencesim::program {

/// Redis (requests_redis.cpp), then etcd (requests_etcd.cpp).
std::vector<RequestKind> service_request_kinds();

}  // namespace fencesim::program
