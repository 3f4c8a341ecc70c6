// How many micro-batches' activations each stage may hold under a memory cap: the one number the
// list rule needs to keep every schedule it builds within the cap (memory_model.h's rule: an F
// adds its stage's stash, the W (or B) of that micro-batch gives it back, the static state is
// held throughout).
//
//   limit(s)   = min(M, floor((cap(s) - params - grads - optimizer state) / stash(s)))   (M when stash is 0)
//
// Under re-materialization (an R before each backward) a micro-batch holds only its stage input
// from its F to its R, and its stash from its R to its W (or B); with each W right after its I at
// most one stash is held at a time:
//
//   limit_R(s) = min(M, floor((cap(s) - static - stash(s)) / input(s)))                   (M when input is 0)
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"

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

}  // namespace pipeworks::sim
