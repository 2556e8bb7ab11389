// sim/network.cpp — sending messages (latency, loss, FIFO channels, slow)
// and partitions. Delivery is a scheduler event: Simulation::deliver in
// simulation.cpp.
#include <algorithm>

#include "sim/simulation.hpp"

namespace sim {

std::uint64_t Simulation::send(NodeId from, NodeId to, PayloadPtr body, std::uint64_t reply_to) {
  const std::uint64_t id = next_msg_++;
  Node& src = *nodes_[from];
  if (!src.up_) return id;
  if (blocked(from, to)) return id;
  if (net_.loss_ppb != 0 && net_rng_.chance(net_.loss_ppb, 1'000'000'000ULL)) return id;
  Duration latency =
      net_.latency_min == net_.latency_max ? net_.latency_min : net_rng_.uniform(net_.latency_min, net_.latency_max);
  // The network's own jitter never reorders a channel (FIFO like a TCP
  // connection); `slow` then adds its delay to this message alone, as
  // docs/FORMAT.md says ("adds its delay to messages sent while it is
  // active"), so a message sent after a slowdown ends is not held behind
  // the slowed ones.
  Time base = now_ + latency;
  Time& last = channel_last_[from * channel_stride_ + to];
  if (base < last) base = last;
  last = base;
  const Time at = base + src.slow_ + nodes_[to]->slow_;
  std::uint32_t slot;
  if (free_inflight_ != UINT32_MAX) {
    slot = free_inflight_;
    free_inflight_ = inflight_[slot].next_free;
  } else {
    slot = static_cast<std::uint32_t>(inflight_.size());
    inflight_.emplace_back();
  }
  InFlight& f = inflight_[slot];
  f.msg.from = from;
  f.msg.to = to;
  f.msg.id = id;
  f.msg.reply_to = reply_to;
  f.msg.sent_at = now_;
  f.msg.body = std::move(body);  // the slot's body is empty: released at delivery
  f.used = true;
  f.arrived = false;
  f.incarnation = nodes_[to]->incarnation_;
  queue_.push(at, EventClass::kNormal, EventType::kDeliver, slot, id);
  return id;
}

namespace {
bool contains(const std::vector<NodeId>& v, NodeId n) { return std::find(v.begin(), v.end(), n) != v.end(); }
int group_of(const Partition& p, NodeId n) {
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    if (contains(p.groups[g], n)) return static_cast<int>(g);
  }
  return -1;
}
}  // namespace

bool partition_blocks(const Partition& p, NodeId from, NodeId to) {
  if (!p.isolate.empty()) {
    const bool fi = contains(p.isolate, from);
    const bool ti = contains(p.isolate, to);
    return p.one_way ? (fi && !ti) : (fi != ti);
  }
  const int gf = group_of(p, from);
  const int gt = group_of(p, to);
  if (gf < 0 || gt < 0 || gf == gt) return false;
  return !p.one_way || gf == 0;
}

namespace {
// Calls fn(from, to) once for every ordered pair of distinct nodes below
// `count` that `p` blocks: exactly the pairs where partition_blocks(p, from,
// to) is true, found by labelling each node once (a node listed twice counts
// once, as `contains` / `group_of` see it) instead of testing all pairs.
template <class Fn>
void for_each_blocked_pair(const Partition& p, std::size_t count, Fn fn) {
  constexpr int kUnlisted = -1;
  std::vector<int> label(count, kUnlisted);
  std::vector<NodeId> listed;  // labelled nodes, each once, in first-listed order
  const auto mark = [&](NodeId n, int l) {
    if (n >= count || label[n] != kUnlisted) return;  // group_of: the first group wins
    label[n] = l;
    listed.push_back(n);
  };
  if (!p.isolate.empty()) {
    for (NodeId n : p.isolate) mark(n, 0);
    for (NodeId f : listed) {
      for (NodeId t = 0; t < count; ++t) {
        if (label[t] != kUnlisted) continue;
        fn(f, t);                  // from an isolated node: blocked either way
        if (!p.one_way) fn(t, f);  // towards it: only without one_way
      }
    }
    return;
  }
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    for (NodeId n : p.groups[g]) mark(n, static_cast<int>(g));
  }
  for (NodeId f : listed) {
    if (p.one_way && label[f] != 0) continue;  // one_way: only from the first group
    for (NodeId t : listed) {
      if (label[t] != label[f]) fn(f, t);
    }
  }
}
}  // namespace

void Simulation::count_partition(const Partition& p, int delta) {
  for_each_blocked_pair(p, nodes_.size(), [&](NodeId from, NodeId to) {
    std::uint32_t& c = cut_count_[from * channel_stride_ + to];
    c = static_cast<std::uint32_t>(static_cast<std::int64_t>(c) + delta);
  });
}

std::uint64_t Simulation::add_partition(Partition p) {
  const std::uint64_t id = next_partition_++;
  count_partition(p, +1);
  partitions_.emplace(id, std::move(p));
  return id;
}

void Simulation::remove_partition(std::uint64_t id) {
  const auto it = partitions_.find(id);
  if (it == partitions_.end()) return;
  count_partition(it->second, -1);
  partitions_.erase(it);
}

void Simulation::heal() {
  partitions_.clear();
  std::fill(cut_count_.begin(), cut_count_.end(), 0U);
}

}  // namespace sim
