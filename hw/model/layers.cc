// The model zoo's layers (see layers.h).
#include "hw/model/layers.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <torch/autograd.h>
#include <torch/nn/functional.h>

#include "hw/model/action_context.h"
#include "hw/model/torch_compat.h"

namespace pipeworks::hw {

namespace F = torch::nn::functional;

torch::Tensor seeded_dropout(const torch::Tensor& x, double p, std::uint64_t layer_id, bool training) {
  if (!training || p <= 0.0) return x;
  const ActionContext& context = current_action_context();
  auto generator = compat::make_cpu_generator(derive_seed(context.seed, layer_id, context.microbatch));
  const torch::Tensor keep = torch::empty_like(x).bernoulli_(1.0 - p, generator);
  return x * keep * (1.0 / (1.0 - p));
}

DenseBlockImpl::DenseBlockImpl(int in, int out, bool activation, double dropout, std::uint64_t layer_id)
    : in_(in), out_(out), activation_(activation), dropout_(dropout), layer_id_(layer_id) {
  reset();
}

void DenseBlockImpl::reset() { linear_ = register_module("linear", torch::nn::Linear(in_, out_)); }

torch::Tensor DenseBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = linear_(x);
  if (activation_) y = torch::tanh(y);
  return seeded_dropout(y, dropout_, layer_id_, is_training());
}

EmbeddingBlockImpl::EmbeddingBlockImpl(int vocab, int seq_len, int width, double dropout, std::uint64_t layer_id)
    : vocab_(vocab), seq_len_(seq_len), width_(width), dropout_(dropout), layer_id_(layer_id) {
  reset();
}

void EmbeddingBlockImpl::reset() {
  tokens_ = register_module("tokens", torch::nn::Embedding(vocab_, width_));
  positions_ = register_module("positions", torch::nn::Embedding(seq_len_, width_));
}

torch::Tensor EmbeddingBlockImpl::forward(const torch::Tensor& tokens) {
  const auto positions = torch::arange(tokens.size(1), torch::kLong);
  return seeded_dropout(tokens_(tokens) + positions_(positions), dropout_, layer_id_, is_training());
}

EncoderLayerImpl::EncoderLayerImpl(int width, int heads, int ff_width, double dropout, std::uint64_t layer_id)
    : width_(width), heads_(heads), ff_width_(ff_width), dropout_(dropout), layer_id_(layer_id) {
  reset();
}

void EncoderLayerImpl::reset() {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width_})));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width_})));
  qkv_ = register_module("qkv", torch::nn::Linear(width_, 3 * width_));
  out_ = register_module("out", torch::nn::Linear(width_, width_));
  ff1_ = register_module("ff1", torch::nn::Linear(width_, ff_width_));
  ff2_ = register_module("ff2", torch::nn::Linear(ff_width_, width_));
}

torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads, std::int64_t head_width) {
  const std::int64_t n = qkv.size(0);
  const std::int64_t s = qkv.size(1);
  auto split_heads = [&](const torch::Tensor& t) { return t.view({n, s, heads, head_width}).transpose(1, 2); };
  const auto parts = qkv.chunk(3, -1);
  const torch::Tensor q = split_heads(parts[0]);
  const torch::Tensor k = split_heads(parts[1]);
  const torch::Tensor v = split_heads(parts[2]);
  const torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
  const torch::Tensor scores =
      q.matmul(k.transpose(-2, -1)).mul(1.0 / std::sqrt(static_cast<double>(head_width))).masked_fill(future, -1e9);
  return scores.softmax(-1).matmul(v).transpose(1, 2).contiguous().view({n, s, heads * head_width});
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x) {
  const torch::Tensor attended = causal_attention(qkv_(ln1_(x)), heads_, width_ / heads_);
  const torch::Tensor h = x + seeded_dropout(out_(attended), dropout_, 2 * layer_id_, is_training());
  const torch::Tensor ff = ff2_(F::gelu(ff1_(ln2_(h))));
  return h + seeded_dropout(ff, dropout_, 2 * layer_id_ + 1, is_training());
}

LmHeadImpl::LmHeadImpl(int width, int vocab) : width_(width), vocab_(vocab) { reset(); }

void LmHeadImpl::reset() {
  ln_ = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width_})));
  linear_ = register_module("linear", torch::nn::Linear(width_, vocab_));
}

torch::Tensor LmHeadImpl::forward(const torch::Tensor& x) { return linear_(ln_(x)); }

ConvBlockImpl::ConvBlockImpl(int in, int out, bool pool) : in_(in), out_(out), pool_(pool) { reset(); }

void ConvBlockImpl::reset() {
  conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in_, out_, 3).padding(1)));
}

torch::Tensor ConvBlockImpl::forward(const torch::Tensor& x) {
  const torch::Tensor in = pool_ ? F::max_pool2d(x, F::MaxPool2dFuncOptions(2)) : x;
  return torch::relu(conv_(in));
}

ClassifierImpl::ClassifierImpl(int features, int classes) : features_(features), classes_(classes) { reset(); }

void ClassifierImpl::reset() { linear_ = register_module("linear", torch::nn::Linear(features_, classes_)); }

torch::Tensor ClassifierImpl::forward(const torch::Tensor& x) { return linear_(x.flatten(1)); }

namespace {

bool fails_now(const FailAt& at, sched::ActionKind kind) {
  const ActionContext& context = current_action_context();
  return context.microbatch == at.microbatch && context.kind == kind && at.kind == kind;
}

[[noreturn]] void fail(const FailAt& at) {
  throw std::runtime_error("deliberate failure (FailAt stage " + std::to_string(at.stage) + ", micro-batch " +
                           std::to_string(at.microbatch) + ")");
}

// Identity whose backward throws when the action context is the FailAt's B.
class FailingIdentity : public torch::autograd::Function<FailingIdentity> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, int stage,
                               int microbatch) {
    ctx->saved_data["stage"] = stage;
    ctx->saved_data["microbatch"] = microbatch;
    return x.clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const FailAt at{static_cast<int>(ctx->saved_data["stage"].toInt()),
                    static_cast<int>(ctx->saved_data["microbatch"].toInt()), sched::ActionKind::kBackward};
    if (fails_now(at, sched::ActionKind::kBackward)) fail(at);
    return {grads[0], torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

FailLayerImpl::FailLayerImpl(FailAt at) : at_(at) {}

torch::Tensor FailLayerImpl::forward(const torch::Tensor& x) {
  if (fails_now(at_, sched::ActionKind::kForward) || fails_now(at_, sched::ActionKind::kRecompute)) fail(at_);
  if (at_.kind != sched::ActionKind::kBackward) return x;
  return FailingIdentity::apply(x, at_.stage, at_.microbatch);
}

}  // namespace pipeworks::hw
