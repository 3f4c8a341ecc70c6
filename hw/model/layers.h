// The layers of the model zoo: the units a partition cuts at. Each maps one tensor to one
// tensor, is Cloneable (so a stage cell deep-copies its parameters), and draws dropout masks
// from its own generator seeded by (mini-batch seed, layer id, micro-batch) -- see
// action_context.h -- so a re-materialized forward reproduces the original exactly.
#pragma once

#include <cstdint>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "hw/model/fail_at.h"

namespace pipeworks::hw {

// Inverted dropout with a mask drawn from a generator seeded per (layer id, micro-batch).
torch::Tensor seeded_dropout(const torch::Tensor& x, double p, std::uint64_t layer_id, bool training);

// Causal self-attention of `heads` heads of `head_width` over packed projections (N, S, 3 heads
// head_width: q, then k, then v): position i attends to positions <= i; (N, S, heads head_width).
// EncoderLayer runs it on all its heads, a tensor-parallel rank on its share.
torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads, std::int64_t head_width);

// Linear(in, out), then tanh unless it is the head, then dropout.
class DenseBlockImpl : public torch::nn::Cloneable<DenseBlockImpl> {
 public:
  DenseBlockImpl(int in, int out, bool activation, double dropout, std::uint64_t layer_id);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int in_, out_;
  bool activation_;
  double dropout_;
  std::uint64_t layer_id_;
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(DenseBlock);

// Token embedding plus a learned position embedding, then dropout: (N, S) int64 -> (N, S, D).
class EmbeddingBlockImpl : public torch::nn::Cloneable<EmbeddingBlockImpl> {
 public:
  EmbeddingBlockImpl(int vocab, int seq_len, int width, double dropout, std::uint64_t layer_id);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& tokens);

 private:
  int vocab_, seq_len_, width_;
  double dropout_;
  std::uint64_t layer_id_;
  torch::nn::Embedding tokens_{nullptr};
  torch::nn::Embedding positions_{nullptr};
};
TORCH_MODULE(EmbeddingBlock);

// Pre-LayerNorm encoder layer: x + drop(attn(ln1(x))), then x + drop(ffn(ln2(x))), (N, S, D).
class EncoderLayerImpl : public torch::nn::Cloneable<EncoderLayerImpl> {
 public:
  EncoderLayerImpl(int width, int heads, int ff_width, double dropout, std::uint64_t layer_id);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int width_, heads_, ff_width_;
  double dropout_;
  std::uint64_t layer_id_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, out_{nullptr}, ff1_{nullptr}, ff2_{nullptr};
};
TORCH_MODULE(EncoderLayer);

// LayerNorm then Linear to the vocabulary: (N, S, D) -> (N, S, V).
class LmHeadImpl : public torch::nn::Cloneable<LmHeadImpl> {
 public:
  LmHeadImpl(int width, int vocab);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int width_, vocab_;
  torch::nn::LayerNorm ln_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(LmHead);

// Optional 2x2 max-pool, then 3x3 conv (padding 1) and ReLU: (N, C, H, W) -> (N, C', H', W').
class ConvBlockImpl : public torch::nn::Cloneable<ConvBlockImpl> {
 public:
  ConvBlockImpl(int in, int out, bool pool);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int in_, out_;
  bool pool_;
  torch::nn::Conv2d conv_{nullptr};
};
TORCH_MODULE(ConvBlock);

// Flatten then Linear to the classes: (N, C, H, W) -> (N, classes).
class ClassifierImpl : public torch::nn::Cloneable<ClassifierImpl> {
 public:
  ClassifierImpl(int features, int classes);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int features_, classes_;
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(Classifier);

// Identity that throws std::runtime_error at its FailAt action (read from the action context).
class FailLayerImpl : public torch::nn::Cloneable<FailLayerImpl> {
 public:
  explicit FailLayerImpl(FailAt at);
  void reset() override {}
  torch::Tensor forward(const torch::Tensor& x);

 private:
  FailAt at_;
};
TORCH_MODULE(FailLayer);

}  // namespace pipeworks::hw
