// The times the list rule and the lower bound work with, read once from a cost model: each
// stage's F, I, W (or B where its backward has no W to split off), each with the per-action
// overhead the simulator adds, and the hand-off from a stage's result to its neighbour's start.
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

struct SynthStageTimes {
  bool split = true;               // I then W; false: one B
  Nanoseconds forward_ns = 0;      // F + overhead
  Nanoseconds input_grad_ns = 0;   // I + overhead (split stages)
  Nanoseconds weight_grad_ns = 0;  // W + overhead (split stages)
  Nanoseconds backward_ns = 0;     // B + overhead (stages without split)
  Nanoseconds first_forward_ns = 0;   // the stage's first F of the step + overhead
  Nanoseconds first_backward_ns = 0;  // its first B of the step + overhead (stages without split)
  // From this stage's F end to stage s+1's F start at the earliest, and from stage s+1's
  // backward end to this stage's backward start (0 on the last stage).
  Nanoseconds handoff_forward_ns = 0;
  Nanoseconds handoff_backward_ns = 0;
  Nanoseconds tail_ns = 0;  // after the device's program: optimizer step + parameter all-gather
  // A re-materialized micro-batch's F (no graph kept) and its R, + overhead; 0: no such cost
  // known (the F is an ordinary F, there is no R)
  Nanoseconds forward_no_grad_ns = 0;
  Nanoseconds recompute_ns = 0;
};

// A stage splits its backward where its W costs something: a stage without weights (W = 0) runs B.
bool stage_splits_backward(const StageCost& cost);

// Per stage (stage s on device s). The hand-off is the simulator's rule for one transfer of the
// stage's output (engine.h): overlap and eager mode hold the sender's stream for the link's send
// overhead o, then the transfer takes latency + bytes / bandwidth; blocking mode adds no o.
sched::Result<std::vector<SynthStageTimes>> synth_stage_times(const CostModel& costs);

// The same with stage s on device placement[s]: a hand-off between two stages on one device costs
// nothing (the cost model has no link from a device to itself, and lower_comm sends nothing there:
// the next stage reads the result where it is).
sched::Result<std::vector<SynthStageTimes>> synth_stage_times(const CostModel& costs,
                                                             const std::vector<int>& placement);

}  // namespace pipeworks::sim
