// cli/merge.cpp — `fencesim merge SWEEP.json...`: the shards of a sweep into
// the sweep folder one machine would have written.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/run.hpp"
#include "fencesim/sweep.hpp"
#include "fencesim/sweep_merge.hpp"

namespace fencesim::cli {

namespace {

/// `fencesim merge`: the shards' sweep.json files into DIR/<scenario>-sweep/.
int cmd_merge(const std::vector<std::string>& paths, const std::string& out) {
  std::vector<fencesim::SweepFile> files;
  std::string error;
  for (const std::string& p : paths) {
    std::optional<fencesim::SweepFile> f = fencesim::read_sweep_file(p, error);
    if (!f) {
      std::cerr << "fencesim: merge: " << error << "\n";
      return kExitInput;
    }
    files.push_back(std::move(*f));
  }
  std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(files, error);
  if (!m) {
    std::cerr << "fencesim: merge: " << error << "\n";
    return kExitInput;
  }
  const std::string dir = sweep_folder(out, m->sweep.scenario, fencesim::Shard{1, 1});
  std::vector<std::string> notes;
  if (!fencesim::write_merged_sweep(*m, dir, notes, error)) {
    std::cerr << "fencesim: merge: " << error << "\n";
    // Interrupted: 128 + the signal (130 for Ctrl-C), as sweep and a shell report it.
    const int sig = fencesim::InterruptScope::signal();
    return sig != 0 ? 128 + sig : kExitInput;
  }
  for (const std::string& n : notes) std::cerr << "fencesim: merge: note: " << n << "\n";
  print_sweep_written(m->sweep, m->sweep.source.empty() ? "FILE" : m->sweep.source, dir);
  std::cout << "  merged " << m->shards << " shard" << (m->shards == 1 ? "" : "s") << "\n";
  return m->sweep.all_met ? kExitOk : kExitExpectation;
}

}  // namespace

void add_merge_command(CLI::App& app, MergeArgs& a) {
  CLI::App* merge = app.add_subcommand(
      "merge", "Combine the shards of a sweep (sweep --shard I/N) into the DIR/<scenario>-sweep/ one machine writes");
  merge->add_option("files", a.files, "Every shard's sweep.json (in any order)")->required();
  merge->add_option("--out", a.out,
                    "Folder for the merged sweep folder (default: out); kept run reports are copied into it");
  a.command = merge;
}

/// `merge` after parsing: checks --out, then merges.
int start_merge(const MergeArgs& a) {
  if (!out_option(*a.command, a.out)) return kExitInput;
  return cmd_merge(a.files, a.out);
}

}  // namespace fencesim::cli
