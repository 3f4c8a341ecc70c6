// The GPUs as ComputeDevices (compute_devices.h), built only with a CUDA LibTorch: pipeline
// device d computes on GPU d % gpus, actions are timed with CUDA events (event_action_clock.h),
// hand-offs are device-to-device copies on copy streams (cuda_copy_transport.h), and memory is
// the caching allocator's (cuda_device.h). A rank of a multi-process run sees one GPU: its own
// device's (rank_gpu_devices).
#pragma once

#include <memory>

#include "hw/exec/compute_devices.h"
#include "sched/result.h"

namespace pipeworks::hw::cuda {

// An error when no GPU is visible.
sched::Result<std::unique_ptr<ComputeDevices>> gpu_devices();

// One rank's view (hw/dist/): pipeline device `device` computes on GPU `gpu`, timed and metered
// there; the other devices are other processes' (their cells stay on the CPU, unmetered, never
// synchronized). No hand-off of its own: the rank's transport is c10d's (transport() is null).
std::unique_ptr<ComputeDevices> rank_gpu_devices(int device, int gpu);

}  // namespace pipeworks::hw::cuda
