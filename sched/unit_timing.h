// Unit-time execution of a schedule: every compute action takes one step, SEND/RECV and the
// stage-level actions take none (a RECV completes once its SEND has been reached). Each device
// runs its program in order and starts an action as soon as its data dependencies are done. A
// composite (sched/composite.h) starts once both sub-actions' dependencies are done, runs them
// back to back, and hands on what either produced when it ends, as torch posts a composite's
// sends after it. This is the step x device picture behind the text grid and the time order the
// comm-lowering pass relies on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched {

struct UnitTiming {
  // start[device][position]: the step at which that action starts.
  std::vector<std::vector<std::int64_t>> start;
  // finish[device][position]: the step from which its results are available to other actions:
  // its end, or the end of the composite it is part of.
  std::vector<std::vector<std::int64_t>> finish;
  std::int64_t num_steps = 0;  // makespan in steps
  // How many times a device was tried for its next cell: at most one per cell it ran plus one
  // per wait and one per device, so it grows with the actions, not with devices x steps.
  std::int64_t device_steps_tried = 0;
};

// Fails (with the blocked next action of every device) when the schedule cannot progress, or
// when an action is out of range for the schedule's stages and micro-batches.
Result<UnitTiming> unit_timing(const Schedule& schedule);

}  // namespace pipeworks::sched
