// A mini-batch of B samples split into M equal micro-batches: the one check that every command,
// sweep and run applies to its batch and micro-batch count.
#pragma once

#include "sched/result.h"

namespace pipeworks::sim {

// A batch not given: this many samples per micro-batch (32 at 8 micro-batches), in every command
// and in Python.
inline constexpr int kDefaultSamplesPerMicrobatch = 4;

// B / M, or an error when either is below 1 or M does not divide B.
sched::Result<int> microbatch_size(int batch_size, int num_microbatches);

}  // namespace pipeworks::sim
