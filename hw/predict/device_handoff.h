// The hand-off between two pipeline devices whose work is queued (GPUs), for the machine profile:
// the devices' own transport (copy streams) timed on the receiving device's clock, as the
// executor times a RECV there. LibTorch-free header.
//
//   receiver's clock:  mark a | SEND_F(0, m) -> copy stream | RECV_F(1, m): stream waits | mark b
//   latency(bytes) = b - a: the copy and the waits around it, as the receiving device sees them
#pragma once

#include <vector>

#include "hw/predict/machine_profile.h"
#include "sched/result.h"

namespace pipeworks::hw {

class ComputeDevices;  // hw/exec/compute_devices.h

// Per size in `bytes`, the latency of `repetitions` hand-offs (after `warmup` untimed ones) from
// device 0 to device 1 of `where`, through where.transport(); an error when `where` brings no
// transport of its own.
sched::Result<std::vector<HandoffSample>> device_handoffs(const ComputeDevices& where,
                                                          const std::vector<sched::Bytes>& bytes, int warmup,
                                                          int repetitions);

}  // namespace pipeworks::hw
