// The discrete-event core of the simulator: runs a compiled OpTable and returns raw times per
// op. simulator.h wraps it into the public SimResult.
//
// Time advances per device in program order; only arbitration of a link that several devices
// send on needs global time order, so devices run ahead greedily and only those transfers go
// through the event queue:
//
//   compute op   start = max(stream free, end of each data dependency); end = start + duration,
//                + its resume cost and its idle slowdown (op_costs.h's idle_extra_ns of the idle
//                time) when it starts after its device's previous compute op (or send overhead)
//                ended (the device idled: it waited for data or held its stream for a
//                transfer). With compute slots (CostModel::compute_slots, workers sharing
//                a CPU node's cores) it is ready then and starts on a slot of its group: the
//                one its device holds while its time slice lasts, else a free one, else when
//                one is handed to it, the longest waiter first in global time order (through
//                the event queue; core_slots.h); waiting for a slot is idling
//   transfer     ready (kOverlap)  = max(SEND reached, producer end) + o, the sender's stream
//                                    held for o (its link's send overhead, LogP's o) -- RECV is
//                                    a post that does not hold the stream; the consumer waits
//                                    for the end
//                ready (kBlocking) = max(SEND reached with data, RECV reached); both streams
//                                    are held until the end
//                ready (kEager)    = as kOverlap, but the RECV holds its stream until the end:
//                                    whatever follows it in the program starts after the data
//                (kBlocking holds both streams for the whole transfer; o is not added there)
//                start = max(ready, link free), FIFO per link in (ready time, SEND op id) order
//   UNSHARD      on the device's collective lane: start = max(stream free, lane free),
//                end = start + duration; its stage's later computes start after its end
//   RESHARD      start = end = stream free
//   REDUCE_GRAD  on the collective lane, beside the compute (overlap_grad_reduce): the stage's
//                last backward [bs, be] produces b buckets evenly, bucket i ready at
//                bs + i (be - bs) / b, each taking r / b of the collective's r; FIFO on the lane:
//                  start = max(lane free, bs + (be - bs) / b)
//                  end   = max(start + r, be + ceil(r / b))
//                (b = 1: after the backward.) Without overlap it holds the stream:
//                start = max(stream free, lane free), end = start + r = stream free.
//                A reduction that drives a link its device sends on alone (its NIC,
//                StageCost::reduce_grad_link) also starts after that link is free, and holds it
//                for its inter-node part from its start: sends and reduction take turns
//
//   REDUCE_GRAD, b = 4, r = 4, a last backward of 8:   d0   |B.......|F...
//                                                    lane   [.r.r.r.r]      bs + 2 .. be + 1
//
// A link that only one device sends on (the usual one link per ordered device pair) needs no
// queue: that device reaches its SENDs in program order with non-decreasing ready times, so the
// FIFO order is program order and the transfer is placed the moment both ends are known.
//
//   overlap, K=2:    d0 |F0|F1|            kBlocking:  d0 |F0|SEND0|F1|SEND1|
//                   link   |x0|x1|                      d1     |RECV0|F0|RECV1|F1|
//                     d1      |F0|F1|
//
//   overlap with a send overhead o:   d0 |F0|o|F1|o|
//                                   link       |x0|  |x1|
//                                     d1          |F0|  |F1|
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "sched/timeline.h"
#include "sim/engine/op_table.h"

namespace pipeworks::sim {

// An op's interval: a compute op's run; a SEND's and a RECV's transfer on the link. (No member
// initializers: the engine allocates them uninitialized and writes each before reading it.)
struct OpTime {
  Nanoseconds start_ns;
  Nanoseconds end_ns;
};

// A std::allocator whose default construction leaves trivial values uninitialized: filling the
// times of 10^5-10^6 ops before the engine writes each of them cost one more pass over memory.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>& /*other*/) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct EngineOutput {
  // Per op; start and end side by side (the loop reads both). Every entry is written when the
  // engine succeeds; run_engine returns no output otherwise.
  std::vector<OpTime, UninitializedAllocator<OpTime>> times;
  std::vector<Bytes> peak_activation_bytes;  // per device
  std::vector<Nanoseconds> busy_ns;          // per device: the sum of its compute ops' durations
  std::vector<Nanoseconds> collective_ns;    // per device: the sum of its collectives' own durations
  std::vector<Nanoseconds> end_ns;           // per device: its stream and collective lane free
  Nanoseconds compute_end_ns = 0;            // the latest end of a compute op
  // Per device, only when asked for: held bytes (static + activations) at every change.
  std::vector<std::vector<sched::MemorySample>> memory;
  Nanoseconds makespan_ns = 0;  // latest end (time starts at 0)
};

// Fails when the schedule cannot progress, naming every device's blocked op and what it waits
// for. `schedule` is the one `table` was built from (used for messages only).
sched::Result<EngineOutput> run_engine(const OpTable& table, const sched::Schedule& schedule, std::size_t num_links,
                                       CommMode mode, bool record_memory);

}  // namespace pipeworks::sim
