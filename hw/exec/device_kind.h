// The kinds of device a run or a profile computes on, as one type. `--device` text becomes a
// DeviceKind once, where it enters (parse_device_kind); everything below compares kinds, and
// the name comes back only for people and files (device_kind_name). LibTorch-free.
#pragma once

#include <string_view>

#include "sched/result.h"

namespace pipeworks::hw {

enum class DeviceKind {
  kCpu,   // a worker thread per pipeline device on this machine's cores
  kCuda,  // pipeline device d on GPU d % gpus (hw/cuda/)
};

// "cpu", "cuda".
std::string_view device_kind_name(DeviceKind kind);

// The kind `name` names ("cpu" or "cuda"), whether or not this build drives it
// (make_compute_devices says that); otherwise "device 'NAME' is not supported (cpu or cuda)".
sched::Result<DeviceKind> parse_device_kind(std::string_view name);

}  // namespace pipeworks::hw
