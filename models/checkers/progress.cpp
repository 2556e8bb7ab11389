// models/checkers/progress.cpp — progress: after the last fault, iterations succeed within the settle time.
// Definition: docs/FORMAT.md "Progress and settle".
#include <fmt/format.h>

#include <algorithm>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

Verdict check_progress(const History& h, const CheckContext& ctx, sim::Duration settle) {
  Verdict v;
  v.property = Property::kProgress;
  if (ctx.any_fault && !ctx.last_fault_end) {
    v.summary = "a fault never ends, so no iteration is checked (holds vacuously)";
    return v;
  }
  const Time after = ctx.last_fault_end.value_or(Time{-1});
  const Time last_start = ctx.run_end - settle;
  // With no fault at all every iteration that leaves the settle time counts.
  const std::string since =
      ctx.any_fault ? fmt::format("after the last fault ended at {}", format_time(after)) : "no fault ran";
  for (const IterationRecord& it : h.iterations) {
    if (it.start <= after || it.start > last_start) continue;
    ++v.checked;
    const bool ok = it.success && it.done && *it.done - it.start <= settle;
    if (ok) continue;
    v.status = Status::kViolated;
    v.at = it.start;
    const std::string late =
        it.success && it.done ? fmt::format("succeeded only after {}, longer than the settle time {}",
                                            sim::format_duration(*it.done - it.start), sim::format_duration(settle))
                              : fmt::format("did not succeed within the settle time {}", sim::format_duration(settle));
    v.summary = fmt::format("{}'s iteration {} started at {} ({}) and {}: {}", it.client, it.index,
                            format_time(it.start), since, late, it.outcome);
    std::vector<std::string> story;
    if (ctx.any_fault) story.push_back(fmt::format("{}: the last fault ended", format_time(after)));
    story.push_back(fmt::format("{}: {} started iteration {}", format_time(it.start), it.client, it.index));
    if (it.acquired) {
      // More than one lock: the lock of the client's beliefs (a client takes one lock).
      std::string lock;
      for (const BeliefRecord& b : h.beliefs) {
        if (b.client == it.client) {
          lock = b.lock;
          break;
        }
      }
      story.push_back(fmt::format("{}: {} acquired {}", format_time(*it.acquired), it.client, lock_text(lock)));
    }
    for (const ResourceOpRecord& op : h.resource_ops) {
      if (op.client == it.client && op.iteration == it.index && op.at >= it.start) {
        story.push_back(fmt::format("{}: {} {} {}{} ({}){}", format_time(op.at), op.copy,
                                    op.accepted ? "accepted" : "rejected", op.write ? "the write" : "the read",
                                    op.lock.empty() ? "" : (op.write ? " to " : " of ") + op.lock, token_text(op.token),
                                    op.accepted ? "" : ": " + op.reason));
      }
    }
    story.push_back(fmt::format("outcome: {}", it.outcome));
    number(story);
    v.story = std::move(story);
    return v;
  }
  if (v.checked == 0) {
    v.summary = ctx.any_fault ? "no iteration started after the last fault with the settle time left (holds vacuously)"
                              : "no iteration started with the settle time left (holds vacuously)";
  } else {
    v.summary =
        fmt::format("{} {} succeeded within {}",
                    v.checked == 1 ? std::string("the 1 iteration") : fmt::format("all {} iterations", v.checked),
                    ctx.any_fault ? "after the last fault" : "(no fault ran)", sim::format_duration(settle));
  }
  return v;
}

}  // namespace fencesim
