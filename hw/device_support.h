// Which accelerators this build drives, for the CLI (LibTorch-free): `--device cuda` runs on
// GPUs when the LibTorch pipeworks was built against has CUDA (hw/cuda/), and is a clear
// error otherwise.
#pragma once

#include <functional>

#include "hw/run.h"

namespace pipeworks::hw {

// True when hw/cuda/ was compiled in (the found LibTorch has CUDA).
bool built_with_cuda();

// The in-process run with stage cells on GPUs (device d of the placement on GPU d modulo the
// GPUs present), device-to-device copies between them on copy streams, peak memory per device
// from the CUDA caching allocator. Without CUDA: an error saying so.
sched::Result<RunReport> run_training_cuda(const RunConfig& config,
                                           const std::function<void(const StepStats&)>& on_step = {});

}  // namespace pipeworks::hw
