// real/client.hpp — a client "process" of a real run: its connection to the
// resource (the PostgreSQL row) and its loop of iterations, the model's
// ClientNode in real time.
#pragma once

#include <libpq-fe.h>

#include "real/run.hpp"

namespace fencesim::real {

/// A libpq connection, finished on destruction; a client's is registered in
/// its sockets while open (a crash shuts it down).
struct PgConn {
  PGconn* c = nullptr;
  Sockets* owner = nullptr;  // a client's: registered while open
  int fd = -1;
  ~PgConn() {
    if (owner && fd >= 0) owner->remove(fd);
    if (c) PQfinish(c);
  }
};

/// One client's whole run (ClientNode::run, real time), on its own thread:
/// connects, waits at the start barrier (Run::arrive_and_wait), then runs its
/// iterations until the run stops. Never throws (errors become log lines).
void client_main(ClientState& c);

}  // namespace fencesim::real
