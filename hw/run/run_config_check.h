// Everything about a RunConfig that can be checked before any model is built or any line is
// printed: sizes against run_limits.h and sched/limits.h, the batch against the micro-batches,
// the partition and placement against the model's layers, the model's knobs, the learning rate.
// `run` answers a failure as bad usage (exit 2); the library checks the same again where it
// builds. LibTorch-free.
#pragma once

#include "hw/run/run.h"
#include "sched/result.h"

namespace pipeworks::hw {

sched::Status check_run_config(const RunConfig& config);

}  // namespace pipeworks::hw
