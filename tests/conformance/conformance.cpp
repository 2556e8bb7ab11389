#include "tests/conformance/conformance.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fencesim::conformance {

namespace fs = std::filesystem;

// ================================================================= TempDir ==

TempDir::TempDir(const std::string& tag) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/fencesim-conf-" + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  }
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (std::getenv("FENCESIM_CONFORMANCE_KEEP") != nullptr) {
    std::cout << "[conformance] kept " << path_ << "\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// ================================================================ binaries ==

std::string require_binary(const std::string& name, const std::string& env_override, const std::string& package) {
  if (const char* v = std::getenv(env_override.c_str()); v != nullptr && *v != '\0') {
    if (::access(v, X_OK) == 0) return v;
    throw std::runtime_error(env_override + "=" + v + " is not an executable file");
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  throw std::runtime_error("conformance: `" + name + "` was not found on PATH (nor in $" + env_override +
                           "). The conformance suite compares the model with a real server and cannot run "
                           "without it: install Debian's `" +
                           package + "` package (tools/deps.sh --test installs it) or point $" + env_override +
                           " at the binary.");
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("bind 127.0.0.1:0: ") + std::strerror(errno));
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// =================================================================== Child ==

Child::Child(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
             const std::optional<fs::path>& in) {
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are made.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string out_s = out.string(), err_s = err.string();
  const std::string in_s = in ? in->string() : std::string("/dev/null");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // If the test process dies (a crash, a kill), take the server with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int i = ::open(in_s.c_str(), O_RDONLY);
    const int o = ::open(out_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (i < 0 || o < 0 || e < 0) ::_exit(126);
    ::dup2(i, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  pid_ = pid;
}

Child::~Child() { stop(); }

bool Child::running() {
  if (pid_ < 0 || status_) return false;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    return false;
  }
  return true;
}

void Child::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

std::optional<int> Child::wait_for(Millis timeout) {
  const auto end = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(Millis{5});
  }
  return status_;
}

void Child::stop(Millis grace) {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  if (!wait_for(grace)) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    status_ = -SIGKILL;
  }
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

RunResult run_command(const std::vector<std::string>& argv, const std::string& input, const fs::path& dir,
                      Millis timeout) {
  static int serial = 0;
  const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(++serial);
  const fs::path in = dir / ("cmd-" + tag + ".in"), out = dir / ("cmd-" + tag + ".out"),
                 err = dir / ("cmd-" + tag + ".err");
  {
    std::ofstream f(in, std::ios::binary);
    f << input;
  }
  RunResult r;
  {
    Child c(argv, out, err, in);
    auto st = c.wait_for(timeout);
    if (!st) {
      r.timed_out = true;
      c.stop(Millis{1000});
      r.status = -SIGKILL;
    } else {
      r.status = *st;
    }
  }
  r.out = read_file(out);
  r.err = read_file(err);
  std::error_code ec;
  fs::remove(in, ec);
  fs::remove(out, ec);
  fs::remove(err, ec);
  return r;
}

// ============================================================= Transcript ==

void Transcript::push(Step s) {
  steps_.push_back(std::move(s));
  if (on_add) on_add(steps_.back());
}

void Transcript::add(const std::string& name, const std::string& answer, const std::string& detail,
                     const std::string& deviation) {
  push(Step{name, answer, detail, deviation, false});
}

void Transcript::add_timed(const std::string& name, bool timing_held, const std::string& why, const std::string& answer,
                           const std::string& detail, const std::string& deviation) {
  if (timing_held) {
    add(name, answer, detail, deviation);
  } else {
    push(Step{name, "(unobservable)", why + "; answer was " + answer, deviation, true});
  }
}

void print_deviations(const std::string& title, const std::vector<Deviation>& devs,
                      const std::vector<Substitution>& subs) {
  std::cout << "\n[conformance] " << title << ": documented deviations of the model (" << devs.size() << ")\n";
  for (const Deviation& d : devs) {
    std::cout << "  - " << d.id << ": " << d.summary << "\n"
              << "      real server: " << d.real_text << "\n"
              << "      model:       " << d.model_text << "\n";
  }
  std::cout << "[conformance] " << title << ": operations the model lacks, compared through its state (" << subs.size()
            << ")\n";
  for (const Substitution& s : subs) std::cout << "  - " << s.operation << ": " << s.how << "\n";
  std::cout << std::flush;
}

namespace {
const Deviation* find_deviation(const std::vector<Deviation>& devs, const std::string& id) {
  for (const Deviation& d : devs) {
    if (d.id == id) return &d;
  }
  return nullptr;
}
bool full_match(const std::string& pattern, const std::string& s) {
  return std::regex_match(s, std::regex(pattern, std::regex::ECMAScript));
}
std::string clip(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }
}  // namespace

void compare_transcripts(const Transcript& real, const Transcript& model, const std::vector<Deviation>& devs) {
  const auto& a = real.steps();
  const auto& b = model.steps();
  std::ostringstream table;
  table << "\n[conformance] step-by-step: " << real.side() << " vs " << model.side() << "\n";
  table << "  " << std::left << std::setw(4) << "#" << std::setw(62) << "step" << std::setw(34) << real.side()
        << std::setw(34) << model.side() << "verdict\n";
  int unobservable = 0;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= a.size() || i >= b.size()) {
      ADD_FAILURE() << "the transcripts have different lengths: " << real.side() << " " << a.size() << " steps, "
                    << model.side() << " " << b.size()
                    << " steps (first unmatched step: " << (i < a.size() ? a[i].name : b[i].name) << ")";
      break;
    }
    const Step& r = a[i];
    const Step& m = b[i];
    std::string verdict;
    if (r.name != m.name) {
      ADD_FAILURE() << "step " << i + 1 << ": the scripts diverged: " << real.side() << " ran `" << r.name << "`, "
                    << model.side() << " ran `" << m.name << "`";
      verdict = "DIVERGED";
    } else if (r.unobservable || m.unobservable) {
      ++unobservable;
      verdict = "not compared: " + (r.unobservable ? r.detail : m.detail);
    } else if (!r.deviation.empty()) {
      const Deviation* d = find_deviation(devs, r.deviation);
      if (d == nullptr) {
        ADD_FAILURE() << "step `" << r.name << "` names an unknown deviation `" << r.deviation << "`";
        verdict = "UNKNOWN DEVIATION";
      } else if (r.answer == m.answer) {
        ADD_FAILURE() << "step `" << r.name << "`: deviation `" << d->id << "` no longer occurs (both answered `"
                      << r.answer << "`): remove it from the deviation list and the script";
        verdict = "FIXED? " + d->id;
      } else if (!full_match(d->real_answer, r.answer)) {
        ADD_FAILURE() << "step `" << r.name << "`: the real server answered `" << r.answer << "`, not what deviation `"
                      << d->id << "` documents (" << d->real_text << ")";
        verdict = "REAL CHANGED " + d->id;
      } else if (!full_match(d->model_answer, m.answer) || (d->related && !d->related(r.answer, m.answer))) {
        ADD_FAILURE() << "step `" << r.name << "`: the model answered `" << m.answer << "`, not what deviation `"
                      << d->id << "` documents (" << d->model_text << ")";
        verdict = "MODEL CHANGED " + d->id;
      } else {
        verdict = "deviation " + d->id;
      }
    } else if (r.answer != m.answer) {
      ADD_FAILURE() << "step " << i + 1 << " `" << r.name << "`: " << real.side() << " answered `" << r.answer << "`"
                    << (r.detail.empty() ? "" : " (" + r.detail + ")") << ", " << model.side() << " answered `"
                    << m.answer << "`" << (m.detail.empty() ? "" : " (" + m.detail + ")");
      verdict = "MISMATCH";
    } else {
      verdict = "ok";
    }
    table << "  " << std::left << std::setw(4) << i + 1 << std::setw(62) << clip(r.name, 60) << std::setw(34)
          << clip(r.answer, 32) << std::setw(34) << clip(m.answer, 32) << verdict << "\n";
  }
  if (unobservable > 0) {
    table << "  note: " << unobservable
          << " step(s) not compared because the real-time window they need did not hold on this machine\n";
  }
  std::cout << table.str() << std::flush;
}

// ================================================================ helpers ==

std::int64_t ms(Clock::duration d) { return std::chrono::duration_cast<Millis>(d).count(); }

std::string base64_decode(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    const auto p = chars.find(c);
    if (p == std::string::npos) break;  // '=' padding ends the data
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

}  // namespace fencesim::conformance
