// fencesim/sweep_merge.hpp — `fencesim merge`: the shards of a sweep
// (`fencesim sweep … --shard I/N`, on as many machines) put back together
// into the sweep the single-machine run writes.
//
//   std::vector<fencesim::SweepFile> files;
//   for (const std::string& p : paths) {
//     std::optional<fencesim::SweepFile> f = fencesim::read_sweep_file(p, error);
//     if (!f) ...                                   // one line: exit 2
//     files.push_back(std::move(*f));
//   }
//   std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(files, error);
//   if (!m) ...                                     // one line naming the files: exit 2
//   fencesim::write_merged_sweep(*m, "out/x-sweep", notes, error);   // staged, swapped in whole
//
// A sweep.json (docs/REPORTS.md "sweep.json") carries everything the tally
// needs: every run's verdicts and met expectations, the expectations, the
// keep mode and the tally's limits. read_sweep_file parses it (nlohmann-json)
// back into the SweepResult it was rendered from, and checks that rendering
// that result gives the file's bytes again: a file that was edited,
// truncated or written by another sweep format is refused, never half read.
// merge_sweeps concatenates the shards' runs (shards are contiguous blocks
// of seeds: fencesim/sweep.hpp) and tallies them with tally_sweep, the one
// tally run_sweep uses too; rendered with the same renderers, the merge of
// all N shards is byte for byte the sweep.json and summary.md of the
// unsharded sweep (and exits alike: SweepResult::all_met).
//
// Kept report folders: each shard keeps its own runs' folders in its own
// sweep folder (`<dir of its sweep.json>/seed<N>/`). The merge keeps the
// runs the unsharded sweep would have kept (with --keep failing: the first
// keep_per_property failing runs per property over the whole range, which
// are always among the ones their shards kept) and copies those folders into
// the merged sweep folder; a folder that is not beside its shard's
// sweep.json (only the JSON files were collected) is not kept, with a note.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fencesim/sweep.hpp"

namespace fencesim {

/// One sweep.json as read back.
struct SweepFile {
  std::string path;                              ///< as given
  SweepResult sweep;                             ///< runs, kept flags, shard, self-check seeds, tally
  std::map<Property, Expectation> expectations;  ///< the scenario's `expect` block
};

/// Reads and checks one sweep.json. nullopt, with `error` set to one line
/// naming the file (and the JSON path, for a wrong value), when it cannot be
/// read, is not JSON, is not a sweep.json of sweep_version 1, lists other
/// self-check seeds than its shard re-runs (shard_check_seeds), or is not
/// what fencesim writes for the result it holds. Never throws for bad input.
std::optional<SweepFile> read_sweep_file(const std::string& path, std::string& error);

/// The merged sweep, and where its kept runs' folders are.
struct MergedSweep {
  SweepResult sweep;  ///< shard {1, 1}, the whole range, every run; as the unsharded sweep
  struct Kept {
    std::uint64_t seed = 0;
    std::string from;  ///< the folder of the shard's sweep.json, holding seed<N>/
  };
  std::vector<Kept> kept;            ///< the runs kept in `sweep` (their `kept` is true), by seed
  std::vector<std::string> folders;  ///< the folder of each file merged
  std::size_t shards = 0;            ///< files merged
};

/// Merges the N shard files of one sweep (in any order). Refuses, with
/// `error` set to one line naming the files concerned: no file; files of
/// different scenarios (name, source, `expect` block or content hash,
/// SweepResult::content_hash), fencesim versions,
/// seed ranges, keep modes, tally limits or shard counts; two files of the
/// same shard; missing shards (which, and their seeds).
std::optional<MergedSweep> merge_sweeps(const std::vector<SweepFile>& files, std::string& error);

/// Copies each kept run's `seed<N>/` from its shard's folder into `dir`
/// (after removing old seed<N>/ folders there, as sweep does), each through a
/// temporary name. A folder that is missing is not copied: its run is
/// marked not kept, with a note (one line) in `notes`. False with `error`
/// when `dir` is the folder of a file merged (a shard's own folder) or a
/// copy fails.
bool copy_kept_reports(MergedSweep& m, const std::string& dir, std::vector<std::string>& notes, std::string& error);

/// Writes the merged sweep folder `dir` whole: the kept runs' folders
/// (as copy_kept_reports, with the same notes) and sweep.json/summary.md
/// (write_sweep_files) go into a staging folder beside `dir`
/// (staging_folder), which then replaces `dir` (swap_folder_in). A merge that
/// fails or is interrupted (SIGINT, SIGTERM, SIGHUP: InterruptScope) leaves
/// the previous `dir` exactly as it was and removes the staging folder.
/// False with `error` (one line) in those cases and when `dir` is a shard's
/// own folder. Not thread-safe (one InterruptScope per process).
bool write_merged_sweep(MergedSweep& m, const std::string& dir, std::vector<std::string>& notes, std::string& error);

}  // namespace fencesim
