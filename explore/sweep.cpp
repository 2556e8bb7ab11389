// `fencesim sweep`: one scenario over a range of seeds on worker threads
// (include/fencesim/sweep.hpp).
//
// Threads live here, in explore/, never in sim/ or models/: each worker
// calls run_scenario for one seed at a time, and a run never sees another
// run or the worker it is on. Results go into a table indexed by seed, so
// whatever finishes first, the table — and sweep.json — is the same. No
// clock is read here: the progress callback gets counts only.
#include "fencesim/sweep.hpp"

#include "explore/percent.hpp"

#include "loader/writer.hpp"
#include "models/program/errors.hpp"
#include "sim/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

namespace fencesim {

namespace fs = std::filesystem;

namespace {

SweepRun record(const RunResult& r) {
  SweepRun run;
  run.seed = r.seed;
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    const Verdict& v = verdict(r, all_properties()[i]);
    run.status[i] = v.status;
    run.met[i] = v.met;
  }
  run.all_met = r.all_met;
  run.faults = r.faults.size();
  run.events = r.events;
  run.fingerprint = r.fingerprint;
  const Metrics& m = r.metrics;
  run.metrics = SweepMetrics{
      m.writes_accepted,     m.writes_rejected,    m.grants,        m.lease_losses, m.longest_overlap,
      m.audit_findings,      m.iterations,         m.iterations_ok, m.updates_lost, m.acquire_latency.count,
      m.acquire_latency.p50, m.acquire_latency.p99};
  return run;
}

/// What the worker threads share: the next task, the results table (each
/// slot written by one thread), errors, progress, and the lock that
/// serializes write_reports (its interrupt handler keeps process-wide state).
struct Shared {
  const Scenario& scenario;
  const SweepOptions& opt;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> interrupted{false};  // opt.interrupted answered true
  std::mutex mu;                         // errors, mismatches, progress
  std::mutex write_mu;                   // write_reports, one at a time
  std::vector<SweepError> errors;
  std::vector<SweepMismatch> mismatches;
  SweepProgress progress;

  Shared(const Scenario& s, const SweepOptions& o) : scenario(s), opt(o) {}

  void fail(SweepError::Kind kind, std::uint64_t seed, std::string message) {
    const std::lock_guard<std::mutex> lock(mu);
    errors.push_back(SweepError{kind, seed, std::move(message)});
    stop = true;
  }

  /// One run; nullopt (and the sweep stopped) if it could not run to its end.
  std::optional<RunResult> run(std::uint64_t seed, bool trace) {
    RunOptions ro;
    ro.seed = seed;
    ro.trace = trace;
    try {
      RunResult r = run_scenario(scenario, ro);
      if (r.budget_exceeded) {
        fail(SweepError::Kind::kInput, seed,
             fmt::format("seed {}: the run was stopped at its budget of {} events (or {} waiting at once); shorten "
                         "`duration`, reduce clients/iterations, or lengthen the intervals that schedule events "
                         "faster than they run",
                         seed, Limits::kEventBudget, Limits::kPendingBudget));
        return std::nullopt;
      }
      return r;
    } catch (const UnsupportedScenario& e) {
      fail(SweepError::Kind::kInput, seed, fmt::format("seed {}: cannot run: {}", seed, e.what()));
    } catch (const InvalidScenario& e) {
      fail(SweepError::Kind::kInput, seed, fmt::format("seed {}: {}", seed, e.problem.to_string()));
    } catch (const program::ProgramError& e) {
      fail(e.kind == program::ProgramError::Kind::kFailure ? SweepError::Kind::kInternal : SweepError::Kind::kInput,
           seed, fmt::format("seed {}: {}", seed, e.what()));
    } catch (const std::bad_alloc&) {
      fail(SweepError::Kind::kInternal, seed,
           fmt::format("seed {}: out of memory; a run can take up to about 2 GB (docs/FORMAT.md, limits), one per job: "
                       "use fewer --jobs or free some memory",
                       seed));
    } catch (const std::exception& e) {
      fail(SweepError::Kind::kInternal, seed,
           fmt::format("internal error while running seed {}: {}; this is a bug in fencesim, please report it with "
                       "the scenario file and seed",
                       seed, e.what()));
    }
    return std::nullopt;
  }

  bool write(std::uint64_t seed, const RunResult& r) {
    const std::string dir = opt.report_dir + "/seed" + std::to_string(seed);
    std::string error;
    bool ok = false;
    try {
      const std::lock_guard<std::mutex> lock(write_mu);
      ok = write_reports(dir, scenario, r, ReportMeta{opt.source, true}, error);
    } catch (const std::exception& e) {  // on a worker thread: never past it (std::terminate)
      fail(SweepError::Kind::kInternal, seed,
           fmt::format("internal error while writing the reports of seed {}: {}; this is a bug in fencesim, please "
                       "report it with the scenario file and seed",
                       seed, e.what()));
      return false;
    }
    if (!ok) fail(SweepError::Kind::kInput, seed, error);
    return ok;
  }

  void mismatch(std::uint64_t seed, std::uint64_t first, std::uint64_t second) {
    const std::lock_guard<std::mutex> lock(mu);
    mismatches.push_back(SweepMismatch{seed, first, second});
  }
};

/// Runs `work(i)` for i in [0, n) on `jobs` threads (the calling thread
/// alone when jobs is 1), until done or `sh.stop`.
template <class F>
void parallel_for(Shared& sh, std::size_t n, unsigned jobs, F work) {
  sh.next = 0;
  auto loop = [&] {
    while (!sh.stop) {
      if (sh.opt.interrupted && sh.opt.interrupted()) {
        sh.interrupted = true;
        sh.stop = true;
        return;
      }
      const std::size_t i = sh.next.fetch_add(1);
      if (i >= n) return;
      work(i);
    }
  };
  const std::size_t threads = std::min<std::size_t>(std::max(1u, jobs), std::max<std::size_t>(n, 1));
  if (threads == 1) {
    loop();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(loop);
  for (std::thread& t : pool) t.join();
}

}  // namespace

void remove_seed_folders(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> old;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.starts_with("seed") && parse_seed(name.substr(4)) && e.is_directory(ec)) {
      old.push_back(e.path());
    }
  }
  for (const fs::path& p : old) fs::remove_all(p, ec);
}

void tally_sweep(SweepResult& res, const std::map<Property, Expectation>& expect) {
  res.properties.clear();
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    PropertyAggregate a;
    a.property = all_properties()[i];
    if (auto it = expect.find(a.property); it != expect.end()) a.expected = it->second;
    for (const SweepRun& r : res.runs) {
      if (r.status[i] == Status::kNotApplicable) {
        ++a.not_applicable;
      } else {
        ++a.runs;
        if (r.status[i] == Status::kViolated) {
          ++a.violations;
          if (a.first_violations.size() < res.first_seeds) a.first_violations.push_back(r.seed);
        }
      }
      if (!r.met[i]) {
        ++a.unmet;
        if (a.first_unmet.size() < res.first_seeds) a.first_unmet.push_back(r.seed);
      }
    }
    if (a.runs > 0) a.rate = static_cast<double>(a.violations) / static_cast<double>(a.runs);
    a.interval = wilson_interval(a.violations, a.runs);
    res.properties.push_back(std::move(a));
  }
  res.all_met = std::all_of(res.runs.begin(), res.runs.end(), [](const SweepRun& r) { return r.all_met; });
}

/// Keep::kFailing: per property, the first `per` violating seeds and the
/// first `per` seeds that missed its expectation; in seed order.
std::vector<std::uint64_t> failing_to_keep(const std::vector<SweepRun>& runs, std::size_t per) {
  std::set<std::uint64_t> keep;
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    std::size_t violated = 0, unmet = 0;
    for (const SweepRun& r : runs) {
      if (violated >= per && unmet >= per) break;
      if (r.status[i] == Status::kViolated && violated < per) {
        ++violated;
        keep.insert(r.seed);
      }
      if (!r.met[i] && unmet < per) {
        ++unmet;
        keep.insert(r.seed);
      }
    }
  }
  return {keep.begin(), keep.end()};
}

namespace {

std::string percent(double v) { return percent_number(v, 1) + " %"; }

std::string updates_lost_text(const UpdatesLostAggregate& a) {
  return fmt::format(
      "Updates lost: {} of {} accepted writes ({}); per run, mean {} [95 % interval {}, {}] over {} runs with writes.",
      a.updates_lost, a.writes_accepted, percent_number(a.pooled, 2) + " %", percent_number(a.mean, 2) + " %",
      percent_number(a.low, 2) + " %", percent_number(a.high, 2) + " %", a.runs);
}

std::string seed_list(const std::vector<std::uint64_t>& seeds, std::uint64_t total) {
  if (seeds.empty()) return "-";
  std::string s;
  for (std::uint64_t seed : seeds) s += (s.empty() ? "" : ", ") + std::to_string(seed);
  if (total > seeds.size()) s += ", …";
  return s;
}

std::string rate_text(const PropertyAggregate& a) {
  if (!a.rate) return "n/a";
  return fmt::format("{} [{}, {}]", percent(*a.rate), percent(a.interval.low), percent(a.interval.high));
}

std::string expected_text(const PropertyAggregate& a) { return a.expected ? to_string(*a.expected) : "-"; }

std::string jstr(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

const char* to_string(Keep k) {
  switch (k) {
    case Keep::kNone: return "none";
    case Keep::kFailing: return "failing";
    case Keep::kAll: return "all";
  }
  return "?";
}

std::optional<Keep> keep_from_string(const std::string& s) {
  for (Keep k : {Keep::kNone, Keep::kFailing, Keep::kAll}) {
    if (s == to_string(k)) return k;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_seed(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > UINT64_MAX) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

std::optional<SeedRange> parse_seed_range(const std::string& text, std::string& error) {
  const auto dots = text.find("..");
  std::optional<std::uint64_t> a, b;
  if (dots != std::string::npos) {
    a = parse_seed(text.substr(0, dots));
    b = parse_seed(text.substr(dots + 2));
  }
  if (!a || !b) {
    error =
        "--seeds expects A..B, two decimal seeds from 0 to 18446744073709551615 (e.g. 1..200), got \"" + text + "\"";
    return std::nullopt;
  }
  if (*a > *b) {
    error = "--seeds " + text + ": the first seed is greater than the last";
    return std::nullopt;
  }
  if (*b - *a >= kMaxSweepSeeds) {
    error = fmt::format(
        "--seeds {}: {} seeds; a sweep runs at most {} (split the range)", text,
        static_cast<unsigned __int128>(*b - *a) + 1 > UINT64_MAX ? std::string("2^64") : std::to_string(*b - *a + 1),
        kMaxSweepSeeds);
    return std::nullopt;
  }
  return SeedRange{*a, *b};
}

UpdatesLostAggregate aggregate_updates_lost(const std::vector<SweepRun>& runs) {
  UpdatesLostAggregate a;
  // Sums in run (seed) order: the same bytes whatever the jobs.
  double sum = 0, sum_sq = 0;
  for (const SweepRun& r : runs) {
    a.updates_lost += r.metrics.updates_lost;
    a.writes_accepted += r.metrics.writes_accepted;
    if (r.metrics.writes_accepted == 0) continue;
    const double f = static_cast<double>(r.metrics.updates_lost) / static_cast<double>(r.metrics.writes_accepted);
    ++a.runs;
    sum += f;
    sum_sq += f * f;
  }
  if (a.writes_accepted > 0) a.pooled = static_cast<double>(a.updates_lost) / static_cast<double>(a.writes_accepted);
  if (a.runs == 0) return a;
  const double n = static_cast<double>(a.runs);
  a.mean = sum / n;
  const double var = a.runs > 1 ? std::max(0.0, (sum_sq - n * a.mean * a.mean) / (n - 1)) : 0.0;
  const double half = 1.96 * std::sqrt(var / n);
  a.low = std::max(0.0, a.mean - half);
  a.high = std::min(1.0, a.mean + half);
  return a;
}

Interval wilson_interval(std::uint64_t k, std::uint64_t n, double z) {
  if (n == 0) return Interval{0, 1};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(k) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double center = (p + z2 / (2 * nn)) / denom;
  const double half = z / denom * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return Interval{std::clamp(center - half, 0.0, 1.0), std::clamp(center + half, 0.0, 1.0)};
}

std::vector<std::uint64_t> check_seeds(const SeedRange& seeds, std::uint64_t every) {
  every = std::max<std::uint64_t>(every, 1);
  std::vector<std::uint64_t> out;
  for (std::uint64_t off = 0; off < seeds.count(); off += every) out.push_back(seeds.first + off);
  return out;
}

std::string scenario_content_hash(const Scenario& s) {
  Scenario canonical = s;
  canonical.description.clear();
  WriteOptions w;
  w.seed = 0;
  return fmt::format("fnv1a64:{:016x}", sim::fnv1a64(write_scenario(canonical, w)));
}

namespace {
/// The seed range or shard the sweep cannot run, as an input error.
std::optional<SweepError> sweep_input_error(const SweepOptions& opt) {
  if (opt.seeds.first > opt.seeds.last || opt.seeds.last - opt.seeds.first >= kMaxSweepSeeds) {
    return SweepError{SweepError::Kind::kInput, opt.seeds.first,
                      fmt::format("a sweep runs 1 to {} seeds, first <= last", kMaxSweepSeeds)};
  }
  if (std::string why;
      opt.shard.index == 0 || opt.shard.index > opt.shard.count || !check_shard(opt.shard, opt.seeds, why)) {
    return SweepError{SweepError::Kind::kInput, opt.seeds.first,
                      why.empty() ? std::string("a shard I/N needs 1 <= I <= N") : why};
  }
  return std::nullopt;
}
}  // namespace

SweepResult run_sweep(const Scenario& s, const SweepOptions& opt) {
  SweepResult res;
  res.fencesim_version = version();
  res.scenario = s.name;
  res.source = opt.source;
  res.content_hash = scenario_content_hash(s);
  res.seeds = opt.seeds;
  res.shard = opt.shard;
  res.keep = opt.keep;
  res.keep_per_property = opt.keep_per_property;
  res.first_seeds = opt.first_seeds;
  if (auto e = sweep_input_error(opt)) {
    res.error = std::move(e);
    return res;
  }
  const SeedRange own = shard_seeds(opt.seeds, opt.shard);  // this shard's seeds; all of them for {1, 1}
  const std::size_t n = static_cast<std::size_t>(own.count());
  const bool writing = !opt.report_dir.empty() && opt.keep != Keep::kNone;
  const bool keep_all = writing && opt.keep == Keep::kAll;
  if (!opt.report_dir.empty()) remove_seed_folders(opt.report_dir);

  Shared sh(s, opt);
  sh.progress.total = n;
  std::vector<SweepRun> runs(n);

  // First pass: every seed. With Keep::kAll the trace is on and each run
  // writes its reports; otherwise no trace and no report.
  parallel_for(sh, n, opt.jobs, [&](std::size_t i) {
    const std::uint64_t seed = own.first + i;
    std::optional<RunResult> r = sh.run(seed, keep_all);
    if (!r) return;
    runs[i] = record(*r);
    if (keep_all) runs[i].kept = sh.write(seed, *r);
    const std::lock_guard<std::mutex> lock(sh.mu);
    ++sh.progress.done;
    for (std::size_t p = 0; p < kPropertyCount; ++p) {
      if (runs[i].status[p] == Status::kViolated) ++sh.progress.violations[p];
    }
    if (opt.on_progress) opt.on_progress(sh.progress);
  });

  // Second pass: the self-check's seeds with the trace the other way, and
  // Keep::kFailing's runs with the trace on (their reports written); both
  // compared with the first pass. Latest seeds first, so that a re-run is
  // unlikely to land on the thread, or after the run, it first ran after.
  std::vector<std::uint64_t> to_keep;
  if (writing && opt.keep == Keep::kFailing && !sh.stop) to_keep = failing_to_keep(runs, opt.keep_per_property);
  const std::set<std::uint64_t> kept_set(to_keep.begin(), to_keep.end());
  struct Task {
    std::uint64_t seed;
    bool keep;
  };
  std::vector<Task> tasks;
  for (std::uint64_t seed : to_keep) tasks.push_back(Task{seed, true});
  res.check_every = std::max<std::uint64_t>(opt.check_every, 1);
  res.checked_seeds = shard_check_seeds(opt.seeds, opt.shard, res.check_every);
  for (std::uint64_t seed : res.checked_seeds) {
    if (!kept_set.contains(seed)) tasks.push_back(Task{seed, false});
  }
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.seed > b.seed; });
  if (!sh.stop) {
    parallel_for(sh, tasks.size(), opt.jobs, [&](std::size_t t) {
      const Task task = tasks[t];
      const std::size_t i = static_cast<std::size_t>(task.seed - own.first);
      std::optional<RunResult> r = sh.run(task.seed, task.keep || !keep_all);
      if (!r) return;
      if (r->fingerprint != runs[i].fingerprint) {
        sh.mismatch(task.seed, runs[i].fingerprint, r->fingerprint);
        return;
      }
      if (task.keep) runs[i].kept = sh.write(task.seed, *r);
    });
  }

  if (sh.interrupted) {
    res.interrupted = true;
    return res;
  }
  // Seeds are taken in order and a taken seed always runs to its end, so
  // every seed below the lowest one that failed ran: that seed, the one
  // reported, is the same whatever the jobs.
  if (!sh.errors.empty()) {
    res.error = *std::min_element(sh.errors.begin(), sh.errors.end(),
                                  [](const SweepError& a, const SweepError& b) { return a.seed < b.seed; });
    return res;
  }
  if (!sh.mismatches.empty()) {
    res.mismatch = *std::min_element(sh.mismatches.begin(), sh.mismatches.end(),
                                     [](const SweepMismatch& a, const SweepMismatch& b) { return a.seed < b.seed; });
  }
  res.runs = std::move(runs);
  tally_sweep(res, s.expect);
  return res;
}

namespace {

/// The version that ran the runs (version() for a result built by hand).
std::string sweep_version_of(const SweepResult& r) {
  return r.fencesim_version.empty() ? version() : r.fencesim_version;
}

/// "seeds A to B (n runs)", or for a shard "shard I of N: seeds a to b (k runs) of A to B".
std::string seeds_text(const SweepResult& r, const char* to) {
  const auto runs = [](std::uint64_t n) { return fmt::format("{} run{}", n, n == 1 ? "" : "s"); };
  if (r.shard.count == 1)
    return fmt::format("seeds {}{}{} ({})", r.seeds.first, to, r.seeds.last, runs(r.seeds.count()));
  const SeedRange own = shard_seeds(r.seeds, r.shard);
  return fmt::format("shard {} of {}: seeds {}{}{} ({}) of {}{}{}", r.shard.index, r.shard.count, own.first, to,
                     own.last, runs(own.count()), r.seeds.first, to, r.seeds.last);
}

/// sweep.json, streamed: a sweep of millions of runs is never one string.
void stream_sweep_json(std::ostream& o, const SweepResult& r) {
  using nlohmann::ordered_json;
  o << "{\n";
  o << "  \"sweep_version\": 1,\n";
  o << fmt::format("  \"fencesim_version\": {},\n", jstr(sweep_version_of(r)));
  ordered_json scenario{{"name", r.scenario}, {"source", r.source}};
  if (!r.content_hash.empty()) scenario["content_hash"] = r.content_hash;
  o << fmt::format("  \"scenario\": {},\n", scenario.dump());
  o << fmt::format("  \"seeds\": {{\"first\": {}, \"last\": {}, \"count\": {}}},\n", r.seeds.first, r.seeds.last,
                   r.seeds.count());
  const SeedRange own = shard_seeds(r.seeds, r.shard);
  o << fmt::format(
      "  \"shard\": {{\"index\": {}, \"count\": {}, \"seeds\": {{\"first\": {}, \"last\": {}, \"count\": {}}}}},\n",
      r.shard.index, r.shard.count, own.first, own.last, own.count());
  o << fmt::format("  \"keep\": {},\n", jstr(to_string(r.keep)));
  o << fmt::format("  \"keep_per_property\": {},\n", r.keep_per_property);
  o << fmt::format("  \"first_seeds\": {},\n", r.first_seeds);
  o << fmt::format("  \"determinism_check\": {},\n",
                   ordered_json{{"every", r.check_every}, {"seeds", r.checked_seeds}}.dump());
  const std::uint64_t unmet_runs = static_cast<std::uint64_t>(
      std::count_if(r.runs.begin(), r.runs.end(), [](const SweepRun& x) { return !x.all_met; }));
  o << fmt::format(
      "  \"outcome\": {},\n",
      ordered_json{{"all_expectations_met", r.all_met}, {"runs_not_met", unmet_runs}, {"exit_code", r.all_met ? 0 : 1}}
          .dump());
  o << "  \"properties\": [\n";
  for (std::size_t i = 0; i < r.properties.size(); ++i) {
    const PropertyAggregate& a = r.properties[i];
    ordered_json j{{"property", to_string(a.property)},
                   {"expected", a.expected ? ordered_json(to_string(*a.expected)) : ordered_json(nullptr)},
                   {"runs", a.runs},
                   {"violations", a.violations},
                   {"not_applicable", a.not_applicable},
                   {"unmet", a.unmet},
                   {"rate", a.rate ? ordered_json(six_decimals(*a.rate)) : ordered_json(nullptr)},
                   {"wilson95", {{"low", six_decimals(a.interval.low)}, {"high", six_decimals(a.interval.high)}}},
                   {"first_violations", a.first_violations},
                   {"first_unmet", a.first_unmet}};
    o << "    " + j.dump() + (i + 1 < r.properties.size() ? ",\n" : "\n");
  }
  o << "  ],\n";
  const UpdatesLostAggregate lost = aggregate_updates_lost(r.runs);
  o << fmt::format("  \"updates_lost\": {},\n",
                   ordered_json{{"updates_lost", lost.updates_lost},
                                {"writes_accepted", lost.writes_accepted},
                                {"pooled_fraction", six_decimals(lost.pooled)},
                                {"runs_with_writes", lost.runs},
                                {"mean_fraction", six_decimals(lost.mean)},
                                {"mean95", {{"low", six_decimals(lost.low)}, {"high", six_decimals(lost.high)}}}}
                       .dump());
  std::vector<std::uint64_t> kept;
  for (const SweepRun& x : r.runs) {
    if (x.kept) kept.push_back(x.seed);
  }
  o << fmt::format("  \"kept\": {},\n", ordered_json(kept).dump());
  o << "  \"runs\": [\n";
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const SweepRun& x = r.runs[i];
    ordered_json verdicts = ordered_json::object();
    ordered_json unmet = ordered_json::array();
    for (std::size_t p = 0; p < kPropertyCount; ++p) {
      verdicts[to_string(all_properties()[p])] = to_string(x.status[p]);
      if (!x.met[p]) unmet.push_back(to_string(all_properties()[p]));
    }
    const SweepMetrics& m = x.metrics;
    ordered_json j{{"seed", x.seed},
                   {"all_met", x.all_met},
                   {"verdicts", verdicts},
                   {"unmet", unmet},
                   {"faults", x.faults},
                   {"events", x.events},
                   {"fingerprint", fmt::format("{:016x}", x.fingerprint)},
                   {"metrics",
                    {{"writes_accepted", m.writes_accepted},
                     {"writes_rejected", m.writes_rejected},
                     {"grants", m.grants},
                     {"lease_losses", m.lease_losses},
                     {"longest_two_holder_overlap_ns", m.longest_overlap.count()},
                     {"holder_audit_findings", m.audit_findings},
                     {"iterations", m.iterations},
                     {"iterations_succeeded", m.iterations_ok},
                     {"updates_lost", m.updates_lost},
                     {"acquires", m.acquires},
                     {"acquire_latency_p50_ns", m.acquire_latency_p50.count()},
                     {"acquire_latency_p99_ns", m.acquire_latency_p99.count()}}}};
    o << "    " << j.dump() << (i + 1 < r.runs.size() ? ",\n" : "\n");
  }
  o << "  ]\n}\n";
}

}  // namespace

std::string render_sweep_json(const SweepResult& r) {
  std::ostringstream o;
  stream_sweep_json(o, r);
  return o.str();
}

namespace {

/// Properties that apply in some run, or have an expectation.
bool shown(const PropertyAggregate& a) { return a.runs > 0 || a.expected.has_value(); }

/// For each property that broke, the run that reproduces its first
/// failure and, on the next line, the shrink of it (include/fencesim/shrink.hpp);
/// for one that missed its expectation otherwise, the run.
std::string reproduce_lines(const SweepResult& r, const std::string& given, const char* bullet, const char* quote) {
  std::string o;
  const std::string file = shell_word(given);
  for (const PropertyAggregate& a : r.properties) {
    if (!a.first_violations.empty()) {
      o += fmt::format("{}{} first broke at seed {}: {}fencesim run {} --seed {}{}\n", bullet, to_string(a.property),
                       a.first_violations.front(), quote, file, a.first_violations.front(), quote);
      o += fmt::format(
          "  {}shrink it to the smallest scenario that still breaks it: {}fencesim shrink {} --seed {} "
          "--property {}{}\n",
          bullet, quote, file, a.first_violations.front(), to_string(a.property), quote);
    }
    if (!a.first_unmet.empty() && (a.first_violations.empty() || a.first_unmet.front() != a.first_violations.front())) {
      o += fmt::format("{}{} first missed its expectation ({}) at seed {}: {}fencesim run {} --seed {}{}\n", bullet,
                       to_string(a.property), expected_text(a), a.first_unmet.front(), quote, file,
                       a.first_unmet.front(), quote);
    }
  }
  return o;
}

/// Issue #35: when every run of the sweep has one fingerprint, the seed
/// changed nothing — it only feeds the random draws, and this scenario makes
/// none that matter (e.g. a scripted file with a fixed latency) — so the
/// sweep is one run repeated. Says so, and what would make the seed matter;
/// empty with fewer than two runs or with two fingerprints.
std::string same_run_note(const SweepResult& r) {
  if (r.runs.size() < 2) return {};
  const std::uint64_t f = r.runs.front().fingerprint;
  if (!std::all_of(r.runs.begin(), r.runs.end(), [f](const SweepRun& x) { return x.fingerprint == f; })) return {};
  return fmt::format(
      "every one of the {} runs has the same fingerprint ({:016x}): the seed changes nothing in this scenario, so "
      "this sweep is one run repeated. The seed drives only random draws; for seeds to give different runs add a "
      "nemesis, a network latency range ({{\"min\", \"max\"}}) or loss, or work/think ranges\n",
      r.runs.size(), f);
}

std::uint64_t runs_not_met(const SweepResult& r) {
  return static_cast<std::uint64_t>(
      std::count_if(r.runs.begin(), r.runs.end(), [](const SweepRun& x) { return !x.all_met; }));
}

}  // namespace

std::string render_sweep_markdown(const SweepResult& r) {
  std::string o = fmt::format("# Sweep: {}\n\n", r.scenario);
  o += fmt::format("Scenario `{}`{}, {}, fencesim {}.\n\n", r.scenario, r.source.empty() ? "" : " (" + r.source + ")",
                   seeds_text(r, " to "), sweep_version_of(r));
  const std::uint64_t unmet = runs_not_met(r);
  o += unmet == 0
           ? "**Every run met the scenario's `expect` block.**\n\n"
           : fmt::format("**{} of {} runs did not meet the scenario's `expect` block.**\n\n", unmet, r.runs.size());
  o += "| property | expected | violations / runs | rate [95 % Wilson interval] | expectation missed | first violating "
       "seeds |\n|---|---|---|---|---|---|\n";
  for (const PropertyAggregate& a : r.properties) {
    if (!shown(a)) continue;
    o += fmt::format("| `{}` | {} | {} / {} | {} | {} | {} |\n", to_string(a.property), expected_text(a), a.violations,
                     a.runs, rate_text(a), a.unmet, seed_list(a.first_violations, a.violations));
  }
  o += "\n" + updates_lost_text(aggregate_updates_lost(r.runs)) + "\n";
  if (const std::string note = same_run_note(r); !note.empty()) o += "\n**Note:** " + note;
  const std::string repro = reproduce_lines(r, r.source.empty() ? "FILE" : r.source, "- ", "`");
  if (!repro.empty()) o += "\n## Reproduce\n\n" + repro;
  o += fmt::format("\nDeterminism self-check: seed{} {} ran twice, with equal fingerprints",
                   r.checked_seeds.size() == 1 ? "" : "s", seed_list(r.checked_seeds, 0));
  std::vector<std::uint64_t> kept;
  for (const SweepRun& x : r.runs) {
    if (x.kept) kept.push_back(x.seed);
  }
  o += kept.empty() ? ".\n" : " (and so did every kept run).\n";
  o += fmt::format("\nReports kept (`--keep {}`): {}.\n", to_string(r.keep),
                   kept.empty()
                       ? std::string("none")
                       : fmt::format("{} folder{}, seed{}/ …", kept.size(), kept.size() == 1 ? "" : "s", kept.front()));
  o += "\nEvery run's seed, verdicts, metrics and fingerprint are in sweep.json.\n";
  return o;
}

std::string render_sweep_summary(const SweepResult& r, const std::string& file) {
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"property", "expected", "violations/runs", "rate [95 % interval]", "first violating seeds"});
  for (const PropertyAggregate& a : r.properties) {
    if (!shown(a)) continue;
    rows.push_back({std::string(to_string(a.property)), expected_text(a), fmt::format("{}/{}", a.violations, a.runs),
                    rate_text(a), seed_list(a.first_violations, a.violations)});
  }
  std::array<std::size_t, 5> width{};
  auto columns = [](const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // UTF-8 (…)
    return n;
  };
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], columns(row[c]));
  }
  std::string o = fmt::format("sweep {}: {}\n", r.scenario, seeds_text(r, ".."));
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < 5; ++c) {
      line += " " + row[c];
      if (c + 1 < 5) line += std::string(width[c] - columns(row[c]) + 1, ' ');
    }
    o += line + "\n";
  }
  const std::uint64_t unmet = runs_not_met(r);
  o += unmet == 0 ? "  every run met the expect block\n"
                  : fmt::format("  {} of {} runs did not meet the expect block\n", unmet, r.runs.size());
  o += "  " + updates_lost_text(aggregate_updates_lost(r.runs)) + "\n";
  if (const std::string note = same_run_note(r); !note.empty()) o += "  " + note;
  o += reproduce_lines(r, file, "  ", "");
  return o;
}

bool write_sweep_files(const std::string& dir, const SweepResult& r, std::string& error) {
  const std::string md = render_sweep_markdown(r);
  return write_files(dir,
                     {{"sweep.json", [&](std::ostream& o) { stream_sweep_json(o, r); }},
                      {"summary.md", [&](std::ostream& o) { o << md; }}},
                     error);
}

}  // namespace fencesim
