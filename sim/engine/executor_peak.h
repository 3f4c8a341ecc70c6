// The executor's peak per device, predicted by walking the simulated activation timeline with
// what the executor holds besides it: parameter gradients from the end of each stage's first
// backward in the step (the executor drops them at the step's start), backward temporaries on
// top while a backward, an I or a W runs (more in a stage's first, which makes the gradients
// layer by layer), a forward's temporaries above the level its end leaves, what an I keeps for
// its W, and input gradients a stage made that the previous stage has not consumed yet (counted
// where they were made: the in-process hand-off passes the tensor itself). On the first stage I
// computes nothing and W runs the whole backward from stage 1's gradient, which it consumes. A
// stage's output stays in the next stage's graph until that stage's B or W; after a W on another
// device the walk keeps it as long as the schedule's order allows, not only as simulated. Under
// re-materialization a stage's F output (the simulator keeps it until the stage's B) goes when
// the next stage drops it. The temporaries are each stage's StageCost::extra (cost_model.h).
//
//   d0 (K=1, GPipe, M=2):  F0      F1      [B0 first ......][B1 later ...]
//   simulated level:       +stash  +stash                 -stash        -stash
//   probe at B0's start:   level + first(s)                  (no gradients yet)
//   probe at B1's start:   level + grads(s) + later(s)       (gradients exist from B0's end)
//   probe at F0's end:     level + forward(s)                (forward_no_grad when R(s,.) exists)
//   peak(d) = max(every level + grads + held input gradients, every probe)
#pragma once

#include <vector>

#include "sched/schedule.h"
#include "sched/timeline.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// `timeline.memory` as the simulator writes it (per device in time order, the first sample the
// device's static bytes at time 0); sizes from `costs` (grad_bytes, output_bytes, extra). Returns
// per device the peak above the step's start.
std::vector<Bytes> walk_peak_memory(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                    const CostModel& costs);

// Per device, the most a run of the schedule holds: its parameters and optimizer state (held
// before the step) plus walk_peak_memory (gradients, stashes, temporaries). `timeline` is the
// simulation of `schedule` on `costs`.
std::vector<Bytes> executor_peak_bytes(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                       const CostModel& costs);

}  // namespace pipeworks::sim
