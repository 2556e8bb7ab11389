// cli/shrink.cpp — `fencesim shrink FILE --seed N`: a failing run shrunk to the
// smallest scenario that still fails.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/run.hpp"
#include "fencesim/shrink.hpp"
#include "models/validate.hpp"  // quote_text, join_names, suggest_nearest

namespace fencesim::cli {

namespace {

/// One scenario file: its notes on stderr, or its error (nullopt).
std::optional<fencesim::Scenario> load_one(const std::string& file) {
  fencesim::LoadResult r = fencesim::load_scenario_file(file);
  if (!r.ok()) {
    std::cerr << "fencesim: " << r.error->to_string() << "\n";
    return std::nullopt;
  }
  for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << file << ": note: " << n << "\n";
  return std::move(r.scenario);
}

/// `fencesim shrink` (include/fencesim/shrink.hpp): the search, then the
/// shrunk file and its reports.
int cmd_shrink(const std::string& file, const fencesim::ShrinkOptions& opt, const std::string& out) {
  const std::optional<fencesim::Scenario> loaded = load_one(file);
  if (!loaded) return kExitInput;
  const fencesim::Scenario& s = *loaded;
  const fencesim::ShrinkResult r = fencesim::shrink_scenario(s, opt);
  auto failed = [&](const fencesim::ShrinkError& e) {
    using Kind = fencesim::ShrinkError::Kind;
    std::cerr << "fencesim: " << file << ": " << e.message << "\n";
    if (e.kind == Kind::kInternal) {
      std::cerr << "This is a bug in fencesim; please report it with the scenario file and seed.\n";
      return kExitInternal;
    }
    return e.kind == Kind::kNothingToShrink ? kExitExpectation : kExitInput;
  };
  if (r.error) return failed(*r.error);
  const fencesim::ShrinkOutput o =
      fencesim::write_shrink_output(file, s, r, out.empty() ? std::string(kDefaultOut) : out);
  if (o.error) return failed(*o.error);
  const std::size_t before = r.scripted_before + r.drawn_before;
  std::cout << "shrink " << s.name << " seed " << r.seed << ", keeping " << fencesim::to_string(r.property)
            << " violated\n";
  std::cout << "  materialized: " << before << " faults (" << r.scripted_before << " scripted, " << r.drawn_before
            << " drawn by the nemesis), ";
  if (r.same_run) {
    std::cout << "the same run (same fingerprint)\n";
  } else {
    char a[17], b[17];
    std::snprintf(a, sizeof a, "%016llx", static_cast<unsigned long long>(r.fingerprint_materialized));
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(r.fingerprint_original));
    std::cout << "NOT the same run (fingerprint " << a << ", not " << b
              << ": a bug in fencesim, please report it), but it still breaks " << fencesim::to_string(r.property)
              << ", so the search starts from it\n";
  }
  std::cout << "  kept: " << r.signature.text() << "\n";
  std::cout << "  search: " << r.runs << " runs";
  if (r.skipped > 0) std::cout << " (and " << r.skipped << " invalid candidates skipped)";
  if (r.budget_reached) std::cout << "; stopped at --max-runs " << opt.max_runs << ", the result may shrink further";
  std::cout << "\n  faults:   " << before << " -> " << o.scenario.faults.size() << "\n  clients:  " << s.clients.size()
            << " -> " << o.scenario.clients.size() << "\n  duration: " << sim::format_duration(s.duration) << " -> "
            << sim::format_duration(o.scenario.duration) << "\n";
  std::cout << "  written: " << o.file << " and its reports in " << o.report_dir
            << "/ (report.md, timeline.html, report.json, trace.jsonl)\n";
  std::cout << "  run it: fencesim run " << fencesim::shell_word(o.file) << "\n";
  return kExitOk;
}

}  // namespace

void add_shrink_command(CLI::App& app, ShrinkArgs& a) {
  CLI::App* shrink = app.add_subcommand(
      "shrink",
      "Shrink a failing run to the smallest scenario that still fails; write DIR/<scenario>-seed<N>-shrunk.json");
  shrink->add_option("file", a.file, "Scenario file (JSON)")->required();
  shrink->add_option("--seed", a.seed_text, "The failing run's seed, 0 to 2^64-1 (kept fixed)")->required();
  shrink->add_option("--property", a.property,
                     "The property to keep violated (default: the first whose expectation the run missed by "
                     "violating it, else the first violated)");
  shrink->add_option("--out", a.out, "Folder for the shrunk file and its report folder (default: out)");
  shrink->add_option(
      "--max-runs", a.max_runs_text,
      "Candidate runs at most, 1 to 1000000 (default " + std::to_string(fencesim::kDefaultShrinkRuns) + ")");
  a.command = shrink;
}

int start_shrink(const ShrinkArgs& a) {
  std::optional<std::uint64_t> seed;
  if (!seed_option(*a.command, a.seed_text, seed)) return kExitInput;
  fencesim::ShrinkOptions opt;
  opt.seed = *seed;
  if (a.command->count("--property") > 0) {
    opt.property = fencesim::property_from_string(a.property);
    if (!opt.property) {
      std::vector<std::string> names;
      for (fencesim::Property p : fencesim::all_properties()) names.emplace_back(fencesim::to_string(p));
      const std::string hint = fencesim::suggest_nearest(a.property, names);
      std::cerr << "fencesim: --property: unknown property " << fencesim::quote_text(a.property) << " ("
                << (hint.empty() ? "" : hint + " ") << "the properties are " << fencesim::join_names(names) << ")\n";
      return kExitInput;
    }
  }
  if (a.command->count("--max-runs") > 0) {
    const std::optional<std::uint64_t> m = fencesim::parse_seed(a.max_runs_text);
    if (!m || *m == 0 || *m > 1'000'000) {
      std::cerr << "fencesim: --max-runs expects a number of runs from 1 to 1000000, got \"" << a.max_runs_text
                << "\"\n";
      return kExitInput;
    }
    opt.max_runs = static_cast<std::size_t>(*m);
  }
  if (!out_option(*a.command, a.out)) return kExitInput;
  return cmd_shrink(a.file, opt, a.out);
}

}  // namespace fencesim::cli
