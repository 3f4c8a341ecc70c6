// Backward temporaries measured per pipeline stage, on the stage's layers run as one unit under
// the counting allocator, rather than composed from per-layer measurements: the composition
// over-estimates stages whose layers free or reuse buffers across layer boundaries (the
// convnet's convolution backward). LibTorch-free header.
//
//   live before F --F(stage)--> live after F (stash) --grad of output--> b0
//   reset peak --B(stage)--> extra(s) = peak during B - b0          (param grads already exist)
#pragma once

#include <vector>

#include "hw/model_config.h"
#include "sched/result.h"
#include "sched/timeline.h"
#include "sim/partition.h"

namespace pipeworks::hw {

// Per stage of `partition`: bytes above the stage's stash (and its output gradient) at the peak
// of its backward, at `microbatch_size` samples, the largest over `repetitions` passes (after
// one warm-up that creates the parameter gradients, as in the executor after a stage's first
// backward). The last stage's backward starts from its loss, as in the executor.
sched::Result<std::vector<sched::Bytes>> measure_stage_backward_extra(const ModelConfig& config,
                                                                      const sim::Partition& partition,
                                                                      int microbatch_size, int repetitions);

}  // namespace pipeworks::hw
