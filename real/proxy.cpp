// The TCP proxy of fencesim-real (real/proxy.hpp): one poll(2) thread for
// every link.
#include "real/proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <deque>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace fencesim::real {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxQueued = 1 << 20;  // per direction: stop reading beyond this

struct Chunk {
  Clock::time_point due;
  std::string bytes;
  std::size_t off = 0;
};

/// One direction of one connection.
struct Pipe {
  std::deque<Chunk> q;
  std::size_t queued = 0;
  bool eof = false;   // the source closed its sending side
  bool shut = false;  // forwarded as shutdown(SHUT_WR)
};

struct Link {
  std::string from, to;
  int target_port = 0;
  int port = 0;
  int listen_fd = -1;
  bool drop_on_close = false;
  DirectionMode up, down;
};

struct Conn {
  std::size_t link = 0;
  int c = -1;  // accepted, from `from`
  int s = -1;  // to `to`
  bool connecting = false;
  Pipe up, down;  // c -> s, s -> c
  bool dead = false;
  // POLLHUP seen on a side we were not reading (a held direction): that
  // side is left out of poll(2) until we read it again, so that a hung-up
  // socket does not wake the thread in a loop.
  bool hup_c = false, hup_s = false;
};

void nonblock(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }
void nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

struct ProxyNet::State {
  mutable std::mutex mu;
  std::vector<Link> links;
  std::list<Conn> conns;
  int wake[2] = {-1, -1};
  std::atomic<bool> stop{false};
  std::thread thread;
  bool closed = false;

  void poke() {
    const char b = 1;
    (void)!::write(wake[1], &b, 1);
  }

  /// Reads what `fd` has into `p` (delay `d`); false on an error.
  static bool pull(int fd, Pipe& p, std::chrono::nanoseconds d, Clock::time_point now) {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        Chunk ch{now + d, std::string(buf, static_cast<std::size_t>(n)), 0};
        if (!p.q.empty() && p.q.back().due > ch.due) ch.due = p.q.back().due;  // keep the stream's order
        p.queued += ch.bytes.size();
        p.q.push_back(std::move(ch));
        if (p.queued >= kMaxQueued) return true;
        continue;
      }
      if (n == 0) {
        p.eof = true;
        return true;
      }
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
  }

  /// Writes the chunks of `p` that are due to `fd`; false on an error.
  static bool push(int fd, Pipe& p, Clock::time_point now) {
    while (!p.q.empty() && p.q.front().due <= now) {
      Chunk& ch = p.q.front();
      const ssize_t n = ::send(fd, ch.bytes.data() + ch.off, ch.bytes.size() - ch.off, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      ch.off += static_cast<std::size_t>(n);
      p.queued -= static_cast<std::size_t>(n);
      if (ch.off < ch.bytes.size()) return true;
      p.q.pop_front();
    }
    if (p.q.empty() && p.eof && !p.shut) {
      ::shutdown(fd, SHUT_WR);
      p.shut = true;
    }
    return true;
  }

  void start_connect(Conn& cn) {
    const Link& l = links[cn.link];
    cn.s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (cn.s < 0) {
      cn.dead = true;
      return;
    }
    nonblock(cn.s);
    nodelay(cn.s);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(l.target_port));
    if (::connect(cn.s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      cn.connecting = false;
    } else if (errno == EINPROGRESS) {
      cn.connecting = true;
    } else {
      cn.dead = true;  // refused: `to` is down; the dialer sees its connection closed
    }
  }

  /// What each pollfd is: the wake pipe, a link's listener, or one side of a connection.
  struct Ref {
    int kind;  // 0 wake, 1 listener, 2 client side, 3 server side
    std::size_t link;
    Conn* conn;
  };

  /// The poll set of this round: the wake pipe, every listener, and each
  /// connection's sides with the events its directions' state allows.
  /// Returns when the next held chunk falls due (at most 100 ms away).
  Clock::time_point poll_set(Clock::time_point now, std::vector<pollfd>& pfds, std::vector<Ref>& refs) {
    pfds.clear();
    refs.clear();
    pfds.push_back({wake[0], POLLIN, 0});
    refs.push_back({0, 0, nullptr});
    auto next_due = now + std::chrono::milliseconds(100);
    for (std::size_t i = 0; i < links.size(); ++i) {
      pfds.push_back({links[i].listen_fd, POLLIN, 0});
      refs.push_back({1, i, nullptr});
    }
    // POLLOUT on a side whose next chunk is due; otherwise wake when it is.
    auto out_when_due = [&](const Pipe& p, short& events) {
      if (p.q.front().due <= now) {
        events |= POLLOUT;
      } else {
        next_due = std::min(next_due, p.q.front().due);
      }
    };
    for (Conn& cn : conns) {
      const Link& l = links[cn.link];
      if (cn.s < 0 && !cn.dead && !l.up.blocked) start_connect(cn);
      if (cn.dead) continue;
      short ce = 0, se = 0;
      if (!l.up.blocked && !cn.up.eof && cn.up.queued < kMaxQueued) ce |= POLLIN;
      if (!l.down.blocked && !cn.down.q.empty()) out_when_due(cn.down, ce);
      if (cn.s >= 0) {
        if (cn.connecting) {
          se |= POLLOUT;
        } else {
          if (!l.down.blocked && !cn.down.eof && cn.down.queued < kMaxQueued) se |= POLLIN;
          if (!l.up.blocked && !cn.up.q.empty()) out_when_due(cn.up, se);
        }
      }
      if (!cn.hup_c || (ce & POLLIN)) {
        pfds.push_back({cn.c, ce, 0});
        refs.push_back({2, cn.link, &cn});
      }
      if (cn.s >= 0 && (!cn.hup_s || (se & POLLIN) || cn.connecting)) {
        pfds.push_back({cn.s, se, 0});
        refs.push_back({3, cn.link, &cn});
      }
    }
    return next_due;
  }

  /// A listener is readable: every pending connection becomes a Conn.
  void accept_all(std::size_t link) {
    for (;;) {
      const int fd = ::accept4(links[link].listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;
      nonblock(fd);
      nodelay(fd);
      Conn cn;
      cn.link = link;
      cn.c = fd;
      conns.push_back(std::move(cn));
    }
  }

  /// Events on the dialer's side: read into `up`, write `down`'s due chunks.
  void on_client_side(Conn& cn, const Link& l, const pollfd& pf, Clock::time_point t) {
    const short ev = pf.revents;
    if ((ev & (POLLIN | POLLHUP | POLLERR)) && (pf.events & POLLIN)) {
      if (!pull(cn.c, cn.up, l.up.delay, t)) cn.dead = true;
    } else if ((ev & (POLLERR | POLLNVAL))) {
      cn.dead = true;
    } else if (ev & POLLHUP) {
      cn.hup_c = true;
    }
    if (!cn.dead && (ev & POLLOUT)) {
      if (!push(cn.c, cn.down, t)) cn.dead = true;
    }
  }

  /// Events on the server's side: the connect finishing, read into `down`
  /// (a server that closes: what it sent is dropped on a drop_on_close
  /// link), write `up`'s due chunks.
  void on_server_side(Conn& cn, const Link& l, const pollfd& pf, Clock::time_point t) {
    const short ev = pf.revents;
    if (cn.connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(cn.s, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        cn.dead = true;
      } else if (ev & (POLLOUT | POLLHUP | POLLERR)) {
        cn.connecting = false;
      }
      return;
    }
    if ((ev & (POLLIN | POLLHUP | POLLERR)) && (pf.events & POLLIN)) {
      if (!pull(cn.s, cn.down, l.down.delay, t)) {
        cn.down.eof = true;
        if (l.drop_on_close) {
          cn.down.q.clear();
          cn.down.queued = 0;
        }
        if (cn.down.q.empty()) cn.dead = true;
      } else if (cn.down.eof && l.drop_on_close) {
        cn.down.q.clear();
        cn.down.queued = 0;
      }
    } else if ((ev & (POLLERR | POLLNVAL))) {
      cn.dead = true;
    } else if (ev & POLLHUP) {
      cn.hup_s = true;
    }
    if (!cn.dead && (ev & POLLOUT)) {
      if (!push(cn.s, cn.up, t)) cn.dead = true;
    }
  }

  /// Delivers what fell due without an event (a pipe whose socket was
  /// already writable), and drops finished or broken connections.
  void deliver_and_reap(Clock::time_point t) {
    for (auto it = conns.begin(); it != conns.end();) {
      Conn& cn = *it;
      const Link& l = links[cn.link];
      if (!cn.dead && !l.down.blocked) {
        if (!push(cn.c, cn.down, t)) cn.dead = true;
      }
      if (!cn.dead && cn.s >= 0 && !cn.connecting && !l.up.blocked) {
        if (!push(cn.s, cn.up, t)) cn.dead = true;
      }
      const bool done = cn.up.shut && cn.down.shut;
      if (cn.dead || done) {
        if (cn.c >= 0) ::close(cn.c);
        if (cn.s >= 0) ::close(cn.s);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// The proxy thread: poll(2) without the lock, handle events under it.
  void loop() {
    std::vector<pollfd> pfds;
    std::vector<Ref> refs;
    std::unique_lock<std::mutex> lk(mu);
    while (!stop) {
      const auto now = Clock::now();
      const auto next_due = poll_set(now, pfds, refs);
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_due - now).count();
      lk.unlock();
      const int rc = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<long long>(0, wait) + 0));
      lk.lock();
      if (stop) break;
      if (rc < 0 && errno != EINTR) break;
      const auto t = Clock::now();
      for (std::size_t i = 0; i < pfds.size(); ++i) {
        const short ev = pfds[i].revents;
        const Ref& r = refs[i];
        if (r.kind == 0) {
          if (ev & POLLIN) {
            char b[64];
            (void)!::read(wake[0], b, sizeof b);
          }
        } else if (r.kind == 1) {
          if (ev & POLLIN) accept_all(r.link);
        } else if (!r.conn->dead && ev != 0) {
          if (r.kind == 2) {
            on_client_side(*r.conn, links[r.link], pfds[i], t);
          } else {
            on_server_side(*r.conn, links[r.link], pfds[i], t);
          }
        }
      }
      deliver_and_reap(t);
    }
  }
};

ProxyNet::ProxyNet() : st_(std::make_unique<State>()) {
  if (::pipe(st_->wake) != 0) throw std::runtime_error("fencesim-real: pipe() failed for the proxy");
  nonblock(st_->wake[0]);
  nonblock(st_->wake[1]);
  st_->thread = std::thread([s = st_.get()] { s->loop(); });
}

ProxyNet::~ProxyNet() {
  close_all();
  ::close(st_->wake[0]);
  ::close(st_->wake[1]);
}

int ProxyNet::add_link(const std::string& from, const std::string& to, int target_port, bool drop_on_close) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("fencesim-real: socket() failed for the proxy");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("fencesim-real: cannot listen on 127.0.0.1 for the proxy of " + from + " -> " + to);
  }
  nonblock(fd);
  Link l;
  l.from = from;
  l.to = to;
  l.target_port = target_port;
  l.port = ntohs(a.sin_port);
  l.listen_fd = fd;
  l.drop_on_close = drop_on_close;
  std::lock_guard<std::mutex> g(st_->mu);
  if (st_->closed) {
    ::close(fd);
    throw std::runtime_error("fencesim-real: the proxy is closed");
  }
  st_->links.push_back(l);
  st_->poke();
  return l.port;
}

std::optional<int> ProxyNet::port(const std::string& from, const std::string& to) const {
  std::lock_guard<std::mutex> g(st_->mu);
  for (const Link& l : st_->links) {
    if (l.from == from && l.to == to) return l.port;
  }
  return std::nullopt;
}

std::optional<std::string> ProxyNet::target_of_port(int port) const {
  std::lock_guard<std::mutex> g(st_->mu);
  for (const Link& l : st_->links) {
    if (l.port == port) return l.to;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> ProxyNet::links() const {
  std::lock_guard<std::mutex> g(st_->mu);
  std::vector<std::pair<std::string, std::string>> out;
  for (const Link& l : st_->links) out.emplace_back(l.from, l.to);
  return out;
}

void ProxyNet::set(const std::string& from, const std::string& to, DirectionMode up, DirectionMode down) {
  std::lock_guard<std::mutex> g(st_->mu);
  for (Link& l : st_->links) {
    if (l.from == from && l.to == to) {
      l.up = up;
      l.down = down;
    }
  }
  st_->poke();
}

void ProxyNet::close_all() {
  {
    std::lock_guard<std::mutex> g(st_->mu);
    if (st_->closed) return;
    st_->closed = true;
    st_->stop = true;
    st_->poke();
  }
  if (st_->thread.joinable()) st_->thread.join();
  // shutdown() first: the connection ends (EOF at both ends) even if some
  // other process holds a copy of the socket.
  for (Conn& cn : st_->conns) {
    for (const int fd : {cn.c, cn.s}) {
      if (fd < 0) continue;
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
    }
  }
  st_->conns.clear();
  for (Link& l : st_->links) {
    if (l.listen_fd >= 0) ::close(l.listen_fd);
    l.listen_fd = -1;
  }
}

// ---------------------------------------------------------- LinkFaults --

void LinkFaults::set_base(const std::string& from, const std::string& to, DirectionMode up, DirectionMode down) {
  base_[{from, to}] = {up, down};
  apply();
}

int LinkFaults::add_partition(std::vector<std::vector<std::string>> groups, bool isolate, bool one_way) {
  Partition p;
  for (auto& g : groups) p.groups.emplace_back(g.begin(), g.end());
  p.isolate = isolate;
  p.one_way = one_way;
  const int id = next_++;
  partitions_[id] = std::move(p);
  apply();
  return id;
}

void LinkFaults::end_partition(int id) {
  partitions_.erase(id);
  apply();
}

void LinkFaults::heal() {
  partitions_.clear();
  apply();
}

int LinkFaults::add_slow(const std::string& node, std::chrono::nanoseconds delay) {
  const int id = next_++;
  slows_[id] = {node, delay};
  apply();
  return id;
}

void LinkFaults::end_slow(int id) {
  slows_.erase(id);
  apply();
}

bool LinkFaults::blocks(const std::string& sender, const std::string& receiver) const {
  for (const auto& [id, p] : partitions_) {
    if (p.isolate) {
      const bool a = !p.groups.empty() && p.groups[0].count(sender);
      const bool b = !p.groups.empty() && p.groups[0].count(receiver);
      if (a != b && (!p.one_way || a)) return true;
      continue;
    }
    int ga = -1, gb = -1;
    for (std::size_t i = 0; i < p.groups.size(); ++i) {
      if (p.groups[i].count(sender)) ga = static_cast<int>(i);
      if (p.groups[i].count(receiver)) gb = static_cast<int>(i);
    }
    if (ga >= 0 && gb >= 0 && ga != gb && (!p.one_way || ga == 0)) return true;
  }
  return false;
}

void LinkFaults::apply() {
  for (const auto& [from, to] : net_.links()) {
    DirectionMode up, down;
    if (auto it = base_.find({from, to}); it != base_.end()) std::tie(up, down) = it->second;
    up.blocked = blocks(from, to);
    down.blocked = blocks(to, from);
    for (const auto& [id, slow] : slows_) {
      if (slow.first == from || slow.first == to) {
        up.delay += slow.second;
        down.delay += slow.second;
      }
    }
    net_.set(from, to, up, down);
  }
}

}  // namespace fencesim::real
