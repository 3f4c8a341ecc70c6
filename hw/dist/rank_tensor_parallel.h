// A rank's tensor-parallel part, built before the ranks connect and wired in after: its group
// (unconnected until connect_tensor_group), the shard of the model its cells are cut from and
// every tensor rank's slices of the unsharded model's parameters, which --check slices the
// reference by and assembles the ranks' gradients with.
//
// Test hook: PIPEWORKS_TEST_WRONG_SHARD=R makes world rank R hold the next tensor rank's slice of
// the split layers instead of its own, a wrong model the gradient check must catch.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "hw/dist/c10d_tensor_group.h"
#include "hw/dist/distributed_env.h"
#include "hw/dist/rank_layout.h"
#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_model.h"
#include "sched/result.h"

namespace pipeworks::hw {

struct RankTensorParallel {
  std::shared_ptr<C10dTensorGroup> group;  // null with tp 1
  // By tensor rank, per parameter of the unsharded model, the slice that rank holds; empty with tp 1.
  std::vector<std::vector<ParamShard>> shards;
};

// Unset: nullopt. Not a rank number: an error naming the variable.
sched::Result<std::optional<int>> read_wrong_shard(const EnvLookup& lookup = {});

// The model a rank at `place` cuts its cells from: `model` itself with tp 1, else its shard over
// a new group (filled into `out`), the next rank's slice when `wrong_shard` names this rank.
sched::Result<Model> tensor_parallel_model(const Model& model, const RankPlace& place,
                                           std::chrono::milliseconds timeout, std::optional<int> wrong_shard,
                                           RankTensorParallel& out);

// Connects the group of `place`'s tensor-parallel ranks inside `world` (nothing with tp 1).
sched::Status connect_tensor_group(RankTensorParallel& tp, const C10dGroup& world, const RankPlace& place);

}  // namespace pipeworks::hw
