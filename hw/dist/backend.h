// The c10d backend of a multi-process run as a type (LibTorch-free): Gloo for ranks on the CPU,
// NCCL for ranks on GPUs. It follows from the device kind (backend_for), so no text names it;
// its name is for people and the ranks' configuration summary (run_agreement.h).
#pragma once

#include <string_view>

#include "hw/exec/device_kind.h"
#include "sched/result.h"

namespace pipeworks::hw {

enum class Backend {
  kGloo,  // ranks on the CPU
  kNccl,  // a rank on its GPU (hw/cuda/, LibTorch with CUDA)
};

// "gloo", "nccl".
std::string_view backend_name(Backend backend);

// The backend of ranks computing on `device`: Gloo on the CPU, NCCL on CUDA GPUs.
Backend backend_for(DeviceKind device);

// An error unless this build drives `backend` (NCCL needs a LibTorch with CUDA).
sched::Status check_backend(Backend backend);

}  // namespace pipeworks::hw
