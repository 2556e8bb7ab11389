// explore/shrink.cpp — `fencesim shrink` (include/fencesim/shrink.hpp).
#include "fencesim/shrink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <utility>

#include "loader/writer.hpp"
#include "models/faults.hpp"
#include "models/program/errors.hpp"

namespace fencesim {

namespace fs = std::filesystem;

// -- ddmin ---------------------------------------------------------------------

std::vector<std::size_t> ddmin(std::size_t n,
                               const std::function<std::optional<bool>(const std::vector<std::size_t>&)>& fails) {
  std::vector<std::size_t> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = i;
  // Each subset is asked about once.
  std::map<std::vector<std::size_t>, bool> asked;
  bool stopped = false;
  auto test = [&](const std::vector<std::size_t>& subset) {
    if (stopped) return false;
    if (auto it = asked.find(subset); it != asked.end()) return it->second;
    const std::optional<bool> r = fails(subset);
    if (!r) {
      stopped = true;
      return false;
    }
    asked.emplace(subset, *r);
    return *r;
  };
  if (n == 0) return c;
  // Nothing at all may already fail (the failure needs none of the items).
  if (test({})) return {};
  std::size_t granularity = 2;
  while (c.size() >= 2 && !stopped) {
    const std::size_t parts = std::min(granularity, c.size());
    // Chunk k is c[begin(k), begin(k + 1)): sizes differ by at most one.
    auto begin = [&](std::size_t k) { return k * c.size() / parts; };
    bool reduced = false;
    for (std::size_t k = 0; k < parts && !reduced; ++k) {
      const std::vector<std::size_t> chunk(c.begin() + static_cast<std::ptrdiff_t>(begin(k)),
                                           c.begin() + static_cast<std::ptrdiff_t>(begin(k + 1)));
      if (test(chunk)) {
        c = chunk;
        granularity = 2;
        reduced = true;
      }
    }
    // With two parts each complement is the other chunk, already asked.
    for (std::size_t k = 0; k < parts && !reduced && parts > 2; ++k) {
      std::vector<std::size_t> complement(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(begin(k)));
      complement.insert(complement.end(), c.begin() + static_cast<std::ptrdiff_t>(begin(k + 1)), c.end());
      if (test(complement)) {
        c = std::move(complement);
        granularity = std::max<std::size_t>(parts - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (parts >= c.size()) break;  // single items, none removable: 1-minimal
    granularity = std::min(parts * 2, c.size());
  }
  return c;
}

// -- the failure's signature -------------------------------------------------

std::optional<FailureSignature> failure_signature(const RunResult& r, Property p) {
  const Verdict& v = verdict(r, p);
  if (v.status != Status::kViolated) return std::nullopt;
  FailureSignature sig;
  sig.property = p;
  const Time at = v.at.value_or(r.history.faults.empty() ? Time{0} : Time::max());
  std::optional<Time> last_fault;
  for (const FaultRecord& f : r.history.faults) {
    if (f.skipped || f.start > at) continue;
    sig.fault_kinds.insert(f.kind);
    last_fault = std::max(last_fault.value_or(f.start), f.start);
  }
  // The events since the last fault before the violation: the mechanism
  // the story tells (a failover, a restart), not everything the run did.
  for (const NoteRecord& n : r.history.notes) {
    if (n.at >= last_fault.value_or(Time{0}) && n.at <= at) sig.events.insert(n.kind);
  }
  return sig;
}

bool keeps_signature(const FailureSignature& kept, const FailureSignature& c) {
  if (c.property != kept.property) return false;
  if (!kept.fault_kinds.empty() && c.fault_kinds.empty()) return false;
  for (FaultKind k : c.fault_kinds) {
    if (!kept.fault_kinds.count(k)) return false;
  }
  return std::includes(c.events.begin(), c.events.end(), kept.events.begin(), kept.events.end());
}

std::string FailureSignature::text() const {
  std::string kinds, names;
  for (FaultKind k : fault_kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(k));
  for (const std::string& e : events) names += (names.empty() ? "" : ", ") + e;
  return fmt::format(
      "{} violated {}, {}", to_string(property),
      kinds.empty() ? std::string("with no fault before it") : "after faults " + kinds,
      names.empty() ? std::string("with no service event in between") : "with the service events " + names);
}

// -- the search ----------------------------------------------------------------

namespace {

constexpr Duration kMs = std::chrono::milliseconds(1);

/// A fault's length, the part step 2 shortens (see shrink.hpp): the fault
/// table's (FaultKindInfo::length); nullopt for a kind without one or a
/// fault that does not set it.
std::optional<Duration> fault_length(const FaultSpec& f) {
  const FaultKindInfo& k = fault_info(f.kind);
  return k.length ? k.length(f) : std::nullopt;
}

/// The faults' origins as the loader gives them ("faults[i]").
void number_faults(Scenario& s) {
  for (std::size_t i = 0; i < s.faults.size(); ++i) s.faults[i].origin = "faults[" + std::to_string(i) + "]";
}

/// `d` rounded down to whole milliseconds.
Duration floor_ms(Duration d) { return d / kMs * kMs; }

class Search {
 public:
  Search(FailureSignature sig, const ShrinkOptions& opt, bool settle_rule)
      : signature_(std::move(sig)), opt_(opt), settle_rule_(settle_rule) {}

  /// Does `c` still violate the property? nullopt: the budget is used up,
  /// or a run failed inside fencesim (error()).
  std::optional<bool> fails(Scenario c) {
    if (error_ || runs_ >= opt_.max_runs) {
      budget_reached_ = budget_reached_ || !error_;
      return std::nullopt;
    }
    number_faults(c);
    if (!valid(c)) {
      ++skipped_;
      return false;
    }
    ++runs_;
    RunOptions ro;
    ro.trace = false;
    std::optional<bool> result;
    try {
      const RunResult r = run_scenario(c, ro);
      const std::optional<FailureSignature> sig =
          r.budget_exceeded ? std::nullopt : failure_signature(r, signature_.property);
      result = sig && keeps_signature(signature_, *sig);
    } catch (const InvalidScenario&) {
      result = false;  // (valid() ran the same checks: not reached)
    } catch (const UnsupportedScenario&) {
      result = false;
    } catch (const program::ProgramError& e) {
      // A program that fails on a candidate would fail the user's own run
      // of it too: stop, naming it, rather than guess.
      error_ = ShrinkError{
          e.kind == program::ProgramError::Kind::kFailure ? ShrinkError::Kind::kInternal : ShrinkError::Kind::kInput,
          std::string("while running a candidate: ") + e.what()};
    } catch (const std::bad_alloc&) {
      error_ = ShrinkError{ShrinkError::Kind::kInternal, "out of memory while running a candidate"};
    } catch (const std::exception& e) {
      error_ = ShrinkError{ShrinkError::Kind::kInternal,
                           std::string("internal error while running a candidate: ") + e.what()};
    }
    if (opt_.on_run) opt_.on_run(runs_);
    return result;
  }

  std::size_t runs() const { return runs_; }
  std::size_t skipped() const { return skipped_; }
  bool budget_reached() const { return budget_reached_; }
  const std::optional<ShrinkError>& error() const { return error_; }

 private:
  /// The loader's rules, every fault and client before the end of the run,
  /// and settle after the last fault (when the materialized scenario had it).
  bool valid(const Scenario& c) const {
    if (c.clients.empty() || validate_scenario(c)) return false;
    for (const FaultSpec& f : c.faults) {
      if (f.at >= c.duration) return false;
    }
    for (const ClientSpec& cl : c.clients) {
      if (cl.start >= c.duration) return false;
    }
    if (settle_rule_) {
      bool any = false;
      const std::optional<Time> end = last_fault_end(c.faults, c.duration, any);
      if (any && (!end || *end + c.settle > c.duration)) return false;
    }
    return true;
  }

  FailureSignature signature_;
  const ShrinkOptions& opt_;
  bool settle_rule_;
  std::size_t runs_ = 0, skipped_ = 0;
  bool budget_reached_ = false;
  std::optional<ShrinkError> error_;
};

/// Binary search in whole milliseconds between `good`, a value that fails,
/// and `bad`, one assumed not to (never asked): the value nearest `bad` that
/// was asked and found failing. With bad < good it finds the smallest
/// failing value, with bad > good the largest.
template <class Fails>
Duration search_failing(Duration good, Duration bad, Fails&& fails) {
  while ((good > bad ? good - bad : bad - good) > kMs) {
    const Duration mid = floor_ms(bad + (good - bad) / 2);
    if (mid == good || mid == bad) break;
    const std::optional<bool> r = fails(mid);
    if (!r) break;
    (*r ? good : bad) = mid;
  }
  return good;
}

/// Keeps the items of `all` at `indices`.
template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<std::size_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size());
  for (std::size_t i : indices) out.push_back(all[i]);
  return out;
}

/// Step 1 (faults) or 3 (clients): ddmin over one list of `cur`.
template <class T>
void ddmin_list(Search& search, Scenario& cur, std::vector<T> Scenario::*list) {
  const std::vector<T> all = cur.*list;
  const std::vector<std::size_t> keep = ddmin(all.size(), [&](const std::vector<std::size_t>& subset) {
    Scenario c = cur;
    c.*list = pick(all, subset);
    return search.fails(std::move(c));
  });
  cur.*list = pick(all, keep);
}

/// Step 3: each fault's length shortened, then its start moved earlier or later.
void shorten_and_move_faults(Search& search, Scenario& cur) {
  for (std::size_t i = 0; i < cur.faults.size(); ++i) {
    if (const std::optional<Duration> len = fault_length(cur.faults[i]); len && *len > kMs) {
      const Duration best = search_failing(*len, Duration::zero(), [&](Duration d) {
        Scenario c = cur;
        fault_info(c.faults[i].kind).set_length(c.faults[i], d);
        return search.fails(std::move(c));
      });
      fault_info(cur.faults[i].kind).set_length(cur.faults[i], best);
    }
    auto fails_at = [&](Duration at) {
      Scenario c = cur;
      c.faults[i].at = at;
      return search.fails(std::move(c));
    };
    // Earlier first (a failure that comes sooner lets the run end sooner),
    // later only if it cannot move earlier.
    const Duration at = cur.faults[i].at;
    cur.faults[i].at = search_failing(at, -kMs, fails_at);
    if (cur.faults[i].at == at) cur.faults[i].at = search_failing(at, cur.duration, fails_at);
  }
}

/// `s` ending at `d`, without the faults that would start at or after it.
Scenario cut_at(const Scenario& s, Duration d) {
  Scenario c = s;
  c.duration = d;
  std::erase_if(c.faults, [&](const FaultSpec& f) { return f.at >= d; });
  return c;
}

/// Steps 1 and 5: the run's duration.
void shorten_run(Search& search, Scenario& cur) {
  const Duration d =
      search_failing(cur.duration, Duration::zero(), [&](Duration d) { return search.fails(cut_at(cur, d)); });
  cur = cut_at(cur, d);
}

/// Steps 1-5 in rounds until one changes nothing (each later round starts
/// from a smaller scenario, where ddmin may drop what it could not before).
void search_rounds(Search& search, Scenario& cur) {
  for (int round = 0; round < 4; ++round) {
    const Scenario before = cur;
    shorten_run(search, cur);
    ddmin_list(search, cur, &Scenario::faults);
    number_faults(cur);
    shorten_and_move_faults(search, cur);
    ddmin_list(search, cur, &Scenario::clients);
    shorten_run(search, cur);
    if (cur == before || search.budget_reached() || search.error()) break;
  }
}

/// The property to keep broken when none is asked for (shrink.hpp).
std::optional<Property> default_property(const RunResult& r) {
  for (const Verdict& v : r.verdicts) {
    if (!v.met && v.status == Status::kViolated) return v.property;
  }
  for (const Verdict& v : r.verdicts) {
    if (v.status == Status::kViolated) return v.property;
  }
  return std::nullopt;
}

/// A checking run (step 0): nullopt, with `error` set, if it cannot run.
std::optional<RunResult> checking_run(const Scenario& s, std::optional<ShrinkError>& error) {
  RunOptions ro;
  ro.trace = false;
  try {
    RunResult r = run_scenario(s, ro);
    if (!r.budget_exceeded) return r;
    error = ShrinkError{ShrinkError::Kind::kInput, fmt::format("the run with seed {} was stopped at its event budget "
                                                               "({} events); shorten `duration` first",
                                                               s.seed, Limits::kEventBudget)};
  } catch (const InvalidScenario& e) {
    error = ShrinkError{ShrinkError::Kind::kInput, e.problem.to_string()};
  } catch (const UnsupportedScenario& e) {
    error = ShrinkError{ShrinkError::Kind::kInput, std::string("cannot run: ") + e.what()};
  } catch (const program::ProgramError& e) {
    error = ShrinkError{
        e.kind == program::ProgramError::Kind::kFailure ? ShrinkError::Kind::kInternal : ShrinkError::Kind::kInput,
        e.what()};
  } catch (const std::bad_alloc&) {
    error = ShrinkError{ShrinkError::Kind::kInternal, "out of memory"};
  } catch (const std::exception& e) {
    error = ShrinkError{ShrinkError::Kind::kInternal, std::string("internal error while running: ") + e.what()};
  }
  return std::nullopt;
}

}  // namespace

ShrinkResult shrink_scenario(const Scenario& in, const ShrinkOptions& opt) {
  ShrinkResult res;
  res.seed = opt.seed;
  Scenario original = in;
  original.seed = opt.seed;
  res.scripted_before = original.faults.size();

  // The run as the file makes it, to choose the property.
  const std::optional<RunResult> first = checking_run(original, res.error);
  if (!first) return res;
  res.drawn_before = first->drawn.size();
  res.fingerprint_original = first->fingerprint;
  if (opt.property) {
    if (!property_applies(original, *opt.property)) {
      res.error = ShrinkError{
          ShrinkError::Kind::kInput,
          fmt::format("{} does not apply to this design (its verdict is not_applicable)", to_string(*opt.property))};
      return res;
    }
    if (verdict(*first, *opt.property).status != Status::kViolated) {
      res.error = ShrinkError{
          ShrinkError::Kind::kNothingToShrink,
          fmt::format("seed {} does not break {} (it holds); nothing to shrink", opt.seed, to_string(*opt.property))};
      return res;
    }
    res.property = *opt.property;
  } else {
    const std::optional<Property> p = default_property(*first);
    if (!p) {
      res.error = ShrinkError{ShrinkError::Kind::kNothingToShrink,
                              fmt::format("seed {} breaks no property; nothing to shrink", opt.seed)};
      return res;
    }
    res.property = *p;
  }

  // Step 0: materialized, with the expectation the shrunk file will carry.
  WriteOptions wo;
  wo.materialize_nemesis = true;
  res.materialized = written_scenario(original, wo);
  res.materialized.expect = {{res.property, Expectation::kViolated}};
  const std::optional<RunResult> mat = checking_run(res.materialized, res.error);
  if (!mat) return res;
  res.fingerprint_materialized = mat->fingerprint;
  res.same_run = mat->fingerprint == first->fingerprint;
  if (verdict(*mat, res.property).status != Status::kViolated) {
    res.error = ShrinkError{
        ShrinkError::Kind::kInternal,
        fmt::format("with its {} faults written out as faults[] entries, seed {} no longer breaks {} (fingerprint "
                    "{:016x}, not {:016x}): materializing the nemesis changed the run; this is a bug in fencesim",
                    res.materialized.faults.size(), opt.seed, to_string(res.property), mat->fingerprint,
                    first->fingerprint)};
    return res;
  }

  bool any = false;
  const std::optional<Time> end = last_fault_end(res.materialized.faults, res.materialized.duration, any);
  const bool settle_rule = !any || (end && *end + res.materialized.settle <= res.materialized.duration);
  ShrinkOptions bounded = opt;
  bounded.max_runs = std::max<std::size_t>(opt.max_runs, 1);
  res.signature = *failure_signature(*mat, res.property);
  Search search(res.signature, bounded, settle_rule);
  Scenario cur = res.materialized;
  search_rounds(search, cur);
  res.runs = search.runs();
  res.skipped = search.skipped();
  res.budget_reached = search.budget_reached();
  if (search.error()) {
    res.error = search.error();
    return res;
  }
  // Start order, as run_scenario runs them (a stable sort: the same order).
  std::stable_sort(cur.faults.begin(), cur.faults.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
  number_faults(cur);
  res.shrunk = std::move(cur);
  return res;
}

// -- the files -----------------------------------------------------------------

namespace {

/// "<scenario>-seed<N>-shrunk", the scenario name cut to fit its limit.
std::string shrunk_name(const Scenario& s, std::uint64_t seed) {
  const std::string suffix = fmt::format("-seed{}-shrunk", seed);
  return s.name.substr(0, NameLimits::kScenario - suffix.size()) + suffix;
}

std::string count_text(std::size_t n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

}  // namespace

ShrinkOutput write_shrink_output(const std::string& file, const Scenario& s, const ShrinkResult& r,
                                 const std::string& out) {
  ShrinkOutput o;
  auto fail = [&](ShrinkError::Kind kind, std::string message) {
    o.error = ShrinkError{kind, std::move(message)};
    return o;
  };
  o.name = shrunk_name(s, r.seed);
  o.file = out + "/" + o.name + ".json";
  o.report_dir = out + "/" + o.name;
  const std::string source = fs::path(file).filename().string();

  Scenario w = r.shrunk;
  w.name = o.name;
  const std::size_t before = r.scripted_before + r.drawn_before;
  w.description = fmt::format(
      "Shrunk by `fencesim shrink` from {} (scenario {}) with seed {}, keeping the failure's signature ({}): {} ({} "
      "scripted, {} drawn by the nemesis) -> {}, {} -> {}, duration {} -> {}; the search took {} runs{}.",
      source, s.name, r.seed, r.signature.text(), count_text(before, "fault"), r.scripted_before, r.drawn_before,
      w.faults.size(), count_text(s.clients.size(), "client"), w.clients.size(), sim::format_duration(s.duration),
      sim::format_duration(w.duration), r.runs, r.budget_reached ? " (the run budget was reached)" : "");
  // The notes of what is left, as the loader will make them.
  w.notes.clear();
  resolve_scenario(w);
  const WriteResult written = write_scenario_checked(w);
  if (!written.ok()) return fail(ShrinkError::Kind::kInternal, "the shrunk scenario: " + *written.error);
  o.text = written.text;
  LoadResult back = load_scenario_text(o.text, o.file);
  if (!back.ok()) return fail(ShrinkError::Kind::kInternal, back.error->to_string());
  o.scenario = std::move(*back.scenario);
  try {
    o.run = run_scenario(o.scenario);
  } catch (const std::exception& e) {
    return fail(ShrinkError::Kind::kInternal, std::string("running the shrunk scenario: ") + e.what());
  }
  const std::optional<FailureSignature> sig =
      o.run.budget_exceeded ? std::nullopt : failure_signature(o.run, r.property);
  if (!sig || !keeps_signature(r.signature, *sig)) {
    return fail(ShrinkError::Kind::kInternal, fmt::format("the shrunk scenario, loaded back, does not keep the "
                                                          "failure's signature ({})",
                                                          r.signature.text()));
  }
  std::string error;
  if (!write_reports(o.report_dir, o.scenario, o.run, ReportMeta{o.name + ".json", false}, error) ||
      !write_files(fs::path(o.file).parent_path().string(),
                   {{fs::path(o.file).filename().string(), [&](std::ostream& f) { f << o.text; }}}, error)) {
    return fail(ShrinkError::Kind::kInput, error);
  }
  return o;
}

}  // namespace fencesim
