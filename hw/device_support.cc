// Dispatch to hw/cuda/ when it is compiled in (see device_support.h).
#include "hw/device_support.h"

#ifndef PIPEWORKS_HAVE_CUDA
#define PIPEWORKS_HAVE_CUDA 0  // set to 1 by hw/CMakeLists.txt when the LibTorch has CUDA
#endif

#if PIPEWORKS_HAVE_CUDA
#include "hw/cuda/cuda_run.h"
#endif

namespace pipeworks::hw {

bool built_with_cuda() { return PIPEWORKS_HAVE_CUDA != 0; }

sched::Result<RunReport> run_training_cuda(const RunConfig& config,
                                           const std::function<void(const StepStats&)>& on_step) {
#if PIPEWORKS_HAVE_CUDA
  return cuda::run_training_on_gpus(config, on_step);
#else
  (void)config;
  (void)on_step;
  return sched::Error{"--device cuda: this pipeworks was built against a LibTorch without CUDA; rebuild against a "
                      "CUDA LibTorch (e.g. the one inside a CUDA PyTorch: bench/gpu_check)"};
#endif
}

}  // namespace pipeworks::hw
