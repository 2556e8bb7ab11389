// The workloads of models/workloads/ against a real resource copy, in small
// hand-built runs: a client node (or two) and the copy, a process that calls
// Workload::iterate with a chosen token, and a look at the outcomes, the
// copy and the History. Latency is the engine's default (a fixed 1 ms), so
// a read sent at t is answered at t + 2 ms.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "models/resource/resource.hpp"
#include "models/workloads/workload.hpp"
#include "sim/simulation.hpp"

namespace fencesim::workloads {
namespace {

using namespace std::chrono_literals;

ResourceSpec resource_of(ResourceKind kind, bool fence_reads = false, std::int64_t initial = 0) {
  ResourceSpec r;
  r.kind = kind;
  r.fence_reads = fence_reads;
  r.initial = initial;
  return r;
}

WorkloadSpec spec_of(WorkloadKind kind, Duration work = 100ms, std::int64_t block = 100) {
  WorkloadSpec w;
  w.kind = kind;
  w.work = work;
  w.block = block;
  return w;
}

/// Client nodes "A", "B", … and the copy "resource" (plus replicas).
class Harness {
 public:
  explicit Harness(ResourceSpec r, int clients = 1) : resource_(r) {
    for (int i = 0; i < clients; ++i) clients_.push_back(sim_.add_node(std::string(1, char('A' + i))).id());
    copies_.push_back(sim_.add_node("resource").id());
    for (int i = 0; i < r.replicas; ++i) copies_.push_back(sim_.add_node("resource-replica-" + std::to_string(i)).id());
    svc_ = std::make_unique<resource::ResourceService>(sim_, history_, resource_, copies_);
  }

  std::unique_ptr<Workload> make(int client, WorkloadSpec w, std::size_t copy = 0) {
    return make_workload(WorkloadSetup{sim_.node(clients_[client]).name(), w, resource_, copies_[copy], 1s});
  }

  /// Starts `iterations` iterations of `w` on client `client` at `at`, one
  /// after the other, each with `token`; their results go to `out`.
  void start(int client, Workload& w, std::vector<IterationResult>& out, std::optional<std::int64_t> token,
             Time at = Time{0}, int iterations = 1) {
    sim_.at(at, [this, client, &w, &out, token, iterations] {
      sim_.node(clients_[client]).spawn("w", [&w, &out, token, iterations](sim::Process& p) {
        for (int i = 0; i < iterations; ++i)
          out.push_back(w.iterate(Iteration{p, i, "lease", token, "", nullptr, std::nullopt}));
      });
    });
  }

  std::vector<const ResourceOpRecord*> ops(bool write) const {
    std::vector<const ResourceOpRecord*> out;
    for (const ResourceOpRecord& op : history_.resource_ops) {
      if (op.write == write) out.push_back(&op);
    }
    return out;
  }

  sim::Simulation sim_{1};
  History history_;
  ResourceSpec resource_;
  std::vector<sim::NodeId> clients_;
  std::vector<sim::NodeId> copies_;
  std::unique_ptr<resource::ResourceService> svc_;
};

// ---------------------------------------------------------------- factory --

TEST(WorkloadFactory, EachKindWritesWhatItsFormatEntrySays) {
  // The same read (1000) gives three different writes: + block, + 1, + 1 tagged.
  const std::vector<std::pair<WorkloadKind, std::pair<std::int64_t, std::string>>> want = {
      {WorkloadKind::kSequenceAllocator, {1025, ""}},
      {WorkloadKind::kCounter, {1001, ""}},
      {WorkloadKind::kWriter, {1001, "A"}},
  };
  for (const auto& [kind, expected] : want) {
    Harness h(resource_of(ResourceKind::kUnfenced, false, 1000));
    auto w = h.make(0, spec_of(kind, 100ms, 25));
    ASSERT_NE(w, nullptr);
    std::vector<IterationResult> out;
    h.start(0, *w, out, std::nullopt);
    h.sim_.run_until(Time{5s});
    ASSERT_EQ(out.size(), 1u) << to_string(kind);
    EXPECT_TRUE(out[0].success) << to_string(kind);
    EXPECT_EQ(h.svc_->copy(0).value(), expected.first) << to_string(kind);
    EXPECT_EQ(h.svc_->copy(0).tag(), expected.second) << to_string(kind);
  }
}

TEST(WorkloadFactory, AKindOutsideTheEnumerationIsAnError) {
  Harness h(resource_of(ResourceKind::kUnfenced));
  WorkloadSpec w = spec_of(WorkloadKind::kCounter);
  w.kind = static_cast<WorkloadKind>(99);
  EXPECT_THROW(h.make(0, w), std::invalid_argument);
}

// ------------------------------------------------------ shared read/write --

TEST(RegisterWorkload, ReadsWorksThenWritesWithTheTokenAndRecordsBoth) {
  Harness h(resource_of(ResourceKind::kFenced));
  auto w = h.make(0, spec_of(WorkloadKind::kCounter, 300ms));
  std::vector<IterationResult> out;
  h.start(0, *w, out, 7);
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].success);
  EXPECT_EQ(out[0].outcome, "ok: wrote 1");
  ASSERT_EQ(h.history_.resource_ops.size(), 2u);
  const ResourceOpRecord& read = h.history_.resource_ops[0];
  const ResourceOpRecord& write = h.history_.resource_ops[1];
  EXPECT_EQ(read.kind, ResourceOpKind::kRead);
  EXPECT_FALSE(read.token.has_value()) << "without fence_reads a read carries no token";
  EXPECT_EQ(read.at, Time{1ms});
  EXPECT_EQ(write.kind, ResourceOpKind::kWrite);
  EXPECT_TRUE(write.write);
  EXPECT_EQ(write.token, 7);
  EXPECT_EQ(write.read_value, 0);
  EXPECT_EQ(write.value, 1);
  EXPECT_EQ(write.lease_value, "lease");
  // Read answered at 2 ms, 300 ms of work, the write arrives 1 ms later.
  EXPECT_EQ(write.at, Time{303ms});
  EXPECT_EQ(h.svc_->copy(0).last_written(), 7);
}

TEST(RegisterWorkload, WithFenceReadsTheReadCarriesTheTokenAndAStaleOneIsRejected) {
  Harness h(resource_of(ResourceKind::kFenced, /*fence_reads=*/true));
  auto a = h.make(0, spec_of(WorkloadKind::kCounter));
  std::vector<IterationResult> first, second;
  h.start(0, *a, first, 2);
  h.start(0, *a, second, 1, Time{1s});
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_TRUE(first.at(0).success);
  EXPECT_FALSE(second[0].success);
  EXPECT_EQ(second[0].outcome, "read rejected: token 1 < last_seen 2");
  EXPECT_EQ(h.ops(false).at(0)->token, 2);
  EXPECT_EQ(h.ops(true).size(), 1u) << "a rejected read ends the iteration before any write";
}

TEST(RegisterWorkload, ATokenlessWriteToAFencedCopyIsRejected) {
  Harness h(resource_of(ResourceKind::kFenced));
  auto w = h.make(0, spec_of(WorkloadKind::kSequenceAllocator));
  std::vector<IterationResult> out;
  h.start(0, *w, out, std::nullopt);
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].success);
  EXPECT_EQ(out[0].outcome, "write rejected: write without a token");
}

TEST(RegisterWorkload, ADownCopyTimesTheReadOutAndACrashDuringWorkTimesTheWriteOut) {
  Harness h(resource_of(ResourceKind::kUnfenced));
  auto w = h.make(0, spec_of(WorkloadKind::kCounter, 500ms));
  std::vector<IterationResult> out;
  h.start(0, *w, out, std::nullopt, Time{0}, 2);
  // Iteration 0 reads at 1 ms; the copy is down from 100 ms (its write at
  // 503 ms goes unanswered until 1.502 s) until 1.6 s; iteration 1 reads at
  // 1.502 s and waits until 2.502 s.
  h.sim_.at(Time{100ms}, [&] { h.sim_.crash(h.copies_[0]); });
  h.sim_.at(Time{2600ms}, [&] { h.sim_.restart(h.copies_[0]); });
  h.sim_.run_until(Time{10s});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].outcome, "write timed out");
  EXPECT_EQ(out[1].outcome, "read timed out");
  EXPECT_FALSE(out[0].success || out[1].success);
  EXPECT_EQ(h.svc_->copy(0).value(), 0);
}

TEST(RegisterWorkload, AgainstACasResourceTheWriteCarriesTheVersionReadAndLosesARace) {
  // The lock-free CAS loop without retries: A reads version 0 and works
  // 1 s; B reads 0 and writes at once (version 1); A's write of version 0
  // is refused and, with retries 0, the iteration fails.
  Harness h(resource_of(ResourceKind::kCas), 2);
  WorkloadSpec no_retries = spec_of(WorkloadKind::kCounter, 1s);
  no_retries.retries = 0;
  auto a = h.make(0, no_retries);
  auto b = h.make(1, spec_of(WorkloadKind::kCounter, 10ms));
  std::vector<IterationResult> out_a, out_b;
  h.start(0, *a, out_a, std::nullopt);
  h.start(1, *b, out_b, std::nullopt, Time{100ms});
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(out_a.size(), 1u);
  ASSERT_EQ(out_b.size(), 1u);
  EXPECT_TRUE(out_b[0].success);
  EXPECT_FALSE(out_a[0].success);
  EXPECT_EQ(out_a[0].outcome, "write rejected: version 0 != 1");
  EXPECT_EQ(h.svc_->copy(0).value(), 1);
  EXPECT_EQ(h.svc_->copy(0).version(), 1);
}

TEST(RegisterWorkload, AgainstACasResourceALostRaceIsReReadAndRetried) {
  // The same race with the default 10 retries: A waits retry_interval,
  // reads version 1 (value 1), works again and writes 2 over version 1.
  Harness h(resource_of(ResourceKind::kCas), 2);
  auto a = h.make(0, spec_of(WorkloadKind::kCounter, 1s));
  auto b = h.make(1, spec_of(WorkloadKind::kCounter, 10ms));
  std::vector<IterationResult> out_a, out_b;
  h.start(0, *a, out_a, std::nullopt);
  h.start(1, *b, out_b, std::nullopt, Time{100ms});
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(out_a.size(), 1u);
  EXPECT_TRUE(out_a[0].success);
  EXPECT_EQ(out_a[0].outcome, "ok: wrote 2 (after 1 retry)");
  EXPECT_EQ(h.svc_->copy(0).value(), 2);
  EXPECT_EQ(h.svc_->copy(0).version(), 2);
}

TEST(RegisterWorkload, WithoutCasTheSameRaceLosesAnUpdate) {
  Harness h(resource_of(ResourceKind::kUnfenced), 2);
  auto a = h.make(0, spec_of(WorkloadKind::kCounter, 1s));
  auto b = h.make(1, spec_of(WorkloadKind::kCounter, 10ms));
  std::vector<IterationResult> out_a, out_b;
  h.start(0, *a, out_a, std::nullopt);
  h.start(1, *b, out_b, std::nullopt, Time{100ms});
  h.sim_.run_until(Time{5s});
  EXPECT_TRUE(out_a.at(0).success && out_b.at(0).success);
  EXPECT_EQ(h.svc_->copy(0).value(), 1) << "two increments, one survives";
}

// ------------------------------------------------------- sequence_allocator --

TEST(SequenceAllocator, ClaimsTheBlockItsAcceptedWriteReserved) {
  Harness h(resource_of(ResourceKind::kFenced, false, 1000));
  auto w = h.make(0, spec_of(WorkloadKind::kSequenceAllocator, 100ms, 100));
  std::vector<IterationResult> out;
  h.start(0, *w, out, 1, Time{0}, 2);
  h.sim_.run_until(Time{5s});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].outcome, "ok: claimed 1000..1099");
  // Same token again: strict check refuses it, so no block is claimed.
  EXPECT_EQ(out[1].outcome, "write rejected: token 1 <= last_written 1");
  EXPECT_EQ(h.svc_->copy(0).value(), 1100);
}

// ------------------------------------------------------------------ writer --

TEST(Writer, WritesTheNextVersionTaggedWithItsNameAndSaysWhichVersionItRead) {
  Harness h(resource_of(ResourceKind::kFenced));
  auto w = h.make(0, spec_of(WorkloadKind::kWriter));
  std::vector<IterationResult> first, second;
  h.start(0, *w, first, 1);
  h.start(0, *w, second, 2, Time{1s});
  h.sim_.run_until(Time{5s});
  EXPECT_EQ(first.at(0).outcome, "ok: wrote version 1 over version 0");
  EXPECT_EQ(second.at(0).outcome, "ok: wrote version 2 over version 1 by A");
  EXPECT_EQ(h.svc_->copy(0).value(), 2);
  EXPECT_EQ(h.svc_->copy(0).tag(), "A");
  const auto writes = h.ops(true);
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0]->tag, "A");
  EXPECT_EQ(writes[0]->effect, "version 1 by A replaces version 0");
  EXPECT_EQ(writes[1]->effect, "version 2 by A replaces version 1 by A");
  EXPECT_EQ(h.ops(false).at(1)->tag, "A") << "a read returns the tag of the version it read";
}

TEST(Writer, APausedWriterOverwritesANewerVersionWithAnOlderOne) {
  // Unfenced file: A reads version 0 and works 2 s; meanwhile B writes
  // versions 1 and 2. A then writes version 1 over B's version 2, and B's
  // next iteration reads A's stale version.
  Harness h(resource_of(ResourceKind::kUnfenced), 2);
  auto a = h.make(0, spec_of(WorkloadKind::kWriter, 2s));
  auto b = h.make(1, spec_of(WorkloadKind::kWriter, 10ms));
  std::vector<IterationResult> out_a, out_b;
  h.start(0, *a, out_a, std::nullopt);
  h.start(1, *b, out_b, std::nullopt, Time{100ms}, 2);
  h.start(1, *b, out_b, std::nullopt, Time{3s});
  h.sim_.run_until(Time{10s});
  ASSERT_EQ(out_b.size(), 3u);
  EXPECT_EQ(out_b[1].outcome, "ok: wrote version 2 over version 1 by B");
  EXPECT_EQ(out_a.at(0).outcome, "ok: wrote version 1 over version 0");
  EXPECT_EQ(out_b[2].outcome, "ok: wrote version 2 over version 1 by A");
  const auto writes = h.ops(true);
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[2]->client, "A");
  EXPECT_EQ(writes[2]->effect, "version 1 by A replaces version 2 by B");
}

TEST(Writer, TheTagTravelsWithTheVersionToTheOtherCopies) {
  ResourceSpec r = resource_of(ResourceKind::kUnfenced);
  r.replicas = 1;
  r.replication_delay = 50ms;
  Harness h(r);
  auto w = h.make(0, spec_of(WorkloadKind::kWriter));
  std::vector<IterationResult> out;
  h.start(0, *w, out, std::nullopt);
  h.sim_.run_until(Time{5s});
  EXPECT_EQ(h.svc_->copy(1).value(), 1);
  EXPECT_EQ(h.svc_->copy(1).tag(), "A");
}

TEST(ResourceOpKind, HasTheNamesTheTraceUses) {
  EXPECT_STREQ(to_string(ResourceOpKind::kRead), "read");
  EXPECT_STREQ(to_string(ResourceOpKind::kWrite), "write");
  EXPECT_STREQ(to_string(ResourceOpKind::kSend), "send");
  EXPECT_STREQ(to_string(ResourceOpKind::kReceive), "receive");
  EXPECT_STREQ(to_string(ResourceOpKind::kExtendVisibility), "extend_visibility");
  EXPECT_STREQ(to_string(ResourceOpKind::kDelete), "delete");
}

}  // namespace
}  // namespace fencesim::workloads
