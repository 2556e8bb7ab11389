#include "real/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace fencesim::process {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
constexpr std::size_t kMaxChildren = 256;
std::array<std::atomic<int>, kMaxChildren> g_children{};

void register_child(int pid) {
  for (auto& slot : g_children) {
    int expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}
void unregister_child(int pid) {
  for (auto& slot : g_children) {
    int expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}
}  // namespace

void kill_all_children() {
  for (auto& slot : g_children) {
    const int pid = slot.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
}

std::string require_program(const std::string& name, const std::string& package,
                            const std::vector<std::string>& extra_dirs, const std::string& env_override) {
  const std::string install = "install the Debian package " + package + " (tools/deps.sh --test installs it)";
  if (!env_override.empty()) {
    if (const char* v = std::getenv(env_override.c_str()); v != nullptr && *v != '\0') {
      if (::access(v, X_OK) == 0) return v;
      throw MissingProgram("$" + env_override + "=" + v + " is not an executable file; unset it or " + install);
    }
  }
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    std::size_t start = 0;
    while (start <= p.size()) {
      const std::size_t end = p.find(':', start);
      dirs.push_back(p.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    const fs::path candidate = fs::path(d) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw MissingProgram("`" + name + "` was not found on PATH" +
                       (env_override.empty() ? std::string() : " (nor in $" + env_override + ")") + "; " + install);
}

TempDir::TempDir(const std::string& tag, bool keep, const std::string& prefix) : keep_(keep) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + tag + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary folder " + templ + ": " + std::strerror(errno));
  }
  path_ = buf.data();
  ::chmod(path_.c_str(), 0711);
}

TempDir::~TempDir() {
  if (keep_) {
    std::cout << "kept " << path_.string() << "\n" << std::flush;
    return;
  }
  // A server's own children (PostgreSQL's backends) may still be writing for
  // a moment after it was stopped: try again a few times.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (!ec && !fs::exists(path_)) return;
    std::this_thread::sleep_for(100ms);
  }
}

namespace {
/// Reserves `port` for this process against every other process on this
/// machine that uses free_port: a write lock on byte `port` of one shared
/// file (fcntl record locks belong to the process, so the kernel drops them
/// when it exits, however it ends). Two real-stack runs side by side (the
/// RealStack tests under `ctest -j2`) then never hand a server the same
/// port between our probe and its bind. Without the file (an unwritable
/// temporary folder) the reservation holds within this process only.
bool reserve_across_processes(int port) {
  static const int fd = [] {
    const fs::path file = fs::temp_directory_path() / "fencesim-ports.lock";
    const int f = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (f >= 0) (void)::fchmod(f, 0666);  // a later run as another user locks it too
    return f;
  }();
  if (fd < 0) return true;
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = port;
  l.l_len = 1;
  return ::fcntl(fd, F_SETLK, &l) == 0;
}
}  // namespace

int free_port() {
  static std::mutex mu;
  static std::set<int> given;
  std::lock_guard<std::mutex> lock(mu);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      socklen_t len = sizeof a;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) port = ntohs(a.sin_port);
    }
    ::close(fd);
    // etcd and Redis Sentinel use port + something nowhere; only our own
    // ports (this process's and other runs') must not repeat.
    if (port > 0 && !given.count(port) && reserve_across_processes(port)) {
      given.insert(port);
      return port;
    }
  }
  throw std::runtime_error("no free port on 127.0.0.1");
}

Child::Child(const std::vector<std::string>& argv, const ChildOptions& opt) : stop_signal_(opt.stop_signal) {
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if ((opt.pipes && (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)) ||
      (opt.pipe_err && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  envs.insert(envs.end(), opt.env.begin(), opt.env.end());
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  const std::string out = opt.out.string(), err = opt.err.string();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // a signal to the runner's terminal does not reach the servers directly
    if (opt.gid) (void)!::setgid(*opt.gid);
    if (opt.uid) (void)!::setuid(*opt.uid);
    // After the credential change (which clears it).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (opt.pipes) {
      ::dup2(in_pipe[0], 0);
      ::dup2(out_pipe[1], 1);
    } else {
      const int devnull = ::open("/dev/null", O_RDONLY);
      ::dup2(devnull, 0);
      const int o = ::open(out.empty() ? "/dev/null" : out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(o, 1);
    }
    if (opt.pipe_err) {
      ::dup2(err_pipe[1], 2);
    } else {
      const int e = ::open(err.empty() ? "/dev/null" : err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(e, 2);
    }
    // Nothing else of the runner's: a socket of its (a proxy's, a client's
    // connection) held open by a server started later would outlive its
    // close() — no EOF reaches the other end, and a thread waiting on it
    // for an answer waits forever (a Redis restarted mid-run did this).
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    ::signal(SIGPIPE, SIG_DFL);  // a runner that ignores it (fencesim-real) must not pass that on
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(av[0], av.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  register_child(pid_);
  if (opt.pipes) {
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    in_ = in_pipe[1];
    out_ = out_pipe[0];
  }
  if (opt.pipe_err) {
    ::close(err_pipe[1]);
    err_ = err_pipe[0];
  }
}

Child::Child(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err)
    : Child(argv, [&] {
        ChildOptions o;
        o.out = out;
        o.err = err;
        return o;
      }()) {}

Child::~Child() {
  stop();
  close_in();
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
}

void Child::close_in() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

bool Child::running() {
  if (reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    unregister_child(pid_);
    return false;
  }
  return true;
}

void Child::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

void Child::kill_now() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  unregister_child(pid_);
}

std::optional<int> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
  return status_;
}

void Child::stop(std::chrono::milliseconds grace) {
  if (reaped_ || pid_ <= 0) return;
  ::kill(pid_, stop_signal_);
  ::kill(pid_, SIGCONT);  // a paused server handles the signal only once it runs
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    if (!running()) return;
    std::this_thread::sleep_for(10ms);
  }
  kill_now();
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const ChildOptions& base, const std::string& input) {
  ChildOptions opt = base;
  opt.pipes = true;
  opt.pipe_err = base.err.empty();
  opt.stop_signal = SIGKILL;
  Child c(argv, opt);
  // Inputs are small (a few lines for etcdctl): they fit the pipe's buffer.
  if (!input.empty()) (void)!::write(c.in_fd(), input.data(), input.size());
  c.close_in();
  CommandResult r;
  const auto until = std::chrono::steady_clock::now() + timeout;
  auto timed_out = [&] {
    c.kill_now();
    r.status = -1000;
    r.timed_out = true;
    return r;
  };
  char buf[4096];
  int fds[2] = {c.out_fd(), c.err_fd()};
  std::string* sinks[2] = {&r.out, &r.err};
  while (fds[0] >= 0 || fds[1] >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return timed_out();
    pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(std::min<long>(left.count(), 100))) <= 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (fds[k] < 0 || p[k].revents == 0) continue;
      const ssize_t got = ::read(fds[k], buf, sizeof buf);
      if (got <= 0) {
        fds[k] = -1;  // EOF (Child closes its ends)
      } else {
        sinks[k]->append(buf, static_cast<std::size_t>(got));
      }
    }
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  if (left.count() <= 0 || !c.wait_for(left)) return timed_out();
  r.status = c.exit_status();
  return r;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(const fs::path& p, int lines) {
  const std::string s = read_file(p);
  std::size_t pos = s.size();
  for (int n = 0; n <= lines && pos > 0; ++n) {
    pos = s.rfind('\n', pos - 1);
    if (pos == std::string::npos) return s;
  }
  return s.substr(pos + 1);
}

}  // namespace fencesim::process
