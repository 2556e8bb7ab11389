// fencesim-real — run a scenario against the real stack (real/real.hpp).
//
//   fencesim-real FILE [--scale X] [--out DIR] [--compare] [--quiet] [--keep-dir]
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
// Exit codes: 0 every expectation met (with --compare: and every verdict
// equal to the simulation's); 1 not; 2 invalid input, a scenario the runner
// cannot run, or a missing program (named with its Debian package); 3 a
// server that did not come up or another internal error.
#include <CLI/CLI.hpp>
#include <iostream>

#include "fencesim/run.hpp"
#include "loader/loader.hpp"
#include "real/process.hpp"
#include "real/real.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fencesim-real: run a scenario against real Redis/etcd and PostgreSQL and check it"};
  std::string file, out = "reports";
  double scale = 1.0;
  bool compare = false, quiet = false, keep = false;
  app.add_option("FILE", file, "scenario file")->required();
  app.add_option("--scale", scale, "real seconds per scenario second (default 1; 0.25 runs 4x faster)");
  app.add_option("--out", out, "report folder (default reports)");
  app.add_flag("--compare", compare, "also run the simulation and compare the verdicts per property");
  app.add_flag("--quiet", quiet, "print only the verdicts");
  app.add_flag("--keep-dir", keep, "keep the temporary folder with the servers' data and logs");
  CLI11_PARSE(app, argc, argv);

  fencesim::LoadResult lr = fencesim::load_scenario_file(file);
  if (!lr.ok()) {
    std::cerr << "fencesim-real: " << lr.error->to_string() << "\n";
    return 2;
  }
  const fencesim::Scenario& s = *lr.scenario;
  fencesim::real::RealOptions opt;
  opt.scale = scale;
  opt.keep_dir = keep;
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
