// real/process.hpp — the real processes of a fencesim-real run: a temporary
// folder, free loopback ports, child processes that are always stopped, and
// the programs looked up on PATH with the Debian package that ships each.
//
// Every child is registered while it runs; `stop_all_children` (called from
// the runner's SIGINT/SIGTERM handling and on every error path) kills what
// is left. Each child also gets PR_SET_PDEATHSIG(SIGKILL), so a runner that
// is killed outright takes its servers with it. Children are started from
// the runner's main thread only (the death signal follows the thread that
// forked).
//
// Not part of the simulator: the deterministic core never includes this.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fencesim::real {

/// A program the run needs is not installed: the message names it and the
/// Debian package that ships it.
struct MissingProgram : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The absolute path of `name` (first on PATH, then `extra_dirs`); throws
/// MissingProgram naming `package` when it is missing.
std::string require_program(const std::string& name, const std::string& package,
                            const std::vector<std::string>& extra_dirs = {});

/// A fresh folder under $TMPDIR (default /tmp), mode 0711 so that a server
/// run as another user can reach its own subfolder; removed with its content
/// on destruction unless `keep`.
class TempDir {
 public:
  explicit TempDir(const std::string& tag, bool keep);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool keep_;
};

/// A free TCP port on 127.0.0.1 (bind port 0, read it, close). Ports handed
/// out are remembered so that one run never gets the same port twice.
int free_port();

struct ChildOptions {
  std::filesystem::path out;         ///< stdout file (appended); empty with `pipes`
  std::filesystem::path err;         ///< stderr file (appended)
  bool pipes = false;                ///< stdin and stdout are pipes to the runner
  std::optional<unsigned> uid, gid;  ///< run as this user (a root runner starting PostgreSQL)
  std::vector<std::string> env;      ///< extra NAME=value entries
  int stop_signal = 15;              ///< SIGTERM; PostgreSQL: SIGQUIT (immediate shutdown)
};

/// A child process, stopped (stop signal, then SIGKILL after a grace
/// period) and reaped by its destructor.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const ChildOptions& opt);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int pid() const { return pid_; }
  bool running();
  void signal(int sig);
  /// SIGKILL and reap (a crash).
  void kill_now();
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds{3000});
  /// With `pipes`: the runner's ends (-1 otherwise, or once closed).
  int in_fd() const { return in_; }
  int out_fd() const { return out_; }
  void close_in();
  /// The exit code (or -signal) once running() found it exited; -1 before.
  int exit_status() const { return status_; }

 private:
  int status_ = -1;
  int pid_ = -1;
  int in_ = -1, out_ = -1;
  int stop_signal_ = 15;
  bool reaped_ = false;
};

/// Runs a command to completion (stdout captured); kills it after `timeout`.
struct CommandResult {
  int status = -1;  ///< exit code, or -signal; -1000 on timeout
  std::string out;
};
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const ChildOptions& opt = {});

/// Kills every registered child (async-signal-safe: only kill()).
void kill_all_children();

}  // namespace fencesim::real
