// cli/options.cpp — the option checks the commands share (cli/options.hpp).
#include "cli/options.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include <unistd.h>

#include "fencesim/run.hpp"
#include "models/validate.hpp"  // quote_text

namespace fencesim::cli {

std::string report_source(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool junit_written(const std::string& path, const std::string& suite, const std::vector<fencesim::JUnitCase>& cases) {
  if (path.empty()) return true;
  std::string error;
  if (fencesim::write_junit(path, suite, cases, error)) return true;
  std::cerr << "fencesim: --junit: " << error << "\n";
  return false;
}

bool out_option(const CLI::App& command, const std::string& out) {
  if (command.count("--out") > 0 && out.empty()) {
    std::cerr << "fencesim: --out needs a folder name (default: out)\n";
    return false;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = out.empty() ? fs::path(kDefaultOut) : fs::path(out);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) {
      std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096)
                << " is not a folder (a file is in the way); give a folder name\n";
      return false;
    }
  } else {
    fs::path parent = fs::absolute(p, ec).parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
    if (!fs::is_directory(parent, ec) || ::access(parent.c_str(), W_OK) != 0) {
      std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096) << " cannot be created ("
                << fencesim::quote_text(parent.string(), 4096) << " is not a folder this user can write in)\n";
      return false;
    }
  }
  if (::access(p.c_str(), F_OK) == 0 && ::access(p.c_str(), W_OK) != 0) {
    std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096) << " is not writable by this user\n";
    return false;
  }
  return true;
}

bool junit_option(const CLI::App& command, const std::string& path) {
  if (command.count("--junit") == 0) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const std::string shown = fencesim::quote_text(path, 4096);
  if (path.empty() || !p.has_filename()) {
    std::cerr << "fencesim: --junit needs a file name, got " << shown << " (e.g. --junit out/junit.xml)\n";
    return false;
  }
  if (fs::is_directory(p, ec)) {
    std::cerr << "fencesim: --junit " << shown << " is a folder; give a file name (e.g. " << path << "/junit.xml)\n";
    return false;
  }
  // Checked before anything runs, as --out is: the folder it goes in must
  // exist or be creatable, by this user.
  fs::path parent = fs::absolute(p, ec).parent_path();
  while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
  if (!fs::is_directory(parent, ec) || ::access(parent.c_str(), W_OK) != 0 ||
      (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)) {
    std::cerr << "fencesim: --junit " << shown << " cannot be written (" << fencesim::quote_text(parent.string(), 4096)
              << " is not a folder this user can write in)\n";
    return false;
  }
  return true;
}

bool seed_option(const CLI::App& command, const std::string& text, std::optional<std::uint64_t>& seed) {
  if (command.count("--seed") == 0) return true;
  seed = fencesim::parse_seed(text);
  if (seed) return true;
  std::cerr << "fencesim: --seed expects a decimal integer from 0 to 18446744073709551615, got \"" << text << "\"\n";
  return false;
}

std::optional<unsigned> jobs_option(const CLI::App* command, const std::string& text) {
  if (command->count("--jobs") == 0) return std::max(1u, std::thread::hardware_concurrency());
  const std::optional<std::uint64_t> j = fencesim::parse_seed(text);
  if (!j || *j == 0 || *j > 1024) {
    std::cerr << "fencesim: --jobs expects a number of worker threads from 1 to 1024, got \"" << text << "\"\n";
    return std::nullopt;
  }
  return static_cast<unsigned>(*j);
}

}  // namespace fencesim::cli
