// How many micro-batches' activations each stage may hold under a memory cap: the one number the
// list rule needs to keep every schedule it builds within the cap (memory_model.h's rule: an F
// adds its stage's stash, the W (or B) of that micro-batch gives it back, the static state is
// held throughout).
//
//   limit(s) = min(M, floor((cap(s) - params - grads - optimizer state) / stash(s)))   (M when stash is 0)
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// Per stage (stage s on device s, capped at caps_bytes[s]); an error naming the first device
// where not even one micro-batch fits beside the static state: no schedule fits the cap there.
sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches);

}  // namespace pipeworks::sim
