// The GPUs as ComputeDevices (compute_devices.h), built only with a CUDA LibTorch: pipeline
// device d computes on GPU d % gpus, actions are timed with CUDA events (event_action_clock.h),
// hand-offs are device-to-device copies on copy streams (cuda_copy_transport.h), and memory is
// the caching allocator's (cuda_device.h).
#pragma once

#include <memory>

#include "hw/compute_devices.h"
#include "sched/result.h"

namespace pipeworks::hw::cuda {

// An error when no GPU is visible.
sched::Result<std::unique_ptr<ComputeDevices>> gpu_devices();

}  // namespace pipeworks::hw::cuda
