// The discrete-event loop (see engine.h for the rules and the picture).
#include "sim/engine.h"

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "sim/event_queue.h"

namespace pipeworks::sim {
namespace {

using sched::ActionKind;

constexpr Nanoseconds kUnknown = std::numeric_limits<Nanoseconds>::min();
constexpr std::uint32_t kPhaseReady = 0;     // a transfer becomes ready (id = SEND op)
constexpr std::uint32_t kPhaseDispatch = 1;  // a busy link frees up (id = link)

class Engine {
 public:
  Engine(const OpTable& table, std::size_t num_links, CommMode mode, bool record_memory)
      : t_(table), blocking_(mode == CommMode::kBlocking), record_(record_memory) {
    const std::size_t n = table.ops.size();
    const std::size_t d = table.device_begin.size() - 1;
    out_.start_ns.assign(n, kUnknown);
    out_.end_ns.assign(n, kUnknown);
    out_.peak_activation_bytes.assign(d, 0);
    if (record_) {
      out_.memory.resize(d);
      for (std::size_t i = 0; i < d; ++i) {
        out_.memory[i].push_back(sched::MemorySample{static_cast<int>(i), 0, table.static_memory[i].total_bytes()});
      }
    }
    cursor_.assign(table.device_begin.begin(), table.device_begin.end() - 1);
    stream_free_.assign(d, 0);
    waiting_on_.assign(d, -1);
    next_waiter_.assign(d, -1);
    held_.assign(d, 0);
    waiter_head_.assign(n, -1);
    next_pending_.assign(n, -1);
    link_free_.assign(num_links, 0);
    pending_head_.assign(num_links, -1);
    pending_tail_.assign(num_links, -1);
    dispatch_scheduled_.assign(num_links, 0);
    worklist_.reserve(d);
    queue_.reserve(d * 4 + 16);
  }

  // Runs to completion; returns the op ids nothing could start (empty on success).
  void run() {
    for (std::size_t d = table_devices(); d-- > 0;) worklist_.push_back(static_cast<std::int32_t>(d));
    for (;;) {
      while (!worklist_.empty()) {
        const std::int32_t d = worklist_.back();
        worklist_.pop_back();
        advance(d);
      }
      if (queue_.empty()) break;
      const Event e = queue_.pop();
      const auto id = static_cast<std::int32_t>(EventQueue::id_of(e));
      if (EventQueue::phase_of(e) == kPhaseReady) {
        on_ready(id, e.time_ns);
      } else {
        on_dispatch(id, e.time_ns);
      }
    }
  }

  const std::vector<std::int32_t>& cursor() const { return cursor_; }
  const std::vector<std::int32_t>& waiting_on() const { return waiting_on_; }
  EngineOutput take() { return std::move(out_); }
  const EngineOutput& output() const { return out_; }

 private:
  std::size_t table_devices() const { return t_.device_begin.size() - 1; }

  void wait_for(std::int32_t d, std::int32_t op) {
    const auto i = static_cast<std::size_t>(d);
    next_waiter_[i] = waiter_head_[static_cast<std::size_t>(op)];
    waiter_head_[static_cast<std::size_t>(op)] = d;
    waiting_on_[i] = op;
  }

  void finished(std::int32_t op) {
    std::int32_t w = waiter_head_[static_cast<std::size_t>(op)];
    waiter_head_[static_cast<std::size_t>(op)] = -1;
    while (w >= 0) {
      const std::int32_t next = next_waiter_[static_cast<std::size_t>(w)];
      waiting_on_[static_cast<std::size_t>(w)] = -1;
      worklist_.push_back(w);
      w = next;
    }
  }

  void add_memory(std::size_t d, Nanoseconds at, Bytes delta) {
    held_[d] += delta;
    out_.peak_activation_bytes[d] = std::max(out_.peak_activation_bytes[d], held_[d]);
    if (!record_) return;
    auto& samples = out_.memory[d];
    const Bytes bytes = t_.static_memory[d].total_bytes() + held_[d];
    if (samples.back().time_ns == at) {
      samples.back().bytes = bytes;
    } else {
      samples.push_back(sched::MemorySample{static_cast<int>(d), at, bytes});
    }
  }

  // Runs device d's program from its cursor until it must wait.
  void advance(std::int32_t d) {
    const auto di = static_cast<std::size_t>(d);
    const std::int32_t last = t_.device_begin[di + 1];
    std::int32_t p = cursor_[di];
    Nanoseconds free = stream_free_[di];
    auto& start = out_.start_ns;
    auto& end = out_.end_ns;
    while (p < last) {
      const auto pi = static_cast<std::size_t>(p);
      const Op& op = t_.ops[pi];
      if (sched::is_compute(op.kind)) {
        Nanoseconds s = free;
        std::int32_t blocked_on = -1;
        for (const std::int32_t dep : op.dep) {
          if (dep < 0) break;
          const Nanoseconds f = end[static_cast<std::size_t>(dep)];
          if (f == kUnknown) {
            blocked_on = dep;
            break;
          }
          s = std::max(s, f);
        }
        if (blocked_on >= 0) {
          wait_for(d, blocked_on);
          break;
        }
        start[pi] = s;
        free = s + op.duration_ns;
        end[pi] = free;
        if (op.memory_delta_bytes != 0) add_memory(di, free, op.memory_delta_bytes);
        if (waiter_head_[pi] >= 0) finished(p);
        ++p;
        continue;
      }
      if (blocking_ && end[pi] != kUnknown) {  // our rendezvous finished: the stream was held until its end
        free = end[pi];
        ++p;
        continue;
      }
      if (sched::is_send(op.kind)) {
        const Nanoseconds produced = end[static_cast<std::size_t>(op.dep[0])];
        if (produced == kUnknown) {
          wait_for(d, op.dep[0]);
          break;
        }
        if (!blocking_) {
          start[pi] = std::max(free, produced);
          queue_.push(Event{start[pi], EventQueue::order_of(kPhaseReady, static_cast<std::uint32_t>(p))});
          ++p;
          continue;
        }
        if (start[pi] == kUnknown) {
          start[pi] = std::max(free, produced);
          const Nanoseconds other = start[static_cast<std::size_t>(op.peer)];
          if (other != kUnknown) post_ready(p, std::max(start[pi], other));
        }
        wait_for(d, p);
        break;
      }
      // RECV
      if (!blocking_) {
        ++p;
        continue;
      }
      if (start[pi] == kUnknown) {
        start[pi] = free;
        const Nanoseconds other = start[static_cast<std::size_t>(op.peer)];
        if (other != kUnknown) post_ready(op.peer, std::max(free, other));
      }
      wait_for(d, p);
      break;
    }
    cursor_[di] = p;
    stream_free_[di] = free;
  }

  void post_ready(std::int32_t send, Nanoseconds ready) {
    queue_.push(Event{ready, EventQueue::order_of(kPhaseReady, static_cast<std::uint32_t>(send))});
  }

  void on_ready(std::int32_t send, Nanoseconds now) {
    const auto link = static_cast<std::size_t>(t_.ops[static_cast<std::size_t>(send)].link);
    if (pending_head_[link] < 0 && link_free_[link] <= now) {
      start_transfer(send, now);
      return;
    }
    if (pending_head_[link] < 0) {
      pending_head_[link] = send;
    } else {
      next_pending_[static_cast<std::size_t>(pending_tail_[link])] = send;
    }
    pending_tail_[link] = send;
    if (!dispatch_scheduled_[link]) {
      dispatch_scheduled_[link] = 1;
      queue_.push(Event{link_free_[link], EventQueue::order_of(kPhaseDispatch, static_cast<std::uint32_t>(link))});
    }
  }

  void on_dispatch(std::int32_t link_id, Nanoseconds now) {
    const auto link = static_cast<std::size_t>(link_id);
    const std::int32_t send = pending_head_[link];
    pending_head_[link] = next_pending_[static_cast<std::size_t>(send)];
    if (pending_head_[link] < 0) pending_tail_[link] = -1;
    start_transfer(send, now);
    if (pending_head_[link] >= 0) {
      queue_.push(Event{link_free_[link], EventQueue::order_of(kPhaseDispatch, static_cast<std::uint32_t>(link))});
    } else {
      dispatch_scheduled_[link] = 0;
    }
  }

  void start_transfer(std::int32_t send, Nanoseconds now) {
    const Op& op = t_.ops[static_cast<std::size_t>(send)];
    const auto s = static_cast<std::size_t>(send);
    const auto r = static_cast<std::size_t>(op.peer);
    const Nanoseconds finish = now + op.duration_ns;
    out_.start_ns[s] = out_.start_ns[r] = now;
    out_.end_ns[s] = out_.end_ns[r] = finish;
    link_free_[static_cast<std::size_t>(op.link)] = finish;
    finished(send);
    finished(op.peer);
  }

  const OpTable& t_;
  bool blocking_;
  bool record_;
  EngineOutput out_;
  std::vector<std::int32_t> cursor_;
  std::vector<Nanoseconds> stream_free_;
  std::vector<std::int32_t> waiting_on_;
  std::vector<std::int32_t> next_waiter_;
  std::vector<Bytes> held_;
  std::vector<std::int32_t> waiter_head_;
  std::vector<std::int32_t> next_pending_;
  std::vector<Nanoseconds> link_free_;
  std::vector<std::int32_t> pending_head_;
  std::vector<std::int32_t> pending_tail_;
  std::vector<char> dispatch_scheduled_;
  std::vector<std::int32_t> worklist_;
  EventQueue queue_;
};

// "3F2 on device 1" for an op id.
std::string describe(const OpTable& table, const sched::Schedule& schedule, std::int32_t op) {
  const auto it = std::upper_bound(table.device_begin.begin(), table.device_begin.end(), op);
  const auto d = static_cast<std::size_t>(it - table.device_begin.begin() - 1);
  const auto p = static_cast<std::size_t>(op - table.device_begin[d]);
  return fmt::format("{} on device {}", sched::to_string(schedule.programs[d][p]), d);
}

std::string stuck_message(const Engine& engine, const OpTable& table, const sched::Schedule& schedule) {
  std::string text;
  for (std::size_t d = 0; d + 1 < table.device_begin.size(); ++d) {
    const std::int32_t p = engine.cursor()[d];
    if (p >= table.device_begin[d + 1]) continue;
    const std::int32_t w = engine.waiting_on()[d];
    const Op& op = table.ops[static_cast<std::size_t>(p)];
    std::string why;
    if (w == p && op.peer >= 0) {
      why = fmt::format("waits for its partner {}", describe(table, schedule, op.peer));
    } else if (w >= 0) {
      why = fmt::format("waits for {}", describe(table, schedule, w));
    }
    text += fmt::format("{}device {} blocked at position {} ({}) {}", text.empty() ? "" : "; ", d,
                        p - table.device_begin[d], sched::to_string(schedule.programs[d][static_cast<std::size_t>(
                                                                          p - table.device_begin[d])]),
                        why);
  }
  if (text.empty()) {  // every program ran, but a posted transfer never found its partner
    for (std::size_t i = 0; i < table.ops.size(); ++i) {
      if (engine.output().end_ns[i] == kUnknown) {
        text = fmt::format("the transfer of {} never started", describe(table, schedule, static_cast<std::int32_t>(i)));
        break;
      }
    }
  }
  return text;
}

}  // namespace

sched::Result<EngineOutput> run_engine(const OpTable& table, const sched::Schedule& schedule, std::size_t num_links,
                                       CommMode mode, bool record_memory) {
  Engine engine(table, num_links, mode, record_memory);
  engine.run();
  const std::string stuck = stuck_message(engine, table, schedule);
  if (!stuck.empty()) return sched::Error{fmt::format("schedule cannot progress: {}", stuck)};
  EngineOutput out = engine.take();
  for (const Nanoseconds e : out.end_ns) out.makespan_ns = std::max(out.makespan_ns, e);
  return out;
}

}  // namespace pipeworks::sim
