// Shards of a sweep (include/fencesim/sweep.hpp "Shards"): the shard rule,
// its self-check seeds, and `--shard I/N` / `--shard auto` as the command
// reads them. Where each batch engine puts the task's number:
//   - Kubernetes Indexed Job: JOB_COMPLETION_INDEX, 0-based, set from the
//     batch.kubernetes.io/job-completion-index annotation (Kubernetes docs,
//     "Indexed Job for Parallel Processing with Static Work Assignment",
//     stable since v1.24); no count is exported.
//   - Slurm job arrays: SLURM_ARRAY_TASK_ID, _COUNT, _MIN, _MAX, _STEP
//     (Slurm docs, "Job Array Support"); ids start wherever --array says.
//   - GNU parallel: PARALLEL_SEQ, the job's sequence number from 1 (man
//     parallel, "{#}").
#include <fmt/format.h>

#include "fencesim/sweep.hpp"

namespace fencesim {

std::optional<Shard> parse_shard(const std::string& text, std::string& error) {
  const auto slash = text.find('/');
  std::optional<std::uint64_t> i, n;
  if (slash != std::string::npos) {
    i = parse_seed(text.substr(0, slash));
    n = parse_seed(text.substr(slash + 1));
  }
  if (!i || !n) {
    error = "--shard expects I/N (shard I of N, e.g. 2/4) or auto, got \"" + text + "\"";
    return std::nullopt;
  }
  if (*n == 0 || *i == 0 || *i > *n) {
    error = "--shard " + text + ": I/N needs 1 <= I <= N (shards are numbered from 1)";
    return std::nullopt;
  }
  if (*n > kMaxShards) {
    error = fmt::format("--shard {}: at most {} shards", text, kMaxShards);
    return std::nullopt;
  }
  return Shard{*i, *n};
}

std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& env, std::string& error) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = env(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  // A variable that is set must be a number.
  auto number = [&](const char* name, std::optional<std::uint64_t>& out) {
    const std::optional<std::string> v = get(name);
    if (!v) return true;
    out = parse_seed(*v);
    if (!out) error = fmt::format("--shard auto: {} is \"{}\", not a decimal number", name, *v);
    return out.has_value();
  };
  const bool k8s = get("JOB_COMPLETION_INDEX").has_value(), slurm = get("SLURM_ARRAY_TASK_ID").has_value(),
             gnu = get("PARALLEL_SEQ").has_value();
  if (!k8s && !slurm && !gnu) {
    error =
        "--shard auto: none of JOB_COMPLETION_INDEX (Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (Slurm job "
        "array) or PARALLEL_SEQ (GNU parallel) is set; give the shard as --shard I/N";
    return std::nullopt;
  }
  if (static_cast<int>(k8s) + static_cast<int>(slurm) + static_cast<int>(gnu) > 1) {
    error = fmt::format(
        "--shard auto: more than one of {}{}{}is set, so the shard is ambiguous; give it as --shard I/N",
        k8s ? "JOB_COMPLETION_INDEX " : "", slurm ? "SLURM_ARRAY_TASK_ID " : "", gnu ? "PARALLEL_SEQ " : "");
    return std::nullopt;
  }
  std::optional<std::uint64_t> count;
  if (!number("FENCESIM_SHARD_COUNT", count)) return std::nullopt;
  std::uint64_t index = 0;  // 1-based
  std::string from;
  if (k8s || gnu) {
    const char* var = k8s ? "JOB_COMPLETION_INDEX" : "PARALLEL_SEQ";
    std::optional<std::uint64_t> v;
    if (!number(var, v)) return std::nullopt;
    if (!count) {
      error =
          fmt::format("--shard auto: {} is set but FENCESIM_SHARD_COUNT is not; set it to the number of shards ({})",
                      var, k8s ? "the Indexed Job's `completions`" : "the number of parallel jobs");
      return std::nullopt;
    }
    if (gnu && *v == 0) {
      error = "--shard auto: PARALLEL_SEQ is 0; GNU parallel numbers its jobs from 1";
      return std::nullopt;
    }
    index = k8s ? (*v == UINT64_MAX ? *v : *v + 1) : *v;
    from = fmt::format("{}={}", var, *v);
  } else {
    std::optional<std::uint64_t> id, task_count, min, step;
    if (!number("SLURM_ARRAY_TASK_ID", id) || !number("SLURM_ARRAY_TASK_COUNT", task_count) ||
        !number("SLURM_ARRAY_TASK_MIN", min) || !number("SLURM_ARRAY_TASK_STEP", step)) {
      return std::nullopt;
    }
    if (!task_count || !min) {
      error = fmt::format("--shard auto: SLURM_ARRAY_TASK_ID is set but {} is not (Slurm sets both in a job array)",
                          !task_count ? "SLURM_ARRAY_TASK_COUNT" : "SLURM_ARRAY_TASK_MIN");
      return std::nullopt;
    }
    const std::uint64_t st = step.value_or(1);
    if (st == 0) {
      error = "--shard auto: SLURM_ARRAY_TASK_STEP=0; Slurm's step is at least 1 (--array=A-B:S with S >= 1)";
      return std::nullopt;
    }
    if (*id < *min || (*id - *min) % st != 0) {
      error = fmt::format(
          "--shard auto: SLURM_ARRAY_TASK_ID={} is not SLURM_ARRAY_TASK_MIN={} plus a multiple of "
          "SLURM_ARRAY_TASK_STEP={}; use an evenly spaced array (--array=A-B or A-B:S)",
          *id, *min, st);
      return std::nullopt;
    }
    if (count && *count != *task_count) {
      error = fmt::format("--shard auto: FENCESIM_SHARD_COUNT={} but SLURM_ARRAY_TASK_COUNT={}; they must agree",
                          *count, *task_count);
      return std::nullopt;
    }
    count = task_count;
    index = (*id - *min) / st + 1;
    from = fmt::format("SLURM_ARRAY_TASK_ID={} (SLURM_ARRAY_TASK_MIN={}, step {})", *id, *min, st);
  }
  if (*count == 0 || *count > kMaxShards || index > *count) {
    error = fmt::format(
        "--shard auto: {} gives shard {} of {}, which is not a shard (1 <= I <= N <= {}); {}", from, index, *count,
        kMaxShards,
        slurm ? "the array's ids must be evenly spaced (--array=A-B or A-B:S)" : "check FENCESIM_SHARD_COUNT");
    return std::nullopt;
  }
  return Shard{index, *count};
}

SeedRange shard_seeds(const SeedRange& all, const Shard& sh) {
  // count ≤ kMaxSweepSeeds and index ≤ count ≤ kMaxShards: the products fit in 64 bits.
  const std::uint64_t c = all.count();
  const std::uint64_t begin = (sh.index - 1) * c / sh.count, end = sh.index * c / sh.count;
  return SeedRange{all.first + begin, all.first + end - 1};
}

bool check_shard(const Shard& sh, const SeedRange& all, std::string& error) {
  if (sh.count > all.count()) {
    error = fmt::format("--shard {}/{}: {} shards for {} seed{} ({}..{}); every shard needs at least one seed",
                        sh.index, sh.count, sh.count, all.count(), all.count() == 1 ? "" : "s", all.first, all.last);
    return false;
  }
  return true;
}

std::vector<std::uint64_t> shard_check_seeds(const SeedRange& all, const Shard& sh, std::uint64_t every) {
  const SeedRange own = shard_seeds(all, sh);
  std::vector<std::uint64_t> out;
  for (std::uint64_t seed : check_seeds(all, every)) {
    if (seed >= own.first && seed <= own.last) out.push_back(seed);
  }
  if (out.empty()) out.push_back(own.first);
  return out;
}

}  // namespace fencesim
