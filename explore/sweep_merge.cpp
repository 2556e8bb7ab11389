// `fencesim merge`: shard sweep.json files back into one sweep
// (include/fencesim/sweep_merge.hpp). The tally and the rendering are
// sweep.cpp's (tally_sweep, render_sweep_json): this file only reads files
// back, checks that they belong together and concatenates their runs.
#include "fencesim/sweep_merge.hpp"

#include "fencesim/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>

namespace fencesim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// A value that is not what sweep.json has at `path`.
struct Bad {
  std::string path;
  std::string expected;
};

const json& at(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object()) throw Bad{path, "an object"};
  const auto it = obj.find(key);
  if (it == obj.end()) throw Bad{path.empty() ? key : path + "." + key, "a value (the key is missing)"};
  return *it;
}

std::string sub(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

std::uint64_t u64(const json& obj, const std::string& path, const char* key) {
  const json& v = at(obj, path, key);
  if (!v.is_number_unsigned()) throw Bad{sub(path, key), "a non-negative integer"};
  return v.get<std::uint64_t>();
}

std::int64_t i64(const json& obj, const std::string& path, const char* key) {
  const json& v = at(obj, path, key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) {
    throw Bad{sub(path, key), "an integer"};
  }
  return v.get<std::int64_t>();
}

std::string str(const json& obj, const std::string& path, const char* key) {
  const json& v = at(obj, path, key);
  if (!v.is_string()) throw Bad{sub(path, key), "a string"};
  return v.get<std::string>();
}

bool boolean(const json& obj, const std::string& path, const char* key) {
  const json& v = at(obj, path, key);
  if (!v.is_boolean()) throw Bad{sub(path, key), "true or false"};
  return v.get<bool>();
}

const json& array(const json& obj, const std::string& path, const char* key) {
  const json& v = at(obj, path, key);
  if (!v.is_array()) throw Bad{sub(path, key), "an array"};
  return v;
}

std::vector<std::uint64_t> seeds(const json& obj, const std::string& path, const char* key) {
  const json& a = array(obj, path, key);
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number_unsigned()) throw Bad{fmt::format("{}[{}]", sub(path, key), i), "a seed"};
    out.push_back(a[i].get<std::uint64_t>());
  }
  return out;
}

Property property(const json& v, const std::string& path) {
  const std::optional<Property> p = v.is_string() ? property_from_string(v.get<std::string>()) : std::nullopt;
  if (!p) throw Bad{path, "a property name"};
  return *p;
}

Status status(const json& v, const std::string& path) {
  for (Status s : {Status::kHolds, Status::kViolated, Status::kNotApplicable}) {
    if (v.is_string() && v.get<std::string>() == to_string(s)) return s;
  }
  throw Bad{path, "holds, violated or not_applicable"};
}

SeedRange range(const json& obj, const std::string& path, const char* key) {
  const json& r = at(obj, path, key);
  const std::string p = sub(path, key);
  const SeedRange out{u64(r, p, "first"), u64(r, p, "last")};
  if (out.first > out.last || out.last - out.first >= kMaxSweepSeeds) throw Bad{p, "a seed range first <= last"};
  return out;
}

SweepRun run_of(const json& j, const std::string& path) {
  SweepRun run;
  run.seed = u64(j, path, "seed");
  run.all_met = boolean(j, path, "all_met");
  const json& verdicts = at(j, path, "verdicts");
  const std::string vp = sub(path, "verdicts");
  for (std::size_t p = 0; p < kPropertyCount; ++p) {
    const char* name = to_string(all_properties()[p]);
    run.status[p] = status(at(verdicts, vp, name), sub(vp, name));
    run.met[p] = true;
  }
  const json& unmet = array(j, path, "unmet");
  for (std::size_t i = 0; i < unmet.size(); ++i) {
    const Property p = property(unmet[i], fmt::format("{}[{}]", sub(path, "unmet"), i));
    run.met[static_cast<std::size_t>(std::find(all_properties().begin(), all_properties().end(), p) -
                                     all_properties().begin())] = false;
  }
  run.faults = u64(j, path, "faults");
  run.events = u64(j, path, "events");
  const std::string fp = str(j, path, "fingerprint");
  if (fp.size() != 16 || fp.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw Bad{sub(path, "fingerprint"), "16 hex digits"};
  }
  run.fingerprint = std::stoull(fp, nullptr, 16);
  const json& m = at(j, path, "metrics");
  const std::string mp = sub(path, "metrics");
  run.metrics =
      SweepMetrics{i64(m, mp, "writes_accepted"), i64(m, mp, "writes_rejected"), i64(m, mp, "grants"),
                   i64(m, mp, "lease_losses"), sim::Duration{i64(m, mp, "longest_two_holder_overlap_ns")},
                   i64(m, mp, "holder_audit_findings"), i64(m, mp, "iterations"), i64(m, mp, "iterations_succeeded"),
                   // Read back too: sweep.json's updates_lost aggregate
                   // is re-rendered from it (issue #35).
                   i64(m, mp, "updates_lost")};
  // Written since the acquisition latency was added; older files have none.
  if (m.contains("acquires")) {
    run.metrics.acquires = i64(m, mp, "acquires");
    run.metrics.acquire_latency_p50 = sim::Duration{i64(m, mp, "acquire_latency_p50_ns")};
    run.metrics.acquire_latency_p99 = sim::Duration{i64(m, mp, "acquire_latency_p99_ns")};
  }
  return run;
}

/// The sweep.json `j` back into a SweepResult (unchecked against the bytes).
SweepFile file_of(const json& j, const std::string& path) {
  SweepFile f;
  f.path = path;
  if (!j.is_object() || !j.contains("sweep_version")) throw Bad{"", "a sweep.json object (no sweep_version)"};
  if (u64(j, "", "sweep_version") != 1) throw Bad{"sweep_version", "1 (this fencesim reads sweep_version 1)"};
  SweepResult& r = f.sweep;
  r.fencesim_version = str(j, "", "fencesim_version");
  const json& sc = at(j, "", "scenario");
  r.scenario = str(sc, "scenario", "name");
  r.source = str(sc, "scenario", "source");
  // Written since the content hash was added; older files have none.
  if (sc.is_object() && sc.contains("content_hash")) {
    r.content_hash = str(sc, "scenario", "content_hash");
    if (r.content_hash.size() != 24 || r.content_hash.rfind("fnv1a64:", 0) != 0 ||
        r.content_hash.find_first_not_of("0123456789abcdef", 8) != std::string::npos) {
      throw Bad{"scenario.content_hash", "\"fnv1a64:\" and 16 hex digits"};
    }
  }
  r.seeds = range(j, "", "seeds");
  const json& shard = at(j, "", "shard");
  r.shard = Shard{u64(shard, "shard", "index"), u64(shard, "shard", "count")};
  std::string why;
  if (r.shard.index == 0 || r.shard.index > r.shard.count || !check_shard(r.shard, r.seeds, why)) {
    throw Bad{"shard", "a shard I/N of the seed range"};
  }
  const std::optional<Keep> keep = keep_from_string(str(j, "", "keep"));
  if (!keep) throw Bad{"keep", "none, failing or all"};
  r.keep = *keep;
  r.keep_per_property = u64(j, "", "keep_per_property");
  r.first_seeds = u64(j, "", "first_seeds");
  const json& check = at(j, "", "determinism_check");
  r.check_every = u64(check, "determinism_check", "every");
  if (r.check_every == 0) throw Bad{"determinism_check.every", "a number of seeds >= 1"};
  r.checked_seeds = seeds(check, "determinism_check", "seeds");
  if (r.checked_seeds != shard_check_seeds(r.seeds, r.shard, r.check_every)) {
    throw Bad{"determinism_check.seeds", fmt::format("the seeds shard {}/{} re-runs", r.shard.index, r.shard.count)};
  }
  const json& props = array(j, "", "properties");
  for (std::size_t i = 0; i < props.size(); ++i) {
    const std::string p = fmt::format("properties[{}]", i);
    const Property prop = property(at(props[i], p, "property"), p + ".property");
    const json& e = at(props[i], p, "expected");
    if (e.is_null()) continue;
    if (e == "holds") {
      f.expectations[prop] = Expectation::kHolds;
    } else if (e == "violated") {
      f.expectations[prop] = Expectation::kViolated;
    } else {
      throw Bad{p + ".expected", "holds, violated or null"};
    }
  }
  const json& runs = array(j, "", "runs");
  const SeedRange own = shard_seeds(r.seeds, r.shard);
  if (runs.size() != own.count()) {
    throw Bad{"runs", fmt::format("{} runs, one per seed {}..{} of shard {}/{} (it has {})", own.count(), own.first,
                                  own.last, r.shard.index, r.shard.count, runs.size())};
  }
  r.runs.reserve(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string p = fmt::format("runs[{}]", i);
    r.runs.push_back(run_of(runs[i], p));
    if (r.runs.back().seed != own.first + i) throw Bad{p + ".seed", fmt::format("seed {}", own.first + i)};
  }
  const std::vector<std::uint64_t> kept = seeds(j, "", "kept");
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] < own.first || kept[i] > own.last) throw Bad{fmt::format("kept[{}]", i), "a seed of the shard"};
    r.runs[static_cast<std::size_t>(kept[i] - own.first)].kept = true;
  }
  tally_sweep(r, f.expectations);
  return f;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

std::optional<SweepFile> read_sweep_file(const std::string& path, std::string& error) {
  if (std::error_code ec; fs::is_directory(path, ec)) {
    error = path + ": is a folder; give the sweep.json inside it (" + (fs::path(path) / "sweep.json").string() + ")";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    error = path + (fs::exists(path, ec) ? ": cannot be read" : ": no such file");
    return std::nullopt;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  if (in.bad()) {
    error = path + ": cannot be read";
    return std::nullopt;
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const auto at_pos = what.find("parse error"); at_pos != std::string::npos) what = what.substr(at_pos);
    error = path + ": not valid JSON (" + what + "); is the file complete (a shard still running, a copy cut short)?";
    return std::nullopt;
  }
  try {
    SweepFile f = file_of(j, path);
    if (const std::string rendered = render_sweep_json(f.sweep); rendered != text) {
      // Where: the first line that differs from what fencesim would write for these runs.
      std::size_t line = 1;
      const std::size_t n = std::min(rendered.size(), text.size());
      for (std::size_t i = 0; i < n && rendered[i] == text[i]; ++i) line += text[i] == '\n' ? 1 : 0;
      error = path + ": line " + std::to_string(line) +
              ": is not the sweep.json fencesim writes for the runs it lists (edited, or written by another "
              "fencesim than " +
              std::string(version()) + "?); merge only files written by `fencesim sweep`";
      return std::nullopt;
    }
    return f;
  } catch (const Bad& b) {
    error = path + (b.path.empty() ? "" : ": at " + b.path) + ": expected " + b.expected +
            "; is it a sweep.json written by `fencesim sweep`?";
  } catch (const json::exception& e) {
    error = path + ": not a sweep.json written by `fencesim sweep` (" + e.what() + ")";
  }
  return std::nullopt;
}

std::optional<MergedSweep> merge_sweeps(const std::vector<SweepFile>& files, std::string& error) {
  error.clear();
  if (files.empty()) {
    error = "merge needs the sweep.json files of the shards";
    return std::nullopt;
  }
  const SweepFile& base = files.front();
  const SweepResult& b = base.sweep;
  auto expectations_text = [](const SweepFile& f) {
    std::string s;
    for (const auto& [p, e] : f.expectations)
      s += (s.empty() ? "" : ", ") + fmt::format("{} {}", to_string(p), to_string(e));
    return s.empty() ? std::string("none") : s;
  };
  for (const SweepFile& f : files) {
    const SweepResult& r = f.sweep;
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      error = fmt::format("{} and {} are from different {} ({} vs {}); merge the shards of one sweep only", base.path,
                          f.path, what, x, y);
    };
    if (r.scenario != b.scenario || r.source != b.source) {
      differ("scenarios", quoted(b.scenario) + " from " + b.source, quoted(r.scenario) + " from " + r.source);
    } else if (f.expectations != base.expectations) {
      differ("scenarios (expect blocks)", expectations_text(base), expectations_text(f));
    } else if (r.content_hash != b.content_hash) {
      error = fmt::format(
          "{} and {} are from different scenarios: the same name, file name and expect block, but other content "
          "(content_hash {} vs {}: was the file edited between the shards?); merge the shards of one sweep only",
          base.path, f.path, b.content_hash.empty() ? "none" : b.content_hash,
          r.content_hash.empty() ? "none" : r.content_hash);
    } else if (r.fencesim_version != b.fencesim_version) {
      differ("fencesim versions", b.fencesim_version, r.fencesim_version);
    } else if (r.seeds != b.seeds) {
      differ("seed ranges", fmt::format("{}..{}", b.seeds.first, b.seeds.last),
             fmt::format("{}..{}", r.seeds.first, r.seeds.last));
    } else if (r.keep != b.keep) {
      differ("keep modes", std::string("--keep ") + to_string(b.keep), std::string("--keep ") + to_string(r.keep));
    } else if (r.keep_per_property != b.keep_per_property || r.first_seeds != b.first_seeds ||
               r.check_every != b.check_every) {
      differ("tally limits (keep_per_property, first_seeds, determinism_check.every)",
             fmt::format("{}, {}, {}", b.keep_per_property, b.first_seeds, b.check_every),
             fmt::format("{}, {}, {}", r.keep_per_property, r.first_seeds, r.check_every));
    } else if (r.shard.count != b.shard.count) {
      differ("shard counts", fmt::format("{} shards", b.shard.count), fmt::format("{} shards", r.shard.count));
    }
    if (!error.empty()) return std::nullopt;
  }
  const std::uint64_t n = b.shard.count;
  std::map<std::uint64_t, const SweepFile*> by_index;
  for (const SweepFile& f : files) {
    const auto [it, fresh] = by_index.emplace(f.sweep.shard.index, &f);
    if (!fresh) {
      error = fmt::format("{} and {} are both shard {}/{} (overlapping shards: the same seeds twice)", it->second->path,
                          f.path, f.sweep.shard.index, n);
      return std::nullopt;
    }
  }
  if (by_index.size() != n) {
    std::string missing;
    std::uint64_t count = 0;
    for (std::uint64_t i = 1; i <= n; ++i) {
      if (by_index.contains(i)) continue;
      if (++count <= 10) {
        const SeedRange own = shard_seeds(b.seeds, Shard{i, n});
        missing += fmt::format("{}{}/{} (seeds {}..{})", missing.empty() ? "" : ", ", i, n, own.first, own.last);
      }
    }
    if (count > 10) missing += fmt::format(" and {} more", count - 10);
    error = fmt::format("missing {} of the {} shards of {} seeds {}..{}: {}; give every shard's sweep.json", count, n,
                        b.scenario, b.seeds.first, b.seeds.last, missing);
    return std::nullopt;
  }

  MergedSweep m;
  m.shards = files.size();
  for (const SweepFile& f : files) m.folders.push_back(fs::path(f.path).parent_path().string());
  SweepResult& r = m.sweep;
  r.fencesim_version = b.fencesim_version;
  r.scenario = b.scenario;
  r.source = b.source;
  r.content_hash = b.content_hash;
  r.seeds = b.seeds;
  r.shard = Shard{1, 1};
  r.keep = b.keep;
  r.keep_per_property = b.keep_per_property;
  r.first_seeds = b.first_seeds;
  r.check_every = b.check_every;
  r.checked_seeds = check_seeds(b.seeds, b.check_every);
  r.runs.reserve(static_cast<std::size_t>(b.seeds.count()));
  std::vector<const SweepFile*> origin;  // per run
  for (const auto& [index, f] : by_index) {
    for (const SweepRun& run : f->sweep.runs) {
      r.runs.push_back(run);
      origin.push_back(f);
    }
  }
  // Every check seed of the whole sweep was re-run by its shard: read_sweep_file checked each file's list.
  // The runs the unsharded sweep keeps; a shard kept them too (see the header).
  std::set<std::uint64_t> keep;
  if (r.keep == Keep::kFailing) {
    const std::vector<std::uint64_t> k = failing_to_keep(r.runs, r.keep_per_property);
    keep.insert(k.begin(), k.end());
  }
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    SweepRun& run = r.runs[i];
    run.kept = run.kept && (r.keep == Keep::kAll || keep.contains(run.seed));
    if (run.kept) m.kept.push_back(MergedSweep::Kept{run.seed, fs::path(origin[i]->path).parent_path().string()});
  }
  tally_sweep(r, base.expectations);
  return m;
}

namespace {

/// `dir` is not the folder of a file merged (a shard's own folder).
bool not_a_shard_folder(const MergedSweep& m, const std::string& dir, std::string& error) {
  std::error_code ec;
  for (const std::string& from : m.folders) {
    if (fs::exists(dir, ec) && fs::equivalent(from.empty() ? "." : from, dir, ec)) {
      error = fmt::format("the merged sweep folder {} is a shard's own folder; merge into another --out", dir);
      return false;
    }
  }
  return true;
}

/// The note for kept folders that were not beside their shard's sweep.json;
/// their runs become not kept.
void forget_missing(MergedSweep& m, const std::vector<std::uint64_t>& missing, std::vector<std::string>& notes) {
  std::string list;
  for (std::size_t i = 0; i < missing.size() && i < 10; ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 10) list += ", …";
  notes.push_back(
      fmt::format("{} kept run report folder{} not found beside {} shard's sweep.json (seed{} {}); the merge lists "
                  "{} as not kept",
                  missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "its" : "their",
                  missing.size() == 1 ? "" : "s", list, missing.size() == 1 ? "it" : "them"));
  const std::set<std::uint64_t> gone(missing.begin(), missing.end());
  for (SweepRun& run : m.sweep.runs) {
    if (gone.contains(run.seed)) run.kept = false;
  }
  std::erase_if(m.kept, [&](const MergedSweep::Kept& k) { return gone.contains(k.seed); });
}

/// Copies the kept runs' folders into `into` (an existing folder), each
/// through a temporary name; errors name the folder the user asked for,
/// `shown`. Stops at an interrupt (InterruptScope).
bool copy_kept(MergedSweep& m, const fs::path& into, const std::string& shown, std::vector<std::string>& notes,
               std::string& error) {
  std::error_code ec;
  std::vector<std::uint64_t> missing;
  for (const MergedSweep::Kept& k : m.kept) {
    if (InterruptScope::signal() != 0) {
      error = fmt::format("interrupted (signal {}); {} is as it was", InterruptScope::signal(), shown);
      return false;
    }
    const std::string name = "seed" + std::to_string(k.seed);
    const fs::path src = fs::path(k.from.empty() ? "." : k.from) / name;
    if (!fs::is_directory(src, ec)) {
      missing.push_back(k.seed);
      continue;
    }
    const fs::path tmp = into / ("." + name + ".tmp");
    fs::remove_all(tmp, ec);
    fs::copy(src, tmp, fs::copy_options::recursive, ec);
    if (!ec) fs::rename(tmp, into / name, ec);
    if (ec) {
      error = fmt::format("cannot copy {} to {}: {}", src.string(), (fs::path(shown) / name).string(), ec.message());
      fs::remove_all(tmp, ec);
      return false;
    }
  }
  if (!missing.empty()) forget_missing(m, missing, notes);
  return true;
}

}  // namespace

bool copy_kept_reports(MergedSweep& m, const std::string& dir, std::vector<std::string>& notes, std::string& error) {
  std::error_code ec;
  if (!not_a_shard_folder(m, dir, error)) return false;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  remove_seed_folders(dir);
  return copy_kept(m, dir, dir, notes, error);
}

bool write_merged_sweep(MergedSweep& m, const std::string& dir, std::vector<std::string>& notes, std::string& error) {
  if (!not_a_shard_folder(m, dir, error)) return false;
  const InterruptScope interrupt;
  const std::string staging = staging_folder(dir);
  std::error_code ec;
  fs::create_directories(staging, ec);
  if (ec) {
    error = "cannot create " + staging + ": " + ec.message();
    return false;
  }
  if (copy_kept(m, staging, dir, notes, error) && write_sweep_files(staging, m.sweep, error)) {
    if (InterruptScope::signal() == 0) return swap_folder_in(staging, dir, error);
    error = fmt::format("interrupted (signal {}); {} is as it was", InterruptScope::signal(), dir);
  }
  fs::remove_all(staging, ec);
  return false;
}

}  // namespace fencesim
