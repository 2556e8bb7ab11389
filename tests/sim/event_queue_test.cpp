// The event queue's order: (time, class, sequence), total and FIFO.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

namespace {

using namespace std::chrono_literals;
using sim::EventClass;
using sim::EventQueue;
using sim::EventType;

std::vector<std::uint32_t> drain(EventQueue& q) {
  std::vector<std::uint32_t> out;
  while (!q.empty()) out.push_back(q.pop().a);
  return out;
}

TEST(EventQueue, EventsAtTheSameTimeAndClassComeOutInTheOrderTheyWerePushed) {
  EventQueue q;
  std::vector<std::uint32_t> pushed;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    q.push(5s, EventClass::kNormal, EventType::kUser, i, 0);
    pushed.push_back(i);
  }
  EXPECT_EQ(drain(q), pushed);
}

TEST(EventQueue, EarlierTimeComesFirstWhateverThePushOrder) {
  EventQueue q;
  q.push(3s, EventClass::kNormal, EventType::kUser, 3, 0);
  q.push(1s, EventClass::kNormal, EventType::kUser, 1, 0);
  q.push(2s, EventClass::kFault, EventType::kUser, 2, 0);
  q.push(0s, EventClass::kNormal, EventType::kUser, 0, 0);
  EXPECT_EQ(drain(q), (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(EventQueue, AtOneInstantFaultsComeBeforeReplaysWhichComeBeforeNormalEvents) {
  EventQueue q;
  q.push(1s, EventClass::kNormal, EventType::kUser, 30, 0);
  q.push(1s, EventClass::kReplay, EventType::kUser, 20, 0);
  q.push(1s, EventClass::kNormal, EventType::kUser, 31, 0);
  q.push(1s, EventClass::kFault, EventType::kUser, 10, 0);
  q.push(1s, EventClass::kReplay, EventType::kUser, 21, 0);
  q.push(1s, EventClass::kFault, EventType::kUser, 11, 0);
  q.push(999ms, EventClass::kNormal, EventType::kUser, 0, 0);
  EXPECT_EQ(drain(q), (std::vector<std::uint32_t>{0, 10, 11, 20, 21, 30, 31}));
}

TEST(EventQueue, TheOrderIsTotalSoNoTwoEventsCompareEqual) {
  EventQueue q;
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < 100; ++i) keys.push_back(q.push(1s, EventClass::kNormal, EventType::kUser, 0, 0));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
  const sim::Event a = q.pop();
  const sim::Event b = q.pop();
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
}

TEST(EventQueue, InterleavedPushesAndPopsMatchASortedReference) {
  // The reference sorts on the documented key (time, class, push number).
  struct Ref {
    sim::Time time;
    int cls;
    std::uint32_t seq;
    bool operator<(const Ref& o) const { return std::tie(time, cls, seq) < std::tie(o.time, o.cls, o.seq); }
  };
  EventQueue q;
  std::vector<Ref> ref;
  sim::Rng r(17);
  std::uint32_t seq = 0;
  sim::Time now{0};
  for (int step = 0; step < 50000; ++step) {
    if (ref.empty() || r.chance(3, 5)) {
      // Times never go below the last popped time, as in a simulation, and
      // often coincide so that the class and sequence decide.
      const sim::Time t = now + sim::Duration{r.uniform(0, 20)};
      const auto cls = static_cast<int>(r.uniform(0, 2));
      q.push(t, static_cast<EventClass>(cls), EventType::kUser, seq, 0);
      ref.push_back(Ref{t, cls, seq});
      std::push_heap(ref.begin(), ref.end(), [](const Ref& x, const Ref& y) { return y < x; });
      ++seq;
    } else {
      std::pop_heap(ref.begin(), ref.end(), [](const Ref& x, const Ref& y) { return y < x; });
      const Ref want = ref.back();
      ref.pop_back();
      ASSERT_EQ(q.top().a, want.seq);
      const sim::Event got = q.pop();
      ASSERT_EQ(got.a, want.seq);
      ASSERT_EQ(got.time, want.time);
      now = got.time;
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(EventQueue, EventsDueSoonAndEventsDueLaterInterleaveInOrder) {
  // The queue keeps events due soon in a short sorted vector and the rest in
  // a heap; mix both kinds (and sizes from a few to a few hundred) and
  // compare with a reference.
  struct Ref {
    sim::Time time;
    int cls;
    std::uint32_t seq;
    bool operator<(const Ref& o) const { return std::tie(time, cls, seq) < std::tie(o.time, o.cls, o.seq); }
  };
  auto later = [](const Ref& x, const Ref& y) { return y < x; };
  EventQueue q;
  std::vector<Ref> ref;
  sim::Rng r(29);
  std::uint32_t seq = 0;
  sim::Time now{0};
  std::size_t max_far = 0, max_near = 0;
  bool growing = true;
  for (int step = 0; step < 60000; ++step) {
    if (ref.size() >= 300) growing = false;
    if (ref.size() <= 5) growing = true;
    const bool push = ref.empty() || (growing ? r.chance(4, 5) : r.chance(1, 5));
    if (push) {
      // Half due within a few ns (often at the same instant), half later.
      const sim::Duration ahead{r.chance(1, 2) ? r.uniform(0, 3) : r.uniform(0, 500)};
      const sim::Time t = now + ahead;
      const auto cls = static_cast<int>(r.uniform(0, 2));
      q.push(t, static_cast<EventClass>(cls), EventType::kUser, seq, seq * 3);
      ref.push_back(Ref{t, cls, seq});
      std::push_heap(ref.begin(), ref.end(), later);
      ++seq;
    } else {
      std::pop_heap(ref.begin(), ref.end(), later);
      const Ref want = ref.back();
      ref.pop_back();
      ASSERT_EQ(q.top().a, want.seq);
      const sim::Event got = q.pop();
      ASSERT_EQ(got.a, want.seq);
      ASSERT_EQ(got.b, std::uint64_t{want.seq} * 3);
      ASSERT_EQ(got.time, want.time);
      now = got.time;
    }
    ASSERT_EQ(q.size(), ref.size());
    max_far = std::max(max_far, q.far_size());
    max_near = std::max(max_near, q.size() - q.far_size());
  }
  // Both parts held many events at some point: the test mixed them.
  EXPECT_GT(max_far, 100u);
  EXPECT_GT(max_near, 20u);
}

TEST(EventQueue, PopDueTakesEventsInOrderUpToTheEndAndLeavesTheRest) {
  // Enough events that both parts hold some: the earliest first (due soon,
  // near part), then later ones in random order (the heap).
  EventQueue q;
  sim::Rng r(5);
  std::uint32_t n = 0;
  for (int i = 0; i < 10; ++i) q.push(sim::Time{i}, EventClass::kNormal, EventType::kUser, n++, 0);
  for (int i = 0; i < 200; ++i) {
    q.push(sim::Time{r.uniform(100, 1000)}, EventClass::kNormal, EventType::kUser, n++, 0);
  }
  ASSERT_GT(q.far_size(), 0u);
  ASSERT_GT(q.size() - q.far_size(), 0u);
  sim::Event e{};
  EXPECT_TRUE(q.due(sim::Time{0}));
  EXPECT_FALSE(q.due(sim::Time{-1}));
  EXPECT_FALSE(q.pop_due(sim::Time{-1}, e)) << "nothing is due before time 0";
  EXPECT_EQ(q.size(), 210u);
  sim::Time last{-1};
  std::size_t popped = 0;
  while (q.pop_due(sim::Time{500}, e)) {
    EXPECT_LE(last, e.time);
    EXPECT_LE(e.time, sim::Time{500});
    last = e.time;
    ++popped;
  }
  EXPECT_GE(popped, 10u);
  EXPECT_EQ(q.size(), 210u - popped);
  EXPECT_GT(q.top().time, sim::Time{500}) << "what is left is due after the end";
}

TEST(EventQueue, AnEventKeepsItsPayloadFields) {
  EventQueue q;
  q.push(7ns, EventClass::kReplay, EventType::kDeliver, 123, 0xdeadbeefcafeULL);
  const sim::Event e = q.pop();
  EXPECT_EQ(e.time, 7ns);
  EXPECT_EQ(e.type, EventType::kDeliver);
  EXPECT_EQ(e.a, 123u);
  EXPECT_EQ(e.b, 0xdeadbeefcafeULL);
  EXPECT_EQ(e.key >> 62, static_cast<std::uint64_t>(EventClass::kReplay));
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, ClearEmptiesTheQueueAndRestartsTheSequence) {
  EventQueue q;
  q.push(1s, EventClass::kNormal, EventType::kUser, 1, 0);
  q.push(1s, EventClass::kNormal, EventType::kUser, 2, 0);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.push(1s, EventClass::kNormal, EventType::kUser, 3, 0) & ((1ULL << 62) - 1), 0u);
}

}  // namespace
