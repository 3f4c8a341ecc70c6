// A rank's devices and group by backend (see rank_backend.h).
#include "hw/dist/rank_backend.h"

#include <fmt/format.h>

#if PIPEWORKS_HAVE_CUDA
#include "hw/cuda/gpu_devices.h"
#include "hw/cuda/nccl_group.h"
#endif

namespace pipeworks::hw {

sched::Result<std::unique_ptr<ComputeDevices>> rank_compute_devices(const DistributedEnv& env,
                                                                    Backend backend) {
  if (backend != Backend::kNccl) return cpu_devices();
#if PIPEWORKS_HAVE_CUDA
  auto gpu = cuda::gpu_of_rank(env);
  if (!gpu) return gpu.error();
  return cuda::rank_gpu_devices(env.rank, *gpu);
#else
  return sched::Error{fmt::format("rank {}: no CUDA in this build", env.rank)};
#endif
}

sched::Result<C10dGroup> connect_backend(const DistributedEnv& env, Backend backend,
                                         std::chrono::milliseconds timeout) {
  if (backend != Backend::kNccl) return connect_gloo(env, timeout);
#if PIPEWORKS_HAVE_CUDA
  return cuda::connect_nccl(env, timeout);
#else
  (void)timeout;
  return sched::Error{fmt::format("rank {}: no CUDA in this build", env.rank)};
#endif
}

}  // namespace pipeworks::hw
