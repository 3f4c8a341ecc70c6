// What a rank's c10d backend decides: where the rank computes (ComputeDevices) and how it reaches
// the other ranks (C10dGroup). gloo: the CPU and a Gloo group; nccl: GPU LOCAL_RANK (modulo the
// GPUs present) and an NCCL group. The only file of hw/dist/ that names hw/cuda/, so the
// multi-process run itself has one code path for both (compute_devices.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "hw/dist/backend.h"
#include "hw/dist/c10d_group.h"
#include "hw/dist/distributed_env.h"
#include "hw/exec/compute_devices.h"
#include "sched/result.h"

namespace pipeworks::hw {


// gloo: every device on the CPU (cpu_devices()). nccl: this rank's device on its
// GPU (cuda::rank_gpu_devices), an error without a visible GPU.
sched::Result<std::unique_ptr<ComputeDevices>> rank_compute_devices(const DistributedEnv& env,
                                                                    Backend backend);

// gloo: connect_gloo; nccl: cuda::connect_nccl. Waits at most `timeout` for the other ranks.
sched::Result<C10dGroup> connect_backend(const DistributedEnv& env, Backend backend,
                                         std::chrono::milliseconds timeout);

}  // namespace pipeworks::hw
