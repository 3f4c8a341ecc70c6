// The choice of ComputeDevices by device kind (see device_choice.h).
#include "hw/run/device_choice.h"

#include <fmt/format.h>

#if PIPEWORKS_HAVE_CUDA
#include "hw/cuda/gpu_devices.h"
#endif

namespace pipeworks::hw {

sched::Result<std::unique_ptr<ComputeDevices>> make_compute_devices(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return cpu_devices();
    case DeviceKind::kCuda:
#if PIPEWORKS_HAVE_CUDA
      return cuda::gpu_devices();
#else
      return sched::Error{"--device cuda: this pipeworks was built against a LibTorch without CUDA; rebuild against a "
                          "CUDA LibTorch (e.g. the one inside a CUDA PyTorch: bench/gpu_check)"};
#endif
  }
  return sched::Error{fmt::format("device kind {} has no ComputeDevices", static_cast<int>(kind))};
}

}  // namespace pipeworks::hw
