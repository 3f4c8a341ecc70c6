// The in-process training run on GPUs (device_support.h's run_training_cuda): the loop of
// run.h's run_training with cells, micro-batches and transfers on CUDA devices.
#pragma once

#include <functional>

#include "hw/run.h"

namespace pipeworks::hw::cuda {

sched::Result<RunReport> run_training_on_gpus(const RunConfig& config,
                                              const std::function<void(const StepStats&)>& on_step);

}  // namespace pipeworks::hw::cuda
