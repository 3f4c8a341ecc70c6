// Backward temporaries measured per pipeline stage, on the stage's layers run as one unit under
// the counting allocator, rather than composed from per-layer measurements: the composition
// over-estimates stages whose layers free or reuse buffers across layer boundaries (the
// convnet's convolution backward). LibTorch-free header.
//
// A stage's backward behaves differently the first time in a step: the executor drops the
// parameter gradients at the step's start, so its first backward makes them layer by layer
// while it frees the stash, later backwards accumulate into gradients that already exist.
//
//   live before F --F(stage)--> live after F (stash) --grad of output--> b0
//   first:  no grads  --B(stage)--> first_extra(s) = peak during B - b0   (grads made inside)
//   later:  grads exist --B(stage)--> extra(s)     = peak during B - b0
#pragma once

#include <vector>

#include "hw/model_config.h"
#include "sched/result.h"
#include "sched/timeline.h"
#include "sim/partition.h"

namespace pipeworks::hw {

// Bytes above a stage's stash (and its output gradient) at the peak of its backward.
struct StageBackwardBytes {
  sched::Bytes first = 0;  // the step's first backward of the stage (parameter gradients made in it)
  sched::Bytes later = 0;  // every later one (gradients exist and accumulate)
  friend bool operator==(const StageBackwardBytes&, const StageBackwardBytes&) = default;
};

// Per stage of `partition`, at `microbatch_size` samples: the largest of each over `repetitions`
// (first, later) pairs of passes, after one warm-up pass. The last stage's backward starts from
// its loss, as in the executor.
sched::Result<std::vector<StageBackwardBytes>> measure_stage_backward_extra(const ModelConfig& config,
                                                                            const sim::Partition& partition,
                                                                            int microbatch_size, int repetitions);

}  // namespace pipeworks::hw
