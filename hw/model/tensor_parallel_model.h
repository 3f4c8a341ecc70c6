// A zoo model as one tensor-parallel rank holds it: which of its parameters are split and along
// which rows or columns (ParamShard, in the model's parameter order), and the model rebuilt with
// the split layers of tensor_parallel_layers.h holding exactly that slice of the unsharded
// model's parameters (built from the same seed), so a rank's gradients can be compared with the
// slice of the unsharded reference's. What splits (docs/tensor_parallel.md):
//
//   transformer  every encoder layer: QKV and ff1 column-parallel, the attention's output and
//                ff2 row-parallel; the embedding, the layer norms, the row-parallel biases and
//                the LM head whole on every rank (small here; Megatron splits the vocabulary too)
//   mlp          its blocks fc0, fc1, ..., head in pairs (fc0 column, fc1 row), (fc2, fc3), ...;
//                with an odd count the last block (the head when depth is even) stays whole
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_group.h"
#include "sched/result.h"

namespace pipeworks::hw {

// One parameter as a rank holds it: whole (`dim` -1), or the rows (dim 0) or columns (dim 1) in
// `ranges` (first, count), concatenated in that order.
struct ParamShard {
  int dim = -1;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  bool whole() const { return dim < 0; }
};

// Per parameter of the unsharded model (Reference::parameters() order), rank `rank` of `tp`'s
// shard. The model must split (check_tensor_parallel_split).
std::vector<ParamShard> tensor_parallel_shards(const Model& model, int tp, int rank);

// `whole`'s slice a rank holds (whole itself when the shard is).
at::Tensor take_shard(const at::Tensor& whole, const ParamShard& shard);

// Writes `piece` (take_shard's shape) into its place in `whole`.
void put_shard(at::Tensor& whole, const ParamShard& shard, const at::Tensor& piece);

// The model with its split layers replaced by tensor-parallel ones over `group`, each holding
// rank `shard_rank`'s slice of `model`'s parameters (group->rank()'s unless a test asks for
// another's); the others deep copies.
sched::Result<Model> shard_model(const Model& model, const std::shared_ptr<TensorParallelGroup>& group,
                                 int shard_rank = -1);

}  // namespace pipeworks::hw
