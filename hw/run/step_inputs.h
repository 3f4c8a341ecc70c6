// One training step's inputs, made the same way wherever a schedule is stepped -- the run, the
// measured run of `run --predict`, each rank of a distributed run, the stage replay: the step's
// seed (step_seed, the one seed rule), its mini-batch, split into the schedule's micro-batches
// and placed where the schedule consumes them. Step k of any of them sees the same data.
#pragma once

#include <cstdint>

#include "hw/exec/compute_devices.h"
#include "hw/model/model_zoo.h"
#include "hw/run/run.h"
#include "sched/result.h"
#include "sched/schedule.h"

namespace pipeworks::hw {

struct StepInputs {
  std::uint64_t seed = 0;  // the executor's (dropout) and the batch's
  // The whole mini-batch's M x dp micro-batches on the CPU, as the reference takes them; replica
  // r's are [r M, (r+1) M): its samples [r B/dp, (r+1) B/dp) (docs/data_parallel.md).
  MicroBatches microbatches;
  MicroBatches placed;  // `replica`'s M: inputs on stage 0's device, targets on the last stage's
};

// Step `step`'s inputs (0 is the first step after any warm-up the caller counts in) for data-
// parallel replica `replica` of config.data_parallel.
sched::Result<StepInputs> step_inputs(const RunConfig& config, const ComputeDevices& where,
                                      const sched::Schedule& schedule, int step, int replica = 0);

}  // namespace pipeworks::hw
