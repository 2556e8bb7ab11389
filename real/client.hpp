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
  /// A copy of the connection's socket, registered in `owner`: libpq closes
  /// its own descriptor when the server hangs up, and the number may then
  /// be reused by another connection, which a later shutdown_all() must not
  /// touch. The copy keeps the number ours until the destructor.
  int fd = -1;
  void register_in(Sockets& s) {
    owner = &s;
    fd = ::fcntl(PQsocket(c), F_DUPFD_CLOEXEC, 3);
    if (fd >= 0) s.add(fd);
  }
  ~PgConn() {
    if (owner && fd >= 0) {
      owner->remove(fd);
      ::close(fd);
    }
    if (c) PQfinish(c);
  }
};

/// One client's whole run (ClientNode::run, real time), on its own thread:
/// connects, waits at the start barrier (Run::arrive_and_wait), then runs its
/// iterations until the run stops. Never throws (errors become log lines).
void client_main(ClientState& c);

/// One program client's whole run (clients[].program, docs/PROTOCOL.md "The
/// real stack"), on its own thread: at its start, the program is started
/// with FENCESIM_BACKEND=real and FENCESIM_REDIS naming its link to the
/// primary; it talks to Redis itself, and to this thread for its beliefs
/// (a belief also records the grant: the runner does not see the program's
/// commands), resource operations (on the PostgreSQL row, recorded as a
/// built-in client's), iterations and notes. A crash kills the process;
/// the restart starts a new one. Never throws.
void program_main(ClientState& c);

}  // namespace fencesim::real
