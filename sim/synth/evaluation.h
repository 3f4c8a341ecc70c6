// One candidate schedule judged the way `pipeworks simulate --schedule-file` would judge it:
// lowered with sched::lower_comm and simulated on the cost model; its peak is what a run of it
// would hold (sim/engine/executor_peak.h: parameters, optimizer state, gradients, stashes and the
// executor's temporaries of StageCost::extra), held against the cap on every device. The search
// compares candidates only through this.
#pragma once

#include <vector>

#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/engine/simulator.h"

namespace pipeworks::sim {

struct Evaluation {
  sched::Schedule schedule;  // compute only, as written to a file
  SimResult simulated;       // of the lowered schedule, without a timeline
  std::vector<Bytes> peak_bytes;  // per device: what a run holds at most (executor_peak_bytes)
  bool fits = false;         // every device's peak_bytes within its cap
  Nanoseconds step_ns() const { return simulated.step_ns; }
};

// An error when the schedule cannot be lowered or simulated (it cannot progress).
sched::Result<Evaluation> evaluate(sched::Schedule compute_only, const CostModel& costs,
                                   const std::vector<Bytes>& caps_bytes);

// What a run of it holds at most on `device` (0 for a device it does not have).
Bytes peak_on(const Evaluation& evaluation, int device);

// True when `a` is the better candidate: it fits and `b` does not, or both fit (or neither)
// and `a` has the shorter step.
bool better(const Evaluation& a, const Evaluation& b);

}  // namespace pipeworks::sim
