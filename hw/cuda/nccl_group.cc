// NCCL process group over the TCPStore (see nccl_group.h).
#include "hw/cuda/nccl_group.h"

#include <cstdlib>

#include <fmt/format.h>

#include "hw/cuda/cuda_device.h"

#if __has_include(<nccl.h>)
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define PIPEWORKS_HAVE_NCCL 1
#else
#define PIPEWORKS_HAVE_NCCL 0
#endif

namespace pipeworks::hw::cuda {

sched::Result<int> gpu_of_rank(const DistributedEnv& env) {
  const int gpus = device_count();
  if (gpus < 1) return sched::Error{fmt::format("rank {}: no CUDA device is visible", env.rank)};
  return env.local_rank % gpus;
}

sched::Result<C10dGroup> connect_nccl(const DistributedEnv& env, std::chrono::milliseconds timeout) {
#if PIPEWORKS_HAVE_NCCL
  auto gpu = gpu_of_rank(env);
  if (!gpu) return gpu.error();
  ::setenv("NCCL_BLOCKING_WAIT", "1", 0);
  ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", 0);
  auto group = connect_store(env, timeout);
  if (!group) return group.error();
  try {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    group->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(group->store, env.rank, env.world_size, options);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: cannot create the NCCL group of {} ranks: {}", env.rank,
                                    env.world_size, describe_c10d_exception(e))};
  }
  return group;
#else
  (void)timeout;
  return sched::Error{fmt::format("rank {}: this build found no nccl.h; the GPU multi-process path needs NCCL's "
                                  "headers (pip: nvidia-nccl-cu12, add its include/ to CMAKE_CXX_FLAGS)",
                                  env.rank)};
#endif
}

}  // namespace pipeworks::hw::cuda
