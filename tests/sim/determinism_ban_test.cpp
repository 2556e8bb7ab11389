// Determinism is enforced, not hoped for (TigerBeetle's tidy.zig): the code
// that runs inside a simulation — sim/ and models/ — must not read real
// clocks, use non-deterministic or library-defined randomness, start threads,
// or use hash containers whose iteration order can leak into an output.
//
// The scan strips comments (// and /* */, aware of string and character
// literals) and then looks for the banned names as whole identifiers (no
// <regex>: it is slow in Debug builds and noisy under GCC 12 with -O2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// How a banned name must appear to count.
enum class Form {
  kWord,    // a whole identifier: `steady_clock`
  kPrefix,  // an identifier starting with it: `unordered_map`, `unordered_set`
  kCall,    // a whole identifier followed by `(`: `rand (`
  kStd,     // a whole identifier qualified by `std::`: `std :: thread`
};

struct Ban {
  const char* name;
  Form form;
  const char* why;
};

const std::vector<Ban>& bans() {
  static const std::vector<Ban> kBans = {
      {"system_clock", Form::kWord, "reads the real wall clock; use the node's clocks"},
      {"steady_clock", Form::kWord, "reads a real clock; use the node's monotonic clock"},
      {"high_resolution_clock", Form::kWord, "reads a real clock"},
      {"gettimeofday", Form::kWord, "reads the real wall clock"},
      {"clock_gettime", Form::kWord, "reads a real clock"},
      {"random_device", Form::kWord, "is OS entropy; use Simulation::rng(name)"},
      {"rand", Form::kCall, "is global, non-deterministic randomness; use sim::Rng"},
      {"uniform_int_distribution", Form::kWord, "output differs between standard libraries; use sim::Rng::uniform"},
      {"uniform_real_distribution", Form::kWord, "output differs between standard libraries; use integer ratios"},
      {"thread", Form::kStd, "threads break the one-fiber-at-a-time order"},
      {"async", Form::kStd, "threads break the one-fiber-at-a-time order"},
      {"unordered_", Form::kPrefix, "iteration order depends on hashing; use std::map or a sorted vector"},
  };
  return kBans;
}

/// The text of the first use of `b` in `line`, or "" if there is none.
std::string find_use(const std::string& line, const Ban& b) {
  const std::string name = b.name;
  for (std::size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
    if (at > 0 && ident_char(line[at - 1])) continue;
    std::size_t end = at + name.size();
    if (b.form == Form::kPrefix) {
      while (end < line.size() && ident_char(line[end])) ++end;
      return line.substr(at, end - at);
    }
    if (end < line.size() && ident_char(line[end])) continue;
    if (b.form == Form::kWord) return name;
    if (b.form == Form::kCall) {
      std::size_t k = end;
      while (k < line.size() && line[k] == ' ') ++k;
      if (k < line.size() && line[k] == '(') return line.substr(at, k + 1 - at);
      continue;
    }
    // kStd: walk back over `::` and `std`, allowing spaces.
    std::size_t k = at;
    while (k > 0 && line[k - 1] == ' ') --k;
    if (k < 2 || line.compare(k - 2, 2, "::") != 0) continue;
    k -= 2;
    while (k > 0 && line[k - 1] == ' ') --k;
    if (k < 3 || line.compare(k - 3, 3, "std") != 0 || (k > 3 && ident_char(line[k - 4]))) continue;
    return line.substr(k - 3, end - (k - 3));
  }
  return "";
}

/// Replaces comments by spaces (keeping line breaks), leaving code and string
/// literals in place. Handles raw string literals R"delim(...)delim".
std::string strip_comments(const std::string& src) {
  std::string out = src;
  enum class State { kCode, kLine, kBlock, kString, kChar, kRaw } st = State::kCode;
  std::string raw_end;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    const char next = i + 1 < src.size() ? src[i + 1] : '\0';
    switch (st) {
      case State::kCode:
        if (c == '/' && next == '/') {
          st = State::kLine;
          out[i] = ' ';
        } else if (c == '/' && next == '*') {
          st = State::kBlock;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == 'R' && next == '"' &&
                   (i == 0 || !(std::isalnum(static_cast<unsigned char>(src[i - 1])) || src[i - 1] == '_'))) {
          const std::size_t open = src.find('(', i + 2);
          if (open == std::string::npos) break;
          raw_end = ")" + src.substr(i + 2, open - i - 2) + "\"";
          st = State::kRaw;
          i = open;
        } else if (c == '"') {
          st = State::kString;
        } else if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(src[i - 1])))) {
          // (a quote after a hex digit is a digit separator: 1'000)
          st = State::kChar;
        }
        break;
      case State::kLine:
        if (c == '\n') {
          st = State::kCode;
        } else {
          out[i] = ' ';
        }
        break;
      case State::kBlock:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          st = State::kCode;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case State::kString:
        if (c == '\\') {
          ++i;
        } else if (c == '"' || c == '\n') {
          st = State::kCode;
        }
        break;
      case State::kChar:
        if (c == '\\') {
          ++i;
        } else if (c == '\'' || c == '\n') {
          st = State::kCode;
        }
        break;
      case State::kRaw:
        if (src.compare(i, raw_end.size(), raw_end) == 0) {
          i += raw_end.size() - 1;
          st = State::kCode;
        }
        break;
    }
  }
  return out;
}

/// "file:line: `text` — why" for every banned use in `code`.
std::vector<std::string> violations(const std::string& name, const std::string& code) {
  std::vector<std::string> out;
  const std::string stripped = strip_comments(code);
  std::istringstream lines(stripped);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    for (const Ban& b : bans()) {
      const std::string use = find_use(line, b);
      if (!use.empty()) out.push_back(name + ":" + std::to_string(n) + ": `" + use + "` " + b.why);
    }
  }
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DeterminismBan, TheScannerFlagsBannedNamesInCodeButNotInComments) {
  const std::string code =
      "// std::random_device is banned, says this comment\n"
      "/* so is steady_clock,\n"
      "   even over two lines */\n"
      "int x = rand();\n"
      "auto t = std::chrono::system_clock::now(); // and a trailing comment: std::thread\n"
      "std::unordered_map<int, int> m;\n"
      "int operand(int);  // 'operand(' is not 'rand('\n"
      "const char* s = \"// not a comment\"; std::thread th;\n"
      "int big = 1'000'000; std::async(f);\n"
      "const char* r = R\"x(/* raw */)x\"; int after_raw = rand ();\n"
      "int strand(int); mystd::thread a; std::threadpool b; std::unordered_set<int> u;\n"
      "auto spaced = std :: thread(f);\n";
  EXPECT_THAT(violations("f.cpp", code),
              testing::ElementsAre(
                  testing::HasSubstr("f.cpp:4: `rand(`"), testing::HasSubstr("f.cpp:5: `system_clock`"),
                  testing::HasSubstr("f.cpp:6: `unordered_map`"), testing::HasSubstr("f.cpp:8: `std::thread`"),
                  testing::HasSubstr("f.cpp:9: `std::async`"), testing::HasSubstr("f.cpp:10: `rand (`"),
                  testing::HasSubstr("f.cpp:11: `unordered_set`"), testing::HasSubstr("f.cpp:12: `std :: thread`")));
}

TEST(DeterminismBan, SimAndModelsUseNoRealClocksThreadsLibraryRandomnessOrHashContainers) {
  const fs::path root = FENCESIM_SOURCE_DIR;
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const char* dir : {"sim", "models"}) {
    if (!fs::exists(root / dir)) continue;
    std::vector<fs::path> paths;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cc" || ext == ".ipp")) {
        paths.push_back(e.path());
      }
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& p : paths) {
      ++files;
      for (std::string& v : violations(fs::relative(p, root).string(), read_file(p))) found.push_back(std::move(v));
    }
  }
  EXPECT_GE(files, 5u) << "the scan found too few files under " << root << "; is FENCESIM_SOURCE_DIR right?";
  std::string report;
  for (const std::string& v : found) report += "  " + v + "\n";
  EXPECT_TRUE(found.empty()) << "banned inside a simulation (see tests/sim/determinism_ban_test.cpp):\n" << report;
}

}  // namespace
