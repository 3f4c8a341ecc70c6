// Which accelerators this build drives, for the CLI (LibTorch-free): `--device cuda` (RunConfig's
// device, DeviceKind::kCuda) runs on GPUs when the LibTorch pipeworks was built against has CUDA
// (hw/cuda/), and is a clear error otherwise (device_choice.h).
#pragma once

#include <string>
#include <vector>

#include "hw/exec/device_kind.h"
#include "sched/result.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

// True when hw/cuda/ was compiled in (the found LibTorch has CUDA).
bool built_with_cuda();

// An error unless this build and this machine can compute on `device` (CUDA compiled in, a GPU
// visible): what a command checks before it starts on a device.
sched::Status check_device_available(DeviceKind device);

// Per pipeline device of a run on `device`: the memory it is metered in. On the
// CPU each device has its own counter; on GPUs device d's is GPU d % gpus, shared by the devices
// on that GPU (whose measured peak is then the GPU's). An error for a device this build cannot
// drive, or no GPU.
sched::Result<std::vector<int>> memory_domains(DeviceKind device, int num_devices);

// Per device: the sum of the peaks of every device in its domain -- what a predicted per-device
// peak becomes beside a measured one of a shared GPU (an upper bound: the devices' peaks need
// not coincide). Unchanged where every device has its own domain.
std::vector<sched::Bytes> shared_peaks(const std::vector<sched::Bytes>& peaks, const std::vector<int>& domains);

}  // namespace pipeworks::hw
