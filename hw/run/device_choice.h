// The ComputeDevices a device name asks for: "cpu" (hw/exec/) or "cuda" (hw/cuda/, compiled only
// with a CUDA LibTorch). It lives here, above both, so that hw/exec/ never includes hw/cuda/.
#pragma once

#include <memory>
#include <string>

#include "hw/exec/compute_devices.h"
#include "sched/result.h"

namespace pipeworks::hw {

// "cpu", or "cuda" (an error when this build has no CUDA or no GPU is visible).
sched::Result<std::unique_ptr<ComputeDevices>> make_compute_devices(const std::string& name);

}  // namespace pipeworks::hw
