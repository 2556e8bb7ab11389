// sim/process.cpp — making a process's fiber (Node::spawn) and the
// out-of-line parts of waiting and request/response.
#include <memory>

#include "sim/simulation.hpp"
#include "sim/stack_pool.hpp"

#if defined(FENCESIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

namespace ctx = boost::context;

void Node::spawn(std::string name, std::function<void(Process&)> body) {
  Simulation& s = *sim_;
  if (!up_) throw ModelBug("spawn on a down node " + name_);
  std::uint32_t slot;
  if (!s.free_procs_.empty()) {
    slot = s.free_procs_.back();
    s.free_procs_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(s.procs_.size());
    s.procs_.emplace_back();
    s.stack_hints_.push_back(nullptr);
  }
  auto p = std::make_unique<Process>();
  p->node_ = this;
  p->name_ = std::move(name);
  p->slot_ = slot;
  p->body_ = std::move(body);
  Process* raw = p.get();
  Simulation* sp = &s;
  p->fiber_ = ctx::fiber(std::allocator_arg, detail::PooledStack{s.stacks_.get()}, [sp, raw](ctx::fiber&& caller) {
    raw->caller_ = std::move(caller);
#if defined(FENCESIM_ASAN_FIBERS)
    __sanitizer_finish_switch_fiber(nullptr, &raw->caller_bottom_, &raw->caller_size_);
#endif
    try {
      // A process cancelled before it ever ran is started only to end: its
      // fiber then finishes on the annotated path (see Simulation::crash).
      if (!raw->cancelled_) raw->body_(*raw);
    } catch (const Cancelled&) {
      // The node crashed: the process ends here.
    } catch (const ctx::detail::forced_unwind&) {
      throw;
    } catch (const std::exception& e) {
      sp->bug_ = "process " + raw->name_ + " on " + raw->node_->name() + " threw: " + e.what();
    } catch (...) {
      sp->bug_ = "process " + raw->name_ + " on " + raw->node_->name() + " threw a non-standard exception";
    }
    raw->finished_ = true;
    raw->body_ = nullptr;
#if defined(FENCESIM_ASAN_FIBERS)
    __sanitizer_start_switch_fiber(nullptr, raw->caller_bottom_, raw->caller_size_);
#endif
    return std::move(raw->caller_);
  });
  const ctx::stack_context& sc = s.stacks_->last();
  p->stack_size_ = sc.size;
  p->stack_bottom_ = static_cast<char*>(sc.sp) - sc.size;
  p->wait_ = s.next_wait_++;
  p->resume_pending_ = true;
  s.procs_[slot] = std::move(p);
  s.stack_hints_[slot] = nullptr;
  processes_.push_back(slot);
  s.queue_.push(s.now_, EventClass::kNormal, EventType::kResume, slot, raw->wait_);
}

WaitHandle Process::prepare_wait() {
  Simulation& s = sim();
  if (s.current_ != this) throw ModelBug("prepare_wait outside the running process " + name_);
  wait_ = s.next_wait_++;
  waiting_ = true;
  notified_ = false;
  return WaitHandle{slot_, wait_};
}

std::uint64_t Process::send_request(NodeId to, PayloadPtr body) {
  const std::uint64_t id = node_->send(to, std::move(body));
  node_->calls_.add(id);
  return id;
}

std::optional<Message> Process::await_reply(std::uint64_t call, Time monotonic_deadline) {
  Node::PendingCall* c = node_->calls_.find(call);
  if (c == nullptr) return std::nullopt;
  if (!c->reply) {
    c->waiter = prepare_wait();
    block(ClockKind::kMonotonic, monotonic_deadline);
    c = node_->calls_.find(call);  // (the table may have changed meanwhile)
    if (c == nullptr) return std::nullopt;
  }
  if (!c->reply.has_value()) {
    node_->calls_.erase(c);
    return std::nullopt;
  }
  std::optional<Message> out = std::move(c->reply);
  node_->calls_.erase(c);
  return out;
}

}  // namespace sim
