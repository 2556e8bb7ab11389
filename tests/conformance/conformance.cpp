#include "tests/conformance/conformance.hpp"

#include "tests/support/hang_watchdog.hpp"
#include "tests/support/tier_tools.hpp"

#include <gtest/gtest.h>

#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>

namespace fencesim::conformance {

// The servers this tier starts: missing ones fail under tools/test.sh and
// skip in a plain developer build (tests/support/tier_tools.hpp).
static ::testing::Environment* const kTierTools = ::testing::AddGlobalTestEnvironment(
    new testing::TierTools("conformance", {{"redis-server", "redis-server"},
                                           {"etcd", "etcd-server"},
                                           {"etcdctl", "etcd-client"},
                                           {"/usr/share/zookeeper/bin/zkServer.sh", "zookeeper"},
                                           {"/usr/lib/python3/dist-packages/kazoo/__init__.py", "python3-kazoo"}}));

// A test still running after 300 s (the longest takes about 20 s; CTest's
// TIMEOUT is 600 s) prints the processes and its threads' stacks and aborts
// (tests/support/hang_watchdog.hpp).
static const bool kWatchdog = testing::install_hang_watchdog(std::chrono::seconds(300));

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
