// What a tensor-parallel run checks each step with --check (docs/tensor_parallel.md): each rank's
// gradient shards against the same slice of the non-pipelined, unsharded reference's gradients
// (replicated parameters whole) within the tolerance of the split reductions' other summation
// order; then the reference steps on the ranks' gradients (every tensor rank's slices of replica
// 0's, assembled over the store, so it steps as the run did and the next step starts from the same
// parameters), and its parameters' slice must match the rank's; and the tensor-parallel ranks'
// copies of every replicated parameter stay bit-identical (a digest of their bytes, compared over
// the store).
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/dist/c10d_group.h"
#include "hw/dist/c10d_replica_sync.h"
#include "hw/dist/rank_layout.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/model/tensor_parallel_model.h"
#include "hw/run/gradient_check.h"

namespace pipeworks::hw {

// The gradients' tolerance of a model split over `tp` ranks (the derivation is beside it).
GradientCheck tensor_parallel_tolerance(const ModelConfig& model, int tp);

// What check_tensor_parallel_step works on: the model's knobs, the run's group, the rank's cells and place, its replicas' sync
// (null without data parallelism) and, by tensor rank, the slices of the model's parameters each
// holds (tensor_parallel_shards); the reference is after its accumulate().
struct TensorParallelCheckInputs {
  const ModelConfig* model = nullptr;
  C10dGroup* group = nullptr;
  const RankPlace* place = nullptr;
  const std::vector<StageCell>* cells = nullptr;
  C10dReplicaSync* replicas = nullptr;
  const std::vector<std::vector<ParamShard>>* shards = nullptr;
};

// The step's check, as above; the reference steps. An error names the rank whose replicated
// parameters differ from another tensor-parallel rank's.
sched::Result<GradientCheck> check_tensor_parallel_step(const TensorParallelCheckInputs& in, Reference& reference,
                                                        int step);

}  // namespace pipeworks::hw
