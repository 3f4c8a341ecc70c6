// One memory cap shared by every stage on a device, as the list rule admits forwards against it
// (memory_model.h's rule: a device holds its stages' static state, and each micro-batch's stash
// on a stage from its F to its W or B), with room kept for what the executor holds beside the
// stashes (executor_peak.h, StageCost::extra). An F of stage s may start while
//
//   held(device) + hold(s) + reserve(s) <= room(device)
//   room(d)     = cap(d) - sum over d's stages of (params + grads + optimizer state) - headroom(d)
//   headroom(d) = max over d's stages of (its largest temporaries, the first backward's less the
//                 gradients it makes + the gradient of its input, which it makes and holds until
//                 the stage before consumes it)
//   hold(s)     = stash(s) + split_held(s)   (with an R before each backward: input(s))
//   reserve(s)  = sum of hold(j) over the stages j > s on s's device
//
// With an R before each backward a micro-batch holds only its stage input until its R, and room
// keeps one stash and split_held more aside (the largest of the device's stages'), as in_flight_limits.h.
// The reserve leaves one micro-batch's room to each later stage on the device: in the V 0,1,1,0,
// device 0's stage 0 never fills the cap its stage 3 needs to take micro-batch 0 on, so the
// rule cannot wait forever, and a device's peak is its stages' held activations at most, within
// the cap. With one stage per device the reserve is 0 and the check is the in-flight limit's.
// Where the headroom and split_held leave some stage no room for one micro-batch, the rule falls
// back to the simulator's alone (no headroom, hold = stash): 1F1B may still fit the cap, its
// whole backwards keeping nothing from I to W. The evaluation (evaluation.h) judges each schedule
// by its walked executor peak all the same: where the rule's room is not enough (several input
// gradients waiting at once, or the fallback), that schedule loses.
#pragma once

#include <vector>

#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

struct DeviceMemory {
  std::vector<int> device_of;        // per stage
  std::vector<Bytes> room_bytes;     // per device; negative where the static state exceeds the cap
  std::vector<Bytes> hold_bytes;     // per stage: one micro-batch in flight
  std::vector<Bytes> reserve_bytes;  // per stage: one micro-batch on each of the device's later stages
  std::vector<Bytes> static_bytes;   // per device: its stages' parameters, gradients and optimizer state
  std::vector<Bytes> headroom_bytes;  // per device: the executor's temporaries and one input gradient
};

// For `placement` (stage -> device) and the caps per device; `recompute`: an R before each backward.
DeviceMemory device_memory(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                           const std::vector<int>& placement, bool recompute);

// The stages `placement` puts on device d, in stage order.
std::vector<int> stages_on_device(const std::vector<int>& placement, int device);

}  // namespace pipeworks::sim
