// The zoo's layers split over a tensor-parallel group (see tensor_parallel_layers.h).
#include "hw/model/tensor_parallel_layers.h"

#include <cmath>

#include <torch/nn/functional.h>
#include <torch/torch.h>

#include "hw/model/action_context.h"
#include "hw/model/layers.h"
#include "hw/model/tensor_parallel_ops.h"
#include "hw/model/torch_compat.h"

namespace pipeworks::hw {
namespace {

namespace F = torch::nn::functional;

// seeded_dropout on a column shard: the unsharded layer's mask (its shape `whole_width` along the
// last dimension, drawn as seeded_dropout draws it) sliced to this rank's units.
torch::Tensor sharded_dropout(const torch::Tensor& shard, double p, std::uint64_t layer_id, bool training,
                              std::int64_t whole_width, std::int64_t first) {
  if (!training || p <= 0.0) return shard;
  const ActionContext& context = current_action_context();
  auto generator = compat::make_cpu_generator(derive_seed(context.seed, layer_id, context.microbatch));
  std::vector<std::int64_t> sizes = shard.sizes().vec();
  sizes.back() = whole_width;
  const torch::Tensor keep = torch::empty(sizes, shard.options()).bernoulli_(1.0 - p, generator);
  return shard * keep.narrow(-1, first, shard.size(-1)) * (1.0 / (1.0 - p));
}

// A row-parallel Linear: this rank's partial product summed over the group, then the bias.
torch::Tensor row_parallel(const torch::Tensor& x, const torch::nn::Linear& linear, TensorParallelGroup& group) {
  return reduce_from_tensor_parallel(F::linear(x, linear->weight), group) + linear->bias;
}

}  // namespace

TensorParallelDenseImpl::TensorParallelDenseImpl(int in, int out, bool activation, double dropout,
                                                 std::uint64_t layer_id, TensorSplit split,
                                                 std::shared_ptr<TensorParallelGroup> group)
    : in_(in), out_(out), activation_(activation), dropout_(dropout), layer_id_(layer_id), split_(split),
      group_(std::move(group)) {
  reset();
}

void TensorParallelDenseImpl::reset() {
  const int t = group_->size();
  linear_ = register_module("linear", split_ == TensorSplit::kColumn ? torch::nn::Linear(in_, out_ / t)
                                                                      : torch::nn::Linear(in_ / t, out_));
}

torch::Tensor TensorParallelDenseImpl::forward(const torch::Tensor& x) {
  if (split_ == TensorSplit::kRow) {
    torch::Tensor y = row_parallel(x, linear_, *group_);
    if (activation_) y = torch::tanh(y);
    return seeded_dropout(y, dropout_, layer_id_, is_training());
  }
  torch::Tensor y = linear_(copy_to_tensor_parallel(x, *group_));
  if (activation_) y = torch::tanh(y);
  const std::int64_t shard = out_ / group_->size();
  return sharded_dropout(y, dropout_, layer_id_, is_training(), out_, group_->rank() * shard);
}

TensorParallelEncoderImpl::TensorParallelEncoderImpl(int width, int heads, int ff_width, double dropout,
                                                     std::uint64_t layer_id,
                                                     std::shared_ptr<TensorParallelGroup> group)
    : width_(width), heads_(heads), ff_width_(ff_width), dropout_(dropout), layer_id_(layer_id),
      group_(std::move(group)) {
  reset();
}

void TensorParallelEncoderImpl::reset() {
  const int t = group_->size();
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width_})));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width_})));
  qkv_ = register_module("qkv", torch::nn::Linear(width_, 3 * width_ / t));
  out_ = register_module("out", torch::nn::Linear(width_ / t, width_));
  ff1_ = register_module("ff1", torch::nn::Linear(width_, ff_width_ / t));
  ff2_ = register_module("ff2", torch::nn::Linear(ff_width_ / t, width_));
}

// This rank's heads attending (as EncoderLayer's attention does), their outputs (N, S, D / t).
torch::Tensor TensorParallelEncoderImpl::attention(const torch::Tensor& x) {
  return causal_attention(qkv_(copy_to_tensor_parallel(ln1_(x), *group_)), heads_ / group_->size(), width_ / heads_);
}

torch::Tensor TensorParallelEncoderImpl::forward(const torch::Tensor& x) {
  const torch::Tensor h =
      x + seeded_dropout(row_parallel(attention(x), out_, *group_), dropout_, 2 * layer_id_, is_training());
  const torch::Tensor inner = F::gelu(ff1_(copy_to_tensor_parallel(ln2_(h), *group_)));
  return h + seeded_dropout(row_parallel(inner, ff2_, *group_), dropout_, 2 * layer_id_ + 1, is_training());
}

}  // namespace pipeworks::hw
