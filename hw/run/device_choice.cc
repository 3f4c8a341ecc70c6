// The choice of ComputeDevices by name (see device_choice.h).
#include "hw/run/device_choice.h"

#include <fmt/format.h>

#include "hw/run/device_support.h"

#if PIPEWORKS_HAVE_CUDA
#include "hw/cuda/gpu_devices.h"
#endif

namespace pipeworks::hw {

sched::Result<std::unique_ptr<ComputeDevices>> make_compute_devices(const std::string& name) {
  if (auto known = check_device_name(name); !known) return known.error();
  if (name == "cpu") return cpu_devices();
  if (name == "cuda") {
#if PIPEWORKS_HAVE_CUDA
    return cuda::gpu_devices();
#else
    return sched::Error{"--device cuda: this pipeworks was built against a LibTorch without CUDA; rebuild against a "
                        "CUDA LibTorch (e.g. the one inside a CUDA PyTorch: bench/gpu_check)"};
#endif
  }
  return sched::Error{fmt::format("device '{}' has no ComputeDevices", name)};
}

}  // namespace pipeworks::hw
