// program/host.cpp — program processes: starting them, their pipes, the
// real-time limit on an answer, their stderr, and the warm processes kept
// between the runs of one thread (docs/PROTOCOL.md "Transport", "Speed").
//
// This is the only place where fencesim touches a program's process. It
// lives outside sim/ and models/ because it reads the real clock (for the
// yield_timeout error alone) and the OS; what it hands the simulation is
// lines, in the order the lockstep asks for them.
//
// Processes: posix_spawnp in a new process group (a crash kills the group,
// so a program's own children go too), stdin/stdout/stderr pipes. SIGPIPE
// is ignored process-wide once the first program starts: a write to a
// program that has gone is an error fencesim reports, not its death.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "models/program/channel.hpp"

extern char** environ;

namespace fencesim::program {

namespace {

constexpr std::size_t kStderrKeep = 16 * 1024;
constexpr std::size_t kMaxLine = 16u * 1024 * 1024;

using Clock = std::chrono::steady_clock;

ProgramError failure(const Launch& l, const std::string& what) {
  return ProgramError(ProgramError::Kind::kFailure, l.label + ": " + what);
}

std::string quote_line(const std::string& line) { return line.size() <= 200 ? line : line.substr(0, 200) + "…"; }

/// One process and its three pipes.
class Child {
 public:
  explicit Child(const Launch& l) : launch_(l) { start(); }
  ~Child() { kill_now(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  const Launch& launch() const { return launch_; }
  void set_launch(const Launch& l) { launch_ = l; }

  /// False when the process has exited with status 0; throws on death.
  bool write_line(const std::string& line) {
    std::string data = line + "\n";
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(in_, data.data() + done, data.size() - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return exited_cleanly();
    }
    return true;
  }

  /// The next line, nullopt after a clean exit; throws on death or timeout.
  std::optional<std::string> read_line(const std::string& after) {
    const auto deadline = Clock::now() + std::chrono::nanoseconds(launch_.yield_timeout.count());
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (buffer_.size() > kMaxLine) {
        throw ProgramError(ProgramError::Kind::kProtocol,
                           launch_.label +
                               ": the program broke the protocol (docs/PROTOCOL.md): a line longer than "
                               "16 MiB");
      }
      if (out_ < 0) {
        // A program that closed its stdout is exiting: status 0 means it
        // has finished (docs/PROTOCOL.md, Errors).
        if (exited_cleanly()) return std::nullopt;
        throw failure(launch_, "the program closed its stdout but is still running " +
                                   sim::format_duration(launch_.yield_timeout) + " later (program.yield_timeout)" +
                                   tail_note());
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        throw failure(launch_, "the program sent no yield within " + sim::format_duration(launch_.yield_timeout) +
                                   " (program.yield_timeout) after: " + quote_line(after) + tail_note());
      }
      wait_readable(static_cast<int>(std::min<long long>(left, 1000)));
    }
  }

  /// A line if one comes within `wait`; kExited once the program has gone.
  Channel::Poll poll_line(std::chrono::milliseconds wait, std::string& line) {
    for (int round = 0; round < 2; ++round) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return Channel::Poll::kLine;
      }
      if (out_ < 0) {
        int status = 0;
        if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
        return Channel::Poll::kExited;
      }
      if (round == 0) wait_readable(static_cast<int>(wait.count()));
    }
    return Channel::Poll::kNothing;
  }
  int pid() const { return pid_; }

  /// What the program wrote to stderr since the last call (its last
  /// 16 KiB), drained now.
  std::string take_output() {
    drain_stderr();
    std::string out = std::move(err_);
    err_.clear();
    return out;
  }

  /// Closes its stdin and waits for a clean exit at most `limit` (default
  /// yield_timeout); kills it otherwise.
  void finish_exit(std::optional<sim::Duration> limit = std::nullopt) {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
    const auto deadline = Clock::now() + std::chrono::nanoseconds(limit.value_or(launch_.yield_timeout).count());
    while (pid_ > 0 && Clock::now() < deadline) {
      drain_stderr();
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    kill_now();
  }

  void kill_now() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
    }
    for (int* fd : {&in_, &out_, &err_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

 private:
  void start();
  std::vector<std::string> environment() const;

  void wait_readable(int ms) {
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(fds, err_fd_ >= 0 ? 2 : 1, ms);
    if (n <= 0) return;
    if (fds[0].revents != 0) {
      char buf[65536];
      const ssize_t r = ::read(out_, buf, sizeof buf);
      if (r > 0) {
        buffer_.append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(out_);
        out_ = -1;
      }
    }
    if (err_fd_ >= 0 && fds[1].revents != 0) drain_stderr();
  }

  void drain_stderr() {
    while (err_fd_ >= 0) {
      char buf[8192];
      const ssize_t r = ::read(err_fd_, buf, sizeof buf);
      if (r > 0) {
        err_.append(buf, static_cast<std::size_t>(r));
        if (err_.size() > kStderrKeep) err_.erase(0, err_.size() - kStderrKeep);
        continue;
      }
      if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(err_fd_);
        err_fd_ = -1;
      }
      return;
    }
  }

  /// The process has gone (or is going): true for a clean exit (status
  /// 0), false when it is still running after yield_timeout; throws for
  /// any other exit.
  bool exited_cleanly() {
    int status = 0;
    const auto deadline = Clock::now() + std::chrono::nanoseconds(launch_.yield_timeout.count());
    while (pid_ > 0) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        drain_stderr();
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
        const std::string why = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                                  : std::string("was killed by signal ") + strsignal(WTERMSIG(status));
        throw failure(launch_, "the program " + why + " while the run needed it" + tail_note());
      }
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  std::string tail_note() {
    drain_stderr();
    if (err_.empty()) return "";
    std::string t = err_.size() > 600 ? "…" + err_.substr(err_.size() - 600) : err_;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return "; the end of its stderr:\n" + t;
  }

  Launch launch_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_fd_ = -1;
  std::string buffer_;
  std::string err_;
};

std::vector<std::string> Child::environment() const {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["PYTHONHASHSEED"] = "0";
  for (const auto& [k, v] : launch_.env) env[k] = v;
  env["FENCESIM_PROTOCOL"] = std::to_string(kProtocolVersion);
  env["FENCESIM_BACKEND"] = launch_.backend;
  env["FENCESIM_CLIENT"] = launch_.client;
  for (const auto& [k, v] : launch_.backend_env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

void Child::start() {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw failure(launch_, std::string("cannot make pipes for the program: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, launch_.cwd.c_str());
  // Only its three pipes: a sweep's other workers' pipes and sockets stay theirs.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> env = environment();
  std::vector<char*> argv, envp;
  for (const std::string& a : launch_.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_fd_ = err[0];
  ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  if (rc != 0) {
    pid_ = -1;
    kill_now();
    throw ProgramError(ProgramError::Kind::kStart,
                       launch_.label + ": cannot start the program " + launch_.command[0] + " in " + launch_.cwd +
                           ": " + std::strerror(rc) +
                           " (check program.command: its first word is looked up in PATH, and program.cwd)");
  }
}

/// The warm processes of this thread, by what started them. When the
/// thread ends (a sweep's worker, or the program) each is told by the end
/// of its stdin and given a second to exit before it is killed.
struct Pool : std::map<std::string, std::vector<std::unique_ptr<Child>>> {
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (auto& [key, children] : *this) {
      for (auto& c : children) c->finish_exit(std::chrono::seconds(1));
    }
  }
};
Pool& pool() {
  thread_local Pool p;
  return p;
}

std::string pool_key(const Launch& l) {
  nlohmann::json j{{"command", l.command}, {"env", l.env}, {"cwd", l.cwd}, {"backend", l.backend}};
  return j.dump();
}

class ChildChannel final : public Channel {
 public:
  ChildChannel(std::unique_ptr<Child> c, bool reuse) : child_(std::move(c)), reuse_(reuse) {}
  bool reusable() const override { return reuse_; }
  bool send(const std::string& line) override { return child_->write_line(line); }
  std::optional<std::string> receive(const std::string& after) override { return child_->read_line(after); }
  Poll poll_line(std::chrono::milliseconds wait, std::string& line) override {
    return child_ ? child_->poll_line(wait, line) : Poll::kExited;
  }
  int pid() const override { return child_ ? child_->pid() : -1; }
  std::string output() override {
    std::string out = std::move(kept_);
    kept_.clear();
    return child_ ? out + child_->take_output() : out;
  }
  void end(const std::string& end_line) override;

 private:
  std::unique_ptr<Child> child_;  ///< null once it went back to the pool
  bool reuse_;
  std::string kept_;  ///< stderr taken before the process went back to the pool
};

void ChildChannel::end(const std::string& end_line) {
  if (!reuse_) {
    if (child_->write_line(end_line)) child_->finish_exit();
    return;
  }
  if (!child_->write_line(end_line)) return;
  std::optional<std::string> line;
  try {
    line = child_->read_line(end_line);
  } catch (const ProgramError& e) {
    // After `end` the run no longer needs the program (docs/PROTOCOL.md,
    // Errors): one that exits (any status) or does not answer `ready` in
    // time is not kept warm, and the run stands.
    if (e.kind != ProgramError::Kind::kFailure) throw;
    child_->kill_now();
    return;
  }
  if (!line) return;
  nlohmann::json j = nlohmann::json::parse(*line, nullptr, false);
  if (!j.is_object() || j.value("type", "") != "ready") {
    throw ProgramError(ProgramError::Kind::kProtocol,
                       child_->launch().label +
                           ": the program broke the protocol (docs/PROTOCOL.md): expected {\"type\":\"ready\"} after "
                           "end, got: " +
                           quote_line(*line));
  }
  kept_ = child_->take_output();  // this run's stderr stays with this run
  pool()[pool_key(child_->launch())].push_back(std::move(child_));
}

/// Reads and checks a fresh process's hello; returns its reuse flag.
bool read_hello(Child& c, const Launch& l) {
  const std::optional<std::string> line = c.read_line("the start of the program (its hello)");
  if (!line) throw failure(l, "the program exited before its hello");
  auto bad = [&](const std::string& what) {
    return ProgramError(ProgramError::Kind::kProtocol,
                        l.label + ": the program broke the protocol (docs/PROTOCOL.md): " + what +
                            " in its first line: " + quote_line(*line));
  };
  const nlohmann::json j = nlohmann::json::parse(*line, nullptr, false);
  if (!j.is_object()) throw bad("expected a JSON object (hello)");
  if (j.value("type", "") != "hello") throw bad("expected {\"type\":\"hello\",...}");
  const auto p = j.find("protocol");
  if (p == j.end() || !p->is_number_integer() || p->get<int>() != kProtocolVersion) {
    throw bad("expected \"protocol\": 1 (the only version this fencesim speaks)");
  }
  const auto r = j.find("reuse");
  if (r != j.end() && !r->is_boolean()) throw bad("\"reuse\" must be true or false");
  return r != j.end() && r->get<bool>();
}

}  // namespace

std::unique_ptr<Channel> launch(const Launch& l) {
  auto& warm = pool()[pool_key(l)];
  if (!warm.empty()) {
    std::unique_ptr<Child> c = std::move(warm.back());
    warm.pop_back();
    c->set_launch(l);
    return std::make_unique<ChildChannel>(std::move(c), true);
  }
  auto c = std::make_unique<Child>(l);
  const bool reuse = read_hello(*c, l);
  return std::make_unique<ChildChannel>(std::move(c), reuse);
}

}  // namespace fencesim::program
