// real/proxy.hpp — the TCP proxy fencesim-real puts on the links it
// controls, so that `partition` and `slow` faults (and Redis
// `replication_delay`) act on real connections.
//
//   ProxyNet net;
//   const int p = net.add_link("A", "redis-0", redis0_port);   // A dials p
//   net.set("A", "redis-0", {.blocked = true}, {.blocked = true});  // cut
//   net.set("A", "redis-0", {}, {});                                 // heal
//
// A link is one (from, to) pair of scenario nodes: `from` dials the link's
// own port on 127.0.0.1 and the proxy connects to `to`'s real port. "up" is
// the direction from → to (requests), "down" to → from (answers, and the
// replication stream on a replica → primary link).
//
// A blocked direction HOLDS its bytes: the proxy stops reading them from the
// sending socket (they wait in the kernel's buffers, the sender's writes
// block once those are full) and stops writing what it had queued; nothing
// is closed and nothing is discarded. That is what TCP does across a real
// partition: no RST and no FIN cross it, the sender retransmits, and what
// was sent arrives once the partition heals (if the connection is still
// open then). A client's command times out meanwhile, as in the model,
// where the message is lost; the difference (bytes delivered late instead
// of never) is listed in docs/CONFORMANCE.md. A connection accepted while
// "up" is blocked is not connected to `to` until it is unblocked (the
// three-way handshake would not cross the partition either).
//
// A delayed direction holds each chunk it reads for `delay` (real time)
// after reading it, then writes it; the delay is fixed when the bytes are
// read, and a stream's order is kept (TCP cannot reorder). With
// `drop_on_close` (a replication link with `replication_delay`) the bytes
// still waiting when `to` closes its end are discarded: the delay stands
// for the sender's own buffer, which a crash loses.
//
// One thread runs every link with poll(2). Not part of the simulator: the
// deterministic core never includes this.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fencesim::real {

/// One direction of a link.
struct DirectionMode {
  bool blocked = false;               ///< hold the bytes (a partition)
  std::chrono::nanoseconds delay{0};  ///< real time each chunk waits (slow, replication_delay)
  bool operator==(const DirectionMode&) const = default;
};

class ProxyNet {
 public:
  ProxyNet();
  ~ProxyNet();  ///< close_all()
  ProxyNet(const ProxyNet&) = delete;
  ProxyNet& operator=(const ProxyNet&) = delete;

  /// Listens on a fresh port of 127.0.0.1 and forwards each connection to
  /// 127.0.0.1:`target_port`; returns the listening port. Throws
  /// std::runtime_error when no socket can be bound.
  int add_link(const std::string& from, const std::string& to, int target_port, bool drop_on_close = false);
  /// The listening port of link from → to, if there is one.
  std::optional<int> port(const std::string& from, const std::string& to) const;
  /// The `to` of the link listening on `port`, if it is one of ours.
  std::optional<std::string> target_of_port(int port) const;
  /// Every link, as (from, to), in the order added.
  std::vector<std::pair<std::string, std::string>> links() const;
  /// Sets both directions of link from → to (no such link: nothing).
  void set(const std::string& from, const std::string& to, DirectionMode up, DirectionMode down);
  /// Stops the thread and closes every connection and listening socket:
  /// whoever waits on a held connection gets EOF. Idempotent.
  void close_all();

  struct State;

 private:
  std::unique_ptr<State> st_;
};

/// The link faults active now, mapped onto a ProxyNet: after every change
/// each link's two directions are set from the base delays (Redis
/// `replication_delay`), the active partitions and the active `slow`
/// faults, with the model's rules (docs/FORMAT.md "partition", "slow"):
///   * a direction sender → receiver is blocked while any active partition
///     blocks messages from sender to receiver: `groups` — both in groups,
///     different ones (one_way: only from the first group); `isolate` —
///     exactly one of them isolated (one_way: only from the isolated);
///   * its delay is the base delay plus the `delay` of every active `slow`
///     fault on the sender or the receiver (they add, as in the model).
/// Node names are resolved already (roles resolved when the fault fired).
/// Used from the runner's fault thread only.
class LinkFaults {
 public:
  explicit LinkFaults(ProxyNet& net) : net_(net) {}
  /// The base modes of link from → to (kept under faults).
  void set_base(const std::string& from, const std::string& to, DirectionMode up, DirectionMode down);
  /// Starts a partition; `isolate`: groups[0] is the isolated set. Returns its id.
  int add_partition(std::vector<std::vector<std::string>> groups, bool isolate, bool one_way);
  void end_partition(int id);
  /// `heal`: ends every partition.
  void heal();
  /// Starts a slow fault on `node` (`delay` in real time). Returns its id.
  int add_slow(const std::string& node, std::chrono::nanoseconds delay);
  void end_slow(int id);
  /// Whether an active partition blocks messages from `sender` to `receiver`.
  bool blocks(const std::string& sender, const std::string& receiver) const;

 private:
  struct Partition {
    std::vector<std::set<std::string>> groups;
    bool isolate = false;
    bool one_way = false;
  };
  void apply();
  ProxyNet& net_;
  std::map<std::pair<std::string, std::string>, std::pair<DirectionMode, DirectionMode>> base_;
  std::map<int, Partition> partitions_;
  std::map<int, std::pair<std::string, std::chrono::nanoseconds>> slows_;
  int next_ = 0;
};

}  // namespace fencesim::real
