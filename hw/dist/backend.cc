// The backend's name, its choice by device kind, and whether this build drives it (backend.h).
#include "hw/dist/backend.h"

namespace pipeworks::hw {

std::string_view backend_name(Backend backend) { return backend == Backend::kNccl ? "nccl" : "gloo"; }

Backend backend_for(DeviceKind device) { return device == DeviceKind::kCuda ? Backend::kNccl : Backend::kGloo; }

sched::Status check_backend(Backend backend) {
  if (backend == Backend::kNccl && !PIPEWORKS_HAVE_CUDA) {
    return sched::Error{"backend nccl needs a LibTorch with CUDA; this build has none (use gloo on the CPU)"};
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
