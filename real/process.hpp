// real/process.hpp — real processes for the programs that drive them:
// fencesim-real (real/real.cpp) and the model-conformance suite
// (tests/conformance). A temporary folder, free loopback ports, child
// processes that are always stopped, commands run to completion, and the
// programs looked up on PATH with the Debian package that ships each.
//
// Built as its own library, fencesim_process (no hiredis, no libpq), so that
// the conformance suite links it without PostgreSQL's client.
//
// Every child is registered while it runs; `kill_all_children` (called from
// fencesim-real's SIGINT/SIGTERM handling and on every error path) kills
// what is left. Each child also gets PR_SET_PDEATHSIG(SIGKILL), so a runner
// or test that is killed outright takes its servers with it. Children are
// started from one thread only (the death signal follows the thread that
// forked).
//
// Not part of the simulator: the deterministic core never includes this.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fencesim::process {

/// A program the run needs is not installed: the message names it and the
/// Debian package that ships it.
struct MissingProgram : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The absolute path of `name`: $`env_override` if that is set (and names an
/// executable file; otherwise MissingProgram), else the first match on PATH,
/// then in `extra_dirs`. Throws MissingProgram naming `package` when it is
/// missing.
std::string require_program(const std::string& name, const std::string& package,
                            const std::vector<std::string>& extra_dirs = {}, const std::string& env_override = "");

/// A fresh folder $TMPDIR/`prefix``tag`-XXXXXX ($TMPDIR default /tmp), mode
/// 0711 so that a server run as another user can reach its own subfolder;
/// removed with its content on destruction unless `keep` (then its path is
/// printed to stdout).
class TempDir {
 public:
  TempDir(const std::string& tag, bool keep, const std::string& prefix = "fencesim-real-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool keep_;
};

/// A free TCP port on 127.0.0.1 (bind port 0, read it, close). A port handed
/// out is never handed out again while this process lives, by this process
/// or by another one using free_port (a lock on byte `port` of
/// $TMPDIR/fencesim-ports.lock): real-stack runs may run side by side.
int free_port();

struct ChildOptions {
  std::filesystem::path out;         ///< stdout file (appended; empty: /dev/null); unused with `pipes`
  std::filesystem::path err;         ///< stderr file (appended; empty: /dev/null); unused with `pipe_err`
  bool pipes = false;                ///< stdin and stdout are pipes to the parent
  bool pipe_err = false;             ///< stderr is a pipe to the parent
  std::optional<unsigned> uid, gid;  ///< run as this user (a root runner starting PostgreSQL)
  std::vector<std::string> env;      ///< extra NAME=value entries
  int stop_signal = 15;              ///< SIGTERM; PostgreSQL: SIGQUIT (immediate shutdown)
};

/// A child process, stopped (stop signal, then SIGKILL after a grace
/// period) and reaped by its destructor. It inherits only its standard
/// streams: every other descriptor of the parent is closed before exec.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const ChildOptions& opt);
  /// stdout and stderr appended to files, stdin /dev/null.
  Child(const std::vector<std::string>& argv, const std::filesystem::path& out, const std::filesystem::path& err);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int pid() const { return pid_; }
  /// Still running (reaps it if it has exited).
  bool running();
  /// Sends `sig` if it is still running.
  void signal(int sig);
  /// SIGKILL and reap (a crash).
  void kill_now();
  /// The stop signal, SIGCONT (a paused child handles it only once it runs),
  /// wait up to `grace`, then SIGKILL; reaps it.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds{3000});
  /// Waits up to `timeout` for it to exit: its exit status (or -signal), or
  /// nullopt if it is still running.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  /// With `pipes` / `pipe_err`: the parent's ends (-1 otherwise, or once closed).
  int in_fd() const { return in_; }
  int out_fd() const { return out_; }
  int err_fd() const { return err_; }
  void close_in();
  /// The exit code (or -signal) once running() found it exited; -1 before.
  int exit_status() const { return status_; }

 private:
  int status_ = -1;
  int pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  int stop_signal_ = 15;
  bool reaped_ = false;
};

/// Runs a command to completion with `input` on its stdin, its stdout (and
/// its stderr, unless `opt.err` names a file) captured; kills it after
/// `timeout`.
struct CommandResult {
  int status = -1;  ///< exit code, or -signal; -1000 on timeout
  bool timed_out = false;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const ChildOptions& opt = {}, const std::string& input = "");

/// Kills every registered child (async-signal-safe: only kill()).
void kill_all_children();

/// A whole file ("" if it cannot be read).
std::string read_file(const std::filesystem::path& p);
/// The last `lines` lines of a file, for error messages.
std::string tail(const std::filesystem::path& p, int lines = 20);

}  // namespace fencesim::process

namespace fencesim::real {
using process::Child;
using process::ChildOptions;
using process::CommandResult;
using process::free_port;
using process::kill_all_children;
using process::MissingProgram;
using process::require_program;
using process::run_command;
using process::TempDir;
}  // namespace fencesim::real
