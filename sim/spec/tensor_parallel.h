// One rank's share of a model split over a tensor-parallel group, from each layer's
// TensorParallelSplit (model_spec.h). What a rank of t holds and does, per layer:
//
//   forward, backward (I, W, B), forward_no_grad     / t   (its share of every GEMM), or the
//                                                          split's rank_times for t where given
//   output_bytes                                     / t   (Megatron's scatter/gather of the
//                                                            boundary activation: each rank
//                                                            sends 1/t, Narayanan et al. 2021 4.1)
//   stash_bytes   f S + (1 - f) S / t, or S / t with sequence parallelism (f: the layer's
//                 replicated_stash_fraction; Korthikanti et al. 2022 eq. 2 and 3)
//   param_bytes   r + (P - r) / t (r: replicated_param_bytes)
//   collectives   kept whole on the layer: every rank contributes the whole buffer
//
// The time of the collectives belongs to the links they run on: build_cost_model
// (sim/plan/cost_model_builder.h) adds them to the passes.
#pragma once

#include "sched/result.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {

// The rank's model (tensor_parallel = tp, sequence_parallel and tensor_parallel_overlap as given);
// `whole` unchanged for tp 1. Errors: tp out of [1, kMaxTensorParallel], a model already split,
// sequence parallelism or overlap with tp 1, a layer without a split (named).
sched::Result<ModelSpec> tensor_parallel_view(const ModelSpec& whole, int tp, bool sequence_parallel,
                                              bool overlap = false);

// Whether every layer states how it splits (tensor_parallel_view accepts tp above 1).
bool splits_over_tensor_parallel(const ModelSpec& model);

}  // namespace pipeworks::sim
