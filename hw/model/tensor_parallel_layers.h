// The zoo's layers split over a tensor-parallel group as Megatron-LM splits them (Shoeybi et al.
// 2019, fig. 3): a column-parallel Linear holds a slice of the output units (its input through f,
// its output a shard), a row-parallel Linear a slice of the input units (its partial output summed
// by g, the bias added after the sum, whole on every rank). tensor_parallel_model.h builds them
// from the unsharded model's layers and copies each rank's slice of their parameters in.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "hw/model/tensor_parallel_group.h"

namespace pipeworks::hw {

enum class TensorSplit : std::uint8_t { kColumn, kRow };

// An mlp DenseBlock split: kColumn: f, Linear(in, out / t), tanh on the shard, dropout with the
// shard's slice of the unsharded block's mask; kRow: Linear(in / t, out) without its bias, g, the
// bias, tanh, dropout with the whole mask (the same on every rank).
class TensorParallelDenseImpl : public torch::nn::Cloneable<TensorParallelDenseImpl> {
 public:
  TensorParallelDenseImpl(int in, int out, bool activation, double dropout, std::uint64_t layer_id, TensorSplit split,
                          std::shared_ptr<TensorParallelGroup> group);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int in_, out_;
  bool activation_;
  double dropout_;
  std::uint64_t layer_id_;
  TensorSplit split_;
  std::shared_ptr<TensorParallelGroup> group_;
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(TensorParallelDense);

// An EncoderLayer split: the QKV projection column-parallel (heads / t heads a rank), the
// attention's output projection row-parallel, ff1 column-parallel, ff2 row-parallel; the layer
// norms and the two row-parallel biases whole. Both dropouts follow a g, so their masks are
// whole and the same on every rank.
class TensorParallelEncoderImpl : public torch::nn::Cloneable<TensorParallelEncoderImpl> {
 public:
  TensorParallelEncoderImpl(int width, int heads, int ff_width, double dropout, std::uint64_t layer_id,
                            std::shared_ptr<TensorParallelGroup> group);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor attention(const torch::Tensor& x);
  int width_, heads_, ff_width_;
  double dropout_;
  std::uint64_t layer_id_;
  std::shared_ptr<TensorParallelGroup> group_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, out_{nullptr}, ff1_{nullptr}, ff2_{nullptr};
};
TORCH_MODULE(TensorParallelEncoder);

}  // namespace pipeworks::hw
