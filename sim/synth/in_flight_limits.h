// How many micro-batches' activations each stage may hold under a memory cap: the one number the
// list rule needs to keep every schedule it builds within the cap (memory_model.h's rule: an F
// adds its stage's stash, the W (or B) of that micro-batch gives it back, the static state is
// held throughout; device_memory.h adds what the executor holds beside: what an I keeps for its
// W, its temporaries and an input gradient, the headroom).
//
//   limit(s)   = min(M, floor((cap(s) - static - headroom(s)) / (stash(s) + split_held(s))))    (M when 0)
//
// Under re-materialization (an R before each backward) a micro-batch holds only its stage input
// from its F to its R, and its stash from its R to its W (or B); with each W right after its I at
// most one stash is held at a time:
//
//   limit_R(s) = min(M, floor((cap(s) - static - headroom(s) - stash(s) - split_held(s)) / input(s)))
//
// Where the headroom and split_held leave some stage no room for one micro-batch, both without
// them (device_memory.h); a cap that holds no micro-batch even then is an error.
//
// Where stages share a device (a placement, device_memory.h) the cap and the static state are the
// device's, and each stage's limit leaves one micro-batch's room to the device's later stages:
// limit(s) = min(M, floor((room(device) - reserve(s)) / hold(s))); the list rule then keeps the
// device's sum within the cap as well.
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"
#include "sim/synth/device_memory.h"

namespace pipeworks::sim {

// Per stage (stage s on device s, capped at caps_bytes[s]); an error naming the first device
// where not even one micro-batch fits beside the static state: no schedule fits the cap there.
sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches);

// The same under re-materialization; an error naming the first device where the static state,
// one stash and one stage input do not fit.
sched::Result<std::vector<int>> recompute_in_flight_limits(const CostModel& costs,
                                                           const std::vector<Bytes>& caps_bytes,
                                                           int num_microbatches);

// Either of the above with stage s on device placement[s] (caps per device); the error names
// the device and its stages.
sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches, const std::vector<int>& placement,
                                                 bool recompute);

}  // namespace pipeworks::sim
