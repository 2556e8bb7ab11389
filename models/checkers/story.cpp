#include "models/checkers/story.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fencesim {

const char* to_string(Status s) {
  switch (s) {
    case Status::kHolds: return "holds";
    case Status::kViolated: return "violated";
    case Status::kNotApplicable: return "not_applicable";
  }
  return "?";
}

std::string format_time(Time t) {
  // Milliseconds with three decimals (microsecond resolution): "12.200s".
  const std::int64_t us = t.count() / 1000;
  const std::int64_t neg = us < 0 ? 1 : 0;
  const std::int64_t a = neg ? -us : us;
  return fmt::format("{}{}.{:06}s", neg ? "-" : "", a / 1'000'000, a % 1'000'000);
}

namespace checkers {

std::string token_text(const std::optional<std::int64_t>& t) { return t ? fmt::format("token {}", *t) : "no token"; }

std::string lock_text(const std::string& lock) { return lock.empty() ? std::string("the lock") : "lock " + lock; }

std::string belief_line(const BeliefRecord& b, const CheckContext& ctx) {
  const std::string end = b.end ? " (" + b.end_reason + ")" : " (end of run)";
  if (!b.message_id.empty()) {
    return fmt::format("{} believed it held {} (receipt {}, receive count {}) from {} until {}{}", b.client,
                       b.message_id, b.value, b.token.value_or(0), format_time(b.start),
                       format_time(belief_end(b, ctx)), end);
  }
  return fmt::format("{} believed it held {} ({}, value {}) from {} until {}{}", b.client, lock_text(b.lock),
                     token_text(b.token), b.value, format_time(b.start), format_time(belief_end(b, ctx)), end);
}

const GrantRecord* grant_of(const History& h, const std::string& value) {
  for (const GrantRecord& g : h.grants) {
    if (g.value == value) return &g;
  }
  return nullptr;
}

std::string fault_line(const FaultRecord& f) {
  return fmt::format("{}: fault {}{}{}", format_time(f.start), to_string(f.kind),
                     f.target.empty() ? "" : " on " + f.target, f.detail.empty() ? "" : " (" + f.detail + ")");
}

void add_faults_between(const History& h, Time from, Time to, const std::string& node,
                        std::vector<std::string>& story) {
  std::vector<std::pair<Time, std::string>> steps;
  for (const FaultRecord& f : h.faults) {
    if (f.skipped) continue;
    const Time end = f.end ? *f.end : f.start;
    if (f.start > to || end < from) continue;
    if (!node.empty() && f.target != node) continue;
    steps.emplace_back(f.start, fault_line(f));
  }
  // A program client's own notes (docs/PROTOCOL.md "note": what its code
  // did, e.g. "redis.lock.Lock.acquire() returned True") in the same span,
  // in time order with the faults. Built-in clients write none.
  bool notes = false;
  for (const NoteRecord& n : h.notes) {
    if (n.kind != "program" || n.at < from || n.at > to || (!node.empty() && n.node != node)) continue;
    steps.emplace_back(n.at, fmt::format("{}: {}: {}", format_time(n.at), n.node, n.text));
    notes = true;
  }
  if (notes) {
    std::stable_sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  }
  for (auto& [at, line] : steps) story.push_back(std::move(line));
}

std::vector<std::string> story_in_time_order(std::vector<std::pair<Time, std::string>> steps) {
  std::stable_sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> story;
  for (auto& [at, line] : steps) story.push_back(std::move(line));
  number(story);
  return story;
}

void number(std::vector<std::string>& story) {
  for (std::size_t i = 0; i < story.size(); ++i) story[i] = fmt::format("{}. {}", i + 1, story[i]);
}

}  // namespace checkers
}  // namespace fencesim
