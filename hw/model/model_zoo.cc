// The model zoo (see model_zoo.h): layer lists, synthetic data and losses.
#include "hw/model/model_zoo.h"

#include <limits>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/model/layers.h"
#include "hw/model/scripted_model.h"
#include "hw/model/torch_compat.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {
namespace {

std::vector<Layer> mlp_layers(const ModelConfig& c) {
  std::vector<Layer> layers;
  for (int i = 0; i < c.depth; ++i) {
    layers.push_back({fmt::format("fc{}", i),
                      torch::nn::AnyModule(DenseBlock(c.width, c.width, true, c.dropout, static_cast<std::uint64_t>(i)))});
  }
  layers.push_back({"head", torch::nn::AnyModule(DenseBlock(c.width, c.width, false, 0.0, 0))});
  return layers;
}

std::vector<Layer> transformer_layers(const ModelConfig& c) {
  std::vector<Layer> layers;
  layers.push_back({"embed", torch::nn::AnyModule(EmbeddingBlock(c.vocab, c.seq_len, c.model_width, c.dropout, 0))});
  for (int i = 0; i < c.layers; ++i) {
    layers.push_back({fmt::format("encoder{}", i),
                      torch::nn::AnyModule(EncoderLayer(c.model_width, c.heads, c.ff_width, c.dropout,
                                                        static_cast<std::uint64_t>(i + 1)))});
  }
  layers.push_back({"lm_head", torch::nn::AnyModule(LmHead(c.model_width, c.vocab))});
  return layers;
}

// Blocks 0 and 1 run at full resolution (the expensive ones); every later block pools first
// and doubles the channels.
std::vector<Layer> convnet_layers(const ModelConfig& c) {
  std::vector<Layer> layers;
  int channels = 3;
  int size = c.image_size;
  for (int i = 0; i < c.conv_blocks; ++i) {
    const bool pool = i >= 2;
    const int out = i == 0 ? c.channels : (pool ? channels * 2 : channels);
    if (pool) size /= 2;
    layers.push_back({fmt::format("conv{}", i), torch::nn::AnyModule(ConvBlock(channels, out, pool))});
    channels = out;
  }
  layers.push_back({"classifier", torch::nn::AnyModule(Classifier(channels * size * size, c.classes))});
  return layers;
}

}  // namespace

sched::Result<Model> build_model(const ModelConfig& config) {
  if (auto status = check_model_config(config); !status) return status.error();
  torch::manual_seed(config.seed);
  Model model;
  model.config = config;
  switch (config.kind) {
    case ModelKind::kMlp:
      model.layers = mlp_layers(config);
      model.loss = LossKind::kMse;
      break;
    case ModelKind::kTransformer:
      model.layers = transformer_layers(config);
      model.loss = LossKind::kCrossEntropy;
      break;
    case ModelKind::kConvnet:
      model.layers = convnet_layers(config);
      model.loss = LossKind::kCrossEntropy;
      break;
    case ModelKind::kScripted: {
      auto layers = scripted_layers(config);
      if (!layers) return layers.error();
      model.layers = std::move(*layers);
      model.loss = config.scripted.loss;
      break;
    }
  }
  return model;
}

Model clone_model(const Model& model) {
  Model copy;
  copy.config = model.config;
  copy.loss = model.loss;
  for (const Layer& layer : model.layers) copy.layers.push_back({layer.name, layer.module.clone()});
  return copy;
}

torch::Tensor compute_loss(LossKind kind, const torch::Tensor& output, const torch::Tensor& target) {
  if (kind == LossKind::kMse) return torch::mse_loss(output, target);
  return torch::cross_entropy_loss(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
}

Batch make_batch(const ModelConfig& c, int batch_size, std::uint64_t seed) {
  auto generator = compat::make_cpu_generator(seed);
  const std::int64_t n = batch_size;
  switch (c.kind) {
    case ModelKind::kMlp:
      return {torch::randn({n, c.width}, generator), torch::randn({n, c.width}, generator)};
    case ModelKind::kTransformer: {
      const torch::Tensor tokens = torch::randint(c.vocab, {n, c.seq_len + 1}, generator, torch::kLong);
      return {tokens.slice(1, 0, c.seq_len).contiguous(), tokens.slice(1, 1, c.seq_len + 1).contiguous()};
    }
    case ModelKind::kConvnet:
      return {torch::randn({n, 3, c.image_size, c.image_size}, generator),
              torch::randint(c.classes, {n}, generator, torch::kLong)};
    case ModelKind::kScripted:
      return scripted_batch(c.scripted, batch_size, seed);
  }
  return {};
}

std::uint64_t step_seed(const ModelConfig& config, int step) {
  return config.seed + 1000003ULL * static_cast<std::uint64_t>(step + 1);
}

sched::Result<MicroBatches> split_batch(const Batch& batch, int num_microbatches) {
  const std::int64_t n = batch.inputs.size(0);
  if (n > std::numeric_limits<int>::max()) return sched::Error{fmt::format("a batch of {} samples is too large", n)};
  if (auto size = sim::microbatch_size(static_cast<int>(n), num_microbatches); !size) return size.error();
  MicroBatches out;
  out.inputs = batch.inputs.chunk(num_microbatches, 0);
  out.targets = batch.targets.chunk(num_microbatches, 0);
  return out;
}

}  // namespace pipeworks::hw
