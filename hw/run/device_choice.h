// The ComputeDevices of a device kind: the CPU's (hw/exec/) or CUDA GPUs' (hw/cuda/, compiled only
// with a CUDA LibTorch). It lives here, above both, so that hw/exec/ never includes hw/cuda/.
#pragma once

#include <memory>

#include "hw/exec/compute_devices.h"
#include "sched/result.h"

namespace pipeworks::hw {

// The CPU's, or CUDA GPUs' (an error when this build has no CUDA or no GPU is visible).
sched::Result<std::unique_ptr<ComputeDevices>> make_compute_devices(DeviceKind kind);

}  // namespace pipeworks::hw
