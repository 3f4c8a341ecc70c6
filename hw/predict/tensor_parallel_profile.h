// What a tensor-parallel rank's layers add to a profile (`run --distributed --predict --tp N`):
// the profiler times rank 0's shard of the model alone (hw/model/tensor_parallel_group.h's
// AloneTensorGroup: every all-reduce leaves the rank's own part, so a pass costs its compute),
// and this counts, per layer, the all-reduces its forward and its backward run and their buffer.
// The spec carries them as the layer's TensorParallelSplit, and the simulator times them on the
// cluster's tensor-parallel link (sim/plan/cost_model_builder.h), measured over the run's group
// (hw/dist/comm_profile.h). What the zoo's shards run (hw/model/tensor_parallel_model.h):
//
//   mlp, a (column, row) pair    column: backward 1 (f: its input's gradient; none on the data)
//                                row:    forward 1  (g: the partial outputs)
//   transformer encoder layer    forward 2 (attention out, ff2)   backward 2 (qkv's and ff1's inputs)
//
// LibTorch-free header.
#pragma once

#include <vector>

#include "hw/model/model_config.h"
#include "hw/predict/profiler.h"
#include "sched/result.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {

struct LayerCollectives {
  int forward = 0;   // all-reduces in the layer's forward (F, and R under re-materialization)
  int backward = 0;  // in its backward
  sched::Bytes bytes = 0;  // the largest buffer of those, for one micro-batch of the given size
  friend bool operator==(const LayerCollectives&, const LayerCollectives&) = default;
};

// Per layer of `model`'s rank shard over `tp` ranks (>= 2), one forward and one backward each at
// `microbatch_size` samples, run as a stage runs them (the model's data needs no gradient).
// Errors: a model that does not split over tp, a layer that throws (named).
sched::Result<std::vector<LayerCollectives>> count_layer_collectives(const ModelConfig& model, int tp,
                                                                     int microbatch_size);

// Fills `layers` (a profile of the shard at `sizes`, in order) with each layer's counts and, per
// size, its buffer; an error if a layer's counts differ between sizes.
sched::Status add_layer_collectives(const ModelConfig& model, int tp, const std::vector<int>& sizes,
                                    std::vector<LayerProfile>& layers);

}  // namespace pipeworks::hw
