// The discrete-event loop (see engine.h for the rules and the picture).
#include "sim/engine/engine.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "sim/engine/core_slots.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/link_queue.h"
#include "sim/engine/op_costs.h"
#include "sim/engine/stuck_message.h"

namespace pipeworks::sim {
namespace {

using sched::ActionKind;

// An op's state (Engine::state_): what of its time is known. A separate byte per op rather than
// a sentinel time: the times need no filling before the loop, which was one more pass over them.
// (An enum, not a char type: stores of a char type may alias anything, which would make the
// loop reload every member after each.)
enum class OpState : std::uint8_t {
  kPending,
  kStarted,  // a blocking SEND/RECV reached: its start_ns holds when; a compute op waiting for a
             // compute slot: its start_ns holds when it was ready
  kEnded,    // start_ns and end_ns hold the op's interval
};
using enum OpState;
constexpr std::uint32_t kPhaseReady = 0;     // a transfer becomes ready (id = SEND op)
constexpr std::uint32_t kPhaseDispatch = 1;  // a busy link frees up (id = link)
constexpr std::uint32_t kPhaseCompute = 2;   // a compute op is ready for a compute slot (id = op)
constexpr std::uint32_t kPhaseRelease = 3;   // a compute op on a slot ends (id = op): after the
                                             // claims of the same time, so its holder may go on

class Engine {
 public:
  Engine(const OpTable& table, std::size_t num_links, CommMode mode, bool record_memory)
      : t_(table),
        ops_(table.ops.data()),
        classes_(table.classes.data()),
        blocking_(mode == CommMode::kBlocking),
        eager_(mode == CommMode::kEager),
        record_(record_memory) {
    const std::size_t n = table.size();
    const std::size_t d = table.device_begin.size() - 1;
    out_.times.resize(n);  // uninitialized (UninitializedAllocator)
    time_ = out_.times.data();
    state_.assign(n, kPending);
    out_.peak_activation_bytes.assign(d, 0);
    out_.busy_ns.assign(d, 0);
    out_.collective_ns.assign(d, 0);
    collective_free_.assign(d, 0);
    if (table.has_unshard) {
      gate_.assign(table.reduce_grad_buckets.size(), 0);
      unsharded_.assign(table.reduce_grad_buckets.size(), 0);
    }
    last_compute_end_.assign(d, 0);
    active_end_.assign(d, 0);
    if (record_) {
      out_.memory.resize(d);
      for (std::size_t i = 0; i < d; ++i) {
        out_.memory[i].push_back(sched::MemorySample{static_cast<int>(i), 0, table.static_memory[i].total_bytes()});
      }
    }
    cursor_.assign(table.device_begin.begin(), table.device_begin.end() - 1);
    stream_free_.assign(d, 0);
    waiting_on_.assign(d, -1);
    waiter_head_.assign(d, -1);
    next_waiter_.assign(d, -1);
    held_.assign(d, 0);
    link_free_.assign(num_links, 0);
    if (std::find(table.link_shared.begin(), table.link_shared.end(), 1) != table.link_shared.end()) {
      waiting_sends_ = LinkQueue(n, num_links);
      queue_.reserve(d * 4 + 16);
    }
    if (table.compute_slots > 0) {
      slots_ = CoreSlots(static_cast<std::size_t>(table.slot_groups), table.compute_slots, d, table.compute_slice_ns);
      continuing_.assign(d, 0);
      queue_.reserve(d * 4 + 16);
    }
    worklist_.reserve(d);
  }

  void run() {
    for (std::size_t d = table_devices(); d-- > 0;) worklist_.push_back(static_cast<std::int32_t>(d));
    for (;;) {
      while (!worklist_.empty()) {
        const std::int32_t d = worklist_.back();
        worklist_.pop_back();
        const bool slots = t_.compute_slots > 0;
        if (gate_.empty()) {
          slots ? advance<false, true>(d) : advance<false, false>(d);
        } else {
          slots ? advance<true, true>(d) : advance<true, false>(d);
        }
      }
      if (queue_.empty()) break;
      const Event e = queue_.pop();
      const auto id = static_cast<std::int32_t>(EventQueue::id_of(e));
      const std::uint32_t phase = EventQueue::phase_of(e);
      if (phase == kPhaseReady) {
        on_ready(id, e.time_ns);
      } else if (phase == kPhaseDispatch) {
        on_dispatch(id, e.time_ns);
      } else if (phase == kPhaseCompute) {
        on_compute_ready(id, e.time_ns);
      } else {
        on_slot_release(id, e.time_ns);
      }
    }
  }

  // Every program ran to its end and every transfer took place.
  bool complete() const {
    for (std::size_t d = 0; d < table_devices(); ++d) {
      if (cursor_[d] < t_.device_begin[d + 1]) return false;
    }
    return transfers_done_ == t_.num_transfers;
  }
  // The latest end: every device's last op, or a transfer that ends after it.
  Nanoseconds makespan() const {
    Nanoseconds latest = latest_transfer_end_;
    for (std::size_t d = 0; d < table_devices(); ++d) latest = std::max(latest, device_end(d));
    return latest;
  }
  Nanoseconds compute_end() const {
    return last_compute_end_.empty() ? 0 : *std::max_element(last_compute_end_.begin(), last_compute_end_.end());
  }
  // When device d's stream and collective lane are both free after its program.
  Nanoseconds device_end(std::size_t d) const { return std::max(stream_free_[d], collective_free_[d]); }
  const std::vector<std::int32_t>& cursor() const { return cursor_; }
  const std::vector<std::int32_t>& waiting_on() const { return waiting_on_; }
  bool ended(std::size_t op) const { return state_[op] == kEnded; }
  EngineOutput take() { return std::move(out_); }
  const EngineOutput& output() const { return out_; }

 private:
  std::size_t table_devices() const { return t_.device_begin.size() - 1; }

  // Device d stops until `op` has ended; it waits in the list of the device that owns `op`.
  void wait_for(std::int32_t d, std::int32_t op) {
    const auto owner = static_cast<std::size_t>(class_of(op).device);
    waiting_on_[static_cast<std::size_t>(d)] = op;
    next_waiter_[static_cast<std::size_t>(d)] = waiter_head_[owner];
    waiter_head_[owner] = d;
  }

  // What a compute op of class `c` adds when its device idled for `idle` before it: its resume
  // cost and the idle slowdown (op_costs.h).
  Nanoseconds resumed(const OpClass& c, Nanoseconds idle) const {
    return c.resume_ns + idle_extra_ns(c.duration_ns, idle, t_.idle_slowdown, t_.idle_slowdown_after_ns);
  }

  // Some ops of `owner` have ended: wakes the devices that waited on one of them.
  void wake_waiters_of(std::size_t owner) {
    std::int32_t* link = &waiter_head_[owner];
    while (*link >= 0) {
      const auto w = static_cast<std::size_t>(*link);
      if (state_[static_cast<std::size_t>(waiting_on_[w])] != kEnded) {
        link = &next_waiter_[w];
        continue;
      }
      *link = next_waiter_[w];
      waiting_on_[w] = -1;
      worklist_.push_back(static_cast<std::int32_t>(w));
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

  // What advance() keeps of the device it runs while it runs it; written back when it stops.
  struct DeviceRun {
    std::int32_t p;                 // program position (op id)
    Nanoseconds free;               // its stream is free from
    Nanoseconds last_compute_end;   // end of its latest compute op
    Nanoseconds active_end;         // end of its latest compute op or send overhead
    Nanoseconds busy;               // the sum of its compute ops' durations
  };

  // Runs device d's program from its cursor until it must wait.
  // kGated: some stage has an UNSHARD, whose end its computes wait for (a separate loop: the
  // check cost every compute op of the schedules without one a few percent). kSlots: its
  // computes wait for a compute slot of their group (core_slots.h), in global time order.
  template <bool kGated, bool kSlots>
  void advance(std::int32_t d) {
    const auto di = static_cast<std::size_t>(d);
    const std::int32_t last = t_.device_begin[di + 1];
    DeviceRun run{cursor_[di], stream_free_[di], last_compute_end_[di], active_end_[di], out_.busy_ns[di]};
    while (run.p < last) {
      const Op op = ops_[static_cast<std::size_t>(run.p)];
      const OpClass& c = classes_[static_cast<std::size_t>(op.op_class)];
      const std::int32_t awaited = sched::is_compute(c.kind) ? run_compute<kGated, kSlots>(di, op, c, run)
                                   : sched::is_comm(c.kind)  ? pass_transfer(op, c, run)
                                                             : run_stage_level(di, op, c, run);
      if (awaited >= 0) {
        wait_for(d, awaited);
        break;
      }
    }
    cursor_[di] = run.p;
    stream_free_[di] = run.free;
    last_compute_end_[di] = run.last_compute_end;
    active_end_[di] = run.active_end;
    out_.busy_ns[di] = run.busy;
    prefetch_from(run.p, last);
    wake_waiters_of(di);
  }

  // Runs the compute op at run.p and moves past it; or returns the dependency it waits for (with
  // compute slots: the op itself, from when it is ready until on_compute_ready placed it).
  template <bool kGated, bool kSlots>
  [[gnu::always_inline]] std::int32_t run_compute(std::size_t di, const Op& op, const OpClass& c, DeviceRun& run) {
    const auto pi = static_cast<std::size_t>(run.p);
    if constexpr (kSlots) {
      if (state_[pi] == kEnded) return take_placed(di, c, run);
    }
    Nanoseconds s = run.free;
    if (op.dep >= 0) {
      // The first dependency of an R, B, I or W is an op of its own stage (F, R or I), so of its
      // own device; one earlier in the program ended by run.free, which never decreases. Not
      // reading its time saves a cache miss per backward: its forward ran long before.
      if (c.kind == ActionKind::kForward || op.dep >= run.p) {
        if (state_[static_cast<std::size_t>(op.dep)] != kEnded) return op.dep;
        s = std::max(s, time_[static_cast<std::size_t>(op.dep)].end_ns);
      }
      if (op.other >= 0) {
        if (state_[static_cast<std::size_t>(op.other)] != kEnded) return op.other;
        s = std::max(s, time_[static_cast<std::size_t>(op.other)].end_ns);
      }
    }
    if constexpr (kGated) s = std::max(s, gate_[static_cast<std::size_t>(c.stage)]);  // its UNSHARD's end
    if constexpr (kSlots) {
      state_[pi] = kStarted;
      time_[pi].start_ns = s;
      continuing_[di] = s <= run.active_end;  // it never idled since its last action: it may keep its slot
      queue_.push(Event{s, EventQueue::order_of(kPhaseCompute, static_cast<std::uint32_t>(run.p))});
      return run.p;
    }
    const Nanoseconds duration = c.duration_ns + (s > run.active_end ? resumed(c, s - run.active_end) : 0);
    run.free = s + duration;
    time_[pi] = OpTime{s, run.free};
    state_[pi] = kEnded;
    run.last_compute_end = run.free;
    run.active_end = run.free;
    run.busy += duration;
    if (c.memory_delta_bytes != 0) add_memory(di, run.free, c.memory_delta_bytes);
    ++run.p;
    return -1;
  }

  // A compute op that on_compute_ready placed while its device waited: the device takes its time.
  [[gnu::noinline]] std::int32_t take_placed(std::size_t di, const OpClass& c, DeviceRun& run) {
    const OpTime t = time_[static_cast<std::size_t>(run.p)];
    run.free = t.end_ns;
    run.last_compute_end = run.free;
    run.active_end = run.free;
    run.busy += t.end_ns - t.start_ns;
    if (c.memory_delta_bytes != 0) add_memory(di, run.free, c.memory_delta_bytes);
    ++run.p;
    return -1;
  }

  // Compute op `op` is ready at `ready`: it starts on a slot of its group, or waits for one in
  // the order the queue pops ready times (core_slots.h).
  void on_compute_ready(std::int32_t op, Nanoseconds ready) {
    const auto d = class_of(op).device;
    const auto group = static_cast<std::size_t>(t_.slot_group[static_cast<std::size_t>(d)]);
    const CoreSlots::Claim claim = slots_.claim(group, d, op, ready);
    if (claim.start_on >= 0) place(op, claim.start_on, ready);
    if (claim.yielded >= 0) hand_over(claim.yielded, ready);
  }

  // Compute op `op` ended at `at`: its slot goes to the longest waiter unless its device keeps it.
  void on_slot_release(std::int32_t op, Nanoseconds at) {
    const auto d = class_of(op).device;
    const std::int32_t slot = slots_.release(d, op, at, continuing_[static_cast<std::size_t>(d)] != 0);
    if (slot >= 0) hand_over(slot, at);
  }

  void hand_over(std::int32_t slot, Nanoseconds at) {
    if (const std::int32_t next = slots_.next_waiter(slot); next >= 0) place(next, slot, at);
  }

  // Compute op `op` runs on `slot` from `start`; its device, waiting for it, wakes.
  void place(std::int32_t op, std::int32_t slot, Nanoseconds start) {
    const OpClass& c = class_of(op);
    const auto d = static_cast<std::size_t>(c.device);
    const Nanoseconds end = start + c.duration_ns + (start > active_end_[d] ? resumed(c, start - active_end_[d]) : 0);
    slots_.occupy(slot, c.device, op, start);
    time_[static_cast<std::size_t>(op)] = OpTime{start, end};
    state_[static_cast<std::size_t>(op)] = kEnded;
    continuing_[d] = 0;
    queue_.push(Event{end, EventQueue::order_of(kPhaseRelease, static_cast<std::uint32_t>(op))});
    wake_waiters_of(d);
  }

  // The stage-level op at run.p (UNSHARD, RESHARD, REDUCE_GRAD), timed as engine.h says; the
  // device moves on. It is no compute: the next one's resume cost is as without it.
  [[gnu::noinline]] std::int32_t run_stage_level(std::size_t di, const Op& op, const OpClass& c, DeviceRun& run) {
    const auto pi = static_cast<std::size_t>(run.p);
    Nanoseconds& lane = collective_free_[di];
    OpTime t{run.free, run.free};
    if (c.kind == ActionKind::kReduceGrad) {
      const bool takes_turns = c.link >= 0 && c.link_shared == 0;  // a link of this device's sends alone
      t = reduce_grad_interval(op, c, run.free, takes_turns ? std::max(lane, link_free_[static_cast<std::size_t>(c.link)]) : lane);
      if (takes_turns) {
        Nanoseconds& link = link_free_[static_cast<std::size_t>(c.link)];
        link = std::max(link, t.start_ns + c.resume_ns);
      }
      if (!t_.overlap_grad_reduce) run.free = t.end_ns;
    } else if (c.kind == ActionKind::kUnshard) {
      t.start_ns = std::max(run.free, lane);
      t.end_ns = t.start_ns + c.duration_ns;
      const auto s = static_cast<std::size_t>(c.stage);
      gate_[s] = t.end_ns;
      if (unsharded_[s] == 0 && c.memory_delta_bytes > 0) {
        unsharded_[s] = c.memory_delta_bytes;
        add_memory(di, run.free, c.memory_delta_bytes);  // allocated when issued
      }
    } else if (!unsharded_.empty() && unsharded_[static_cast<std::size_t>(c.stage)] > 0) {  // RESHARD
      add_memory(di, run.free, -unsharded_[static_cast<std::size_t>(c.stage)]);
      unsharded_[static_cast<std::size_t>(c.stage)] = 0;
    }
    if (c.kind != ActionKind::kReshard) {
      lane = t.end_ns;
      out_.collective_ns[di] += c.duration_ns;  // the collective's own time, not its waits for buckets
    }
    time_[pi] = t;
    state_[pi] = kEnded;
    ++run.p;
    return -1;
  }

  // REDUCE_GRAD's interval on a lane free from `lane` (engine.h): its buckets follow the stage's
  // last backward (op.dep, on this device and ended), or start at the stream's free point without
  // overlap or without one.
  OpTime reduce_grad_interval(const Op& op, const OpClass& c, Nanoseconds stream_free, Nanoseconds lane) const {
    const Nanoseconds r = c.duration_ns;
    if (!t_.overlap_grad_reduce || op.dep < 0) {
      const Nanoseconds start = std::max(stream_free, lane);
      return {start, start + r};
    }
    const OpTime backward = time_[static_cast<std::size_t>(op.dep)];
    const Nanoseconds b = t_.reduce_grad_buckets[static_cast<std::size_t>(c.stage)];
    const Nanoseconds start = std::max(lane, backward.start_ns + (backward.end_ns - backward.start_ns) / b);
    return {start, std::max(start + r, backward.end_ns + (r + b - 1) / b)};
  }

  // The SEND or RECV at run.p: moves past it when the device may (returns -1), else returns the op
  // the device waits for (the producer, or the op itself until its transfer ends).
  [[gnu::always_inline]] std::int32_t pass_transfer(const Op& op, const OpClass& c, DeviceRun& run) {
    const std::int32_t p = run.p;
    const auto pi = static_cast<std::size_t>(p);
    OpTime& time = time_[pi];
    OpState& state = state_[pi];
    if (blocking_ && state == kEnded) {  // our rendezvous finished: the stream was held until its end
      run.free = time.end_ns;
      ++run.p;
      return -1;
    }
    if (sched::is_send(c.kind)) {
      if (state_[static_cast<std::size_t>(op.dep)] != kEnded) return op.dep;
      const Nanoseconds produced = time_[static_cast<std::size_t>(op.dep)].end_ns;
      if (!blocking_) {  // the sender's stream is held for the send overhead, then the data leaves
        const Nanoseconds posted = std::max(run.free, produced) + c.resume_ns;
        if (c.resume_ns > 0) run.free = run.active_end = posted;
        post_ready(p, posted);
        ++run.p;
        return -1;
      }
      if (state == kPending) {
        state = kStarted;
        time.start_ns = std::max(run.free, produced);
        const auto other = static_cast<std::size_t>(op.other);
        if (state_[other] == kStarted) post_ready(p, std::max(time.start_ns, time_[other].start_ns));
      }
    } else {  // RECV
      if (eager_) {  // the stream waits here until the data has arrived
        if (state != kEnded) return p;
        run.free = std::max(run.free, time.end_ns);
        ++run.p;
        return -1;
      }
      if (!blocking_) {
        ++run.p;
        return -1;
      }
      if (state == kPending) {
        state = kStarted;
        time.start_ns = run.free;
        const auto other = static_cast<std::size_t>(op.other);
        if (state_[other] == kStarted) post_ready(op.other, std::max(run.free, time_[other].start_ns));
      }
    }
    if (state != kEnded) return p;
    run.free = time.end_ns;  // placed at once (its link is not shared): held until its end
    ++run.p;
    return -1;
  }

  // The device resumes at `p` after other devices ran: its next records are brought into cache
  // meanwhile (64 devices' programs are too many streams for the hardware prefetcher).
  void prefetch_from(std::int32_t p, std::int32_t last) const {
    constexpr std::int32_t kPerLine = 64 / sizeof(Op);
    if (p >= last) return;
    __builtin_prefetch(&ops_[static_cast<std::size_t>(p)]);
    __builtin_prefetch(&time_[static_cast<std::size_t>(p)]);
    if (p + kPerLine >= last) return;
    __builtin_prefetch(&ops_[static_cast<std::size_t>(p + kPerLine)]);
    __builtin_prefetch(&time_[static_cast<std::size_t>(p + kPerLine)]);
  }

  // The transfer of `send` may start at `ready` as far as its two ends are concerned.
  void post_ready(std::int32_t send, Nanoseconds ready) {
    const OpClass& c = class_of(send);
    if (c.link_shared == 0) {
      start_transfer(send, std::max(ready, link_free_[static_cast<std::size_t>(c.link)]));
      return;
    }
    queue_.push(Event{ready, EventQueue::order_of(kPhaseReady, static_cast<std::uint32_t>(send))});
  }

  void on_ready(std::int32_t send, Nanoseconds now) {
    const auto link = static_cast<std::size_t>(class_of(send).link);
    if (waiting_sends_.empty(link) && link_free_[link] <= now) {
      start_transfer(send, now);
      return;
    }
    waiting_sends_.push(link, send);
    if (waiting_sends_.arm(link)) {
      queue_.push(Event{link_free_[link], EventQueue::order_of(kPhaseDispatch, static_cast<std::uint32_t>(link))});
    }
  }

  void on_dispatch(std::int32_t link_id, Nanoseconds now) {
    const auto link = static_cast<std::size_t>(link_id);
    start_transfer(waiting_sends_.pop(link), now);
    if (!waiting_sends_.empty(link)) {
      queue_.push(Event{link_free_[link], EventQueue::order_of(kPhaseDispatch, static_cast<std::uint32_t>(link))});
    } else {
      waiting_sends_.disarm(link);
    }
  }

  void start_transfer(std::int32_t send, Nanoseconds now) {
    const auto s = static_cast<std::size_t>(send);
    const auto r = static_cast<std::size_t>(ops_[s].other);
    const OpClass& c = class_of(send);
    const Nanoseconds finish = now + c.duration_ns;
    // Two stores of one value: `time_[s] = time_[r] = ...` reloaded time_[r] as one 16-byte
    // load just after its two 8-byte stores, which the store buffer cannot forward.
    const OpTime interval{now, finish};
    time_[r] = interval;
    time_[s] = interval;
    state_[s] = state_[r] = kEnded;
    link_free_[static_cast<std::size_t>(c.link)] = finish;
    latest_transfer_end_ = std::max(latest_transfer_end_, finish);
    ++transfers_done_;
    wake_waiters_of(static_cast<std::size_t>(c.device));
    wake_waiters_of(static_cast<std::size_t>(class_of(static_cast<std::int32_t>(r)).device));
  }

  const OpClass& class_of(std::int32_t op) const {
    return classes_[static_cast<std::size_t>(ops_[static_cast<std::size_t>(op)].op_class)];
  }

  const OpTable& t_;
  const Op* ops_;
  const OpClass* classes_;
  bool blocking_;
  bool eager_;
  bool record_;
  EngineOutput out_;
  OpTime* time_ = nullptr;
  std::vector<OpState> state_;
  std::vector<std::int32_t> cursor_;
  std::vector<Nanoseconds> stream_free_;
  std::vector<Nanoseconds> last_compute_end_;  // per device: end of its latest compute op (0 before)
  std::vector<Nanoseconds> active_end_;        // per device: ... or of its latest send overhead
  std::vector<std::int32_t> waiting_on_;   // per device: the op it waits for, -1 when not waiting
  std::vector<std::int32_t> waiter_head_;  // per device: first device waiting on one of its ops
  std::vector<std::int32_t> next_waiter_;  // per device: next device in the same list
  std::vector<Bytes> held_;
  std::vector<Nanoseconds> link_free_;
  std::vector<Nanoseconds> collective_free_;  // per device: its collective lane is free from
  std::vector<Nanoseconds> gate_;             // per stage: end of its latest UNSHARD (empty: none)
  std::vector<Bytes> unsharded_;              // per stage: gathered bytes held until its RESHARD
  Nanoseconds latest_transfer_end_ = 0;
  std::int64_t transfers_done_ = 0;
  LinkQueue waiting_sends_;  // only with shared links
  std::vector<std::int32_t> worklist_;
  EventQueue queue_;
  CoreSlots slots_;  // only with compute slots
  std::vector<std::uint8_t> continuing_;  // per device, with compute slots: its pending compute op was
                                          // ready when it became free (it may keep its slot)
};

}  // namespace

sched::Result<EngineOutput> run_engine(const OpTable& table, const sched::Schedule& schedule, std::size_t num_links,
                                       CommMode mode, bool record_memory) {
  Engine engine(table, num_links, mode, record_memory);
  engine.run();
  if (!engine.complete()) {
    StuckState state{engine.cursor(), engine.waiting_on(), std::vector<bool>(table.size())};
    for (std::size_t i = 0; i < table.size(); ++i) state.ended[i] = engine.ended(i);
    return sched::Error{fmt::format("schedule cannot progress: {}", stuck_message(state, table, schedule))};
  }
  const Nanoseconds makespan = engine.makespan();
  std::vector<Nanoseconds> ends;
  for (std::size_t d = 0; d + 1 < table.device_begin.size(); ++d) ends.push_back(engine.device_end(d));
  const Nanoseconds compute_end = engine.compute_end();
  EngineOutput out = engine.take();
  out.makespan_ns = makespan;
  out.end_ns = std::move(ends);
  out.compute_end_ns = compute_end;
  return out;
}

}  // namespace pipeworks::sim
