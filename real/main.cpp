// fencesim-real — run a scenario against the real stack (real/real.hpp).
//
//   fencesim-real FILE [--scale X] [--out DIR] [--compare] [--quiet] [--keep-dir] [--stop-when-done]
//
// A separate program, not a `fencesim` subcommand: it needs threads, real
// clocks, libpq, hiredis and the Go helper, none of which the deterministic
// `fencesim` may depend on; keeping it apart keeps the simulator's binary and
// its dependencies unchanged (a machine without PostgreSQL still builds and
// runs `fencesim`).
//
// Writes DIR/<scenario>-real/ (report.md marked as a real run, timeline.html,
// report.json, trace.jsonl, real.json). With --compare it also runs the
// simulation of the same file and prints both verdicts per property.
//
// Usage errors (an unknown option, no FILE, a bad --scale, an option given
// twice) are one line on stderr and exit 2 (cli/usage.hpp); --help exits 0.
//
// Exit codes: 0 every expectation met (with --compare: and every verdict
// equal to the simulation's); 1 not; 2 invalid input, a scenario the runner
// cannot run, or a missing program (named with its Debian package); 3 a
// server that did not come up or another internal error.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "cli/usage.hpp"

#include "fencesim/run.hpp"
#include "loader/loader.hpp"
#include "real/process.hpp"
#include "real/real.hpp"

namespace {

const char* const kProgram = "fencesim-real";

fencesim::cli::Usage usage() {
  fencesim::cli::Usage u;
  u.program = kProgram;
  u.line = "fencesim-real FILE [--scale X] [--out DIR] [--compare] [--quiet] [--keep-dir] [--stop-when-done]";
  u.thing = "scenario file";
  return u;
}

/// --scale: a number in (0, 10]; nullopt (the caller says why) otherwise.
std::optional<double> parse_scale(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(v > 0 && v <= 10)) return std::nullopt;
  return v;
}

/// The run's outcome on stdout (the verdicts, or the comparison with the
/// simulation); the exit code: 0 every expectation met (and, comparing,
/// every verdict equal), 1 otherwise.
int print_outcome(const fencesim::Scenario& s, const fencesim::real::RealResult& r, const fencesim::ReportMeta& meta,
                  const std::string& dir, double scale, bool quiet, bool compare) {
  int code = r.run.all_met ? 0 : 1;
  std::cout << "real run of " << s.name << " (scale " << scale << ", " << r.wall_seconds << " s):";
  for (const auto& v : r.versions) std::cout << " [" << v << "]";
  std::cout << "\n";
  if (!quiet) std::cout << fencesim::render_summary(s, r.run, meta);
  if (compare) {
    const fencesim::RunResult sim = fencesim::run_scenario(s);
    const auto c = fencesim::real::compare_verdicts(sim.verdicts, r.run.verdicts);
    std::cout << "compared with the simulation (seed " << s.seed << "):\n";
    for (const auto& l : c.lines) std::cout << "  " << l << "\n";
    if (!c.differing.empty()) code = 1;
  } else {
    for (const auto& v : r.run.verdicts)
      std::cout << "  " << fencesim::to_string(v.property) << ": " << fencesim::to_string(v.status) << "\n";
  }
  std::cout << "  report: " << dir << "/report.md\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fencesim-real: run a scenario against real Redis/etcd and PostgreSQL and check it", kProgram};
  std::string file, out = fencesim::kDefaultOut, scale_text = "1";
  bool compare = false, quiet = false, keep = false, stop_when_done = false;
  app.add_option("FILE", file, "scenario file")->required();
  app.add_option("--scale", scale_text,
                 "real seconds per scenario second, in (0, 10] (default 1; 0.25 runs 4x faster)");
  app.add_option("--out", out, "report folder (default out)");
  app.add_flag("--compare", compare, "also run the simulation and compare the verdicts per property");
  app.add_flag("--quiet", quiet, "print only the verdicts");
  app.add_flag("--keep-dir", keep, "keep the temporary folder with the servers' data and logs");
  app.add_flag("--stop-when-done", stop_when_done,
               "end 1 s after every client has finished and every fault has ended, not at the scenario's duration "
               "(the verdicts are judged the same; what happens with no client left is not observed)");
  // Usage errors: one line and exit 2 (cli/usage.hpp).
  if (const auto what = fencesim::cli::unknown_option(app, 1, argc, argv, usage())) {
    return fencesim::cli::fail(kProgram, *what);
  }
  if (const std::optional<int> code = fencesim::cli::parse(app, argc, argv, usage)) return *code;
  const std::optional<double> parsed_scale = parse_scale(scale_text);
  if (!parsed_scale) {
    return fencesim::cli::fail(kProgram, "--scale expects a number greater than 0 and at most 10, got " +
                                             fencesim::quote_text(scale_text) + " (" + usage().hint() + ")");
  }
  const double scale = *parsed_scale;
  if (out.empty()) return fencesim::cli::fail(kProgram, "--out needs a folder name (default: out)");

  fencesim::LoadResult lr = fencesim::load_scenario_file(file);
  if (!lr.ok()) {
    std::cerr << "fencesim-real: " << lr.error->to_string() << "\n";
    return 2;
  }
  const fencesim::Scenario& s = *lr.scenario;
  fencesim::real::RealOptions opt;
  opt.scale = scale;
  opt.keep_dir = keep;
  opt.stop_when_done = stop_when_done;
  opt.log = quiet ? nullptr : &std::cout;
  fencesim::real::RealResult r;
  try {
    r = fencesim::real::run_real(s, opt);
  } catch (const fencesim::real::NotSupported& e) {
    std::cerr << "fencesim-real: " << file << ": cannot run against the real stack: " << e.what() << "\n";
    return 2;
  } catch (const fencesim::real::MissingProgram& e) {
    std::cerr << "fencesim-real: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fencesim-real: " << file << ": " << e.what() << "\n";
    return 3;
  }
  const auto slash = file.find_last_of('/');
  fencesim::ReportMeta meta{slash == std::string::npos ? file : file.substr(slash + 1), false};
  const std::string dir = out + "/" + s.name + "-real";
  std::string error;
  if (!fencesim::write_reports(dir, s, r.run, meta, error)) {
    std::cerr << "fencesim-real: " << error << "\n";
    return 2;
  }
  fencesim::real::mark_real_reports(dir, r, scale);
  return print_outcome(s, r, meta, dir, scale, quiet, compare);
}
