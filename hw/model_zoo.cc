// The model zoo (see model_zoo.h): layer lists, synthetic data, losses and ModelSpec shapes.
#include "hw/model_zoo.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/counting_allocator.h"
#include "hw/layers.h"
#include "hw/torch_compat.h"

namespace pipeworks::hw {
namespace {

// The counter describe_model measures with (kept apart from the low device numbers executors use).
constexpr int kProbeDevice = kMaxCountedDevices - 1;

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
  }
  return {};
}

sched::Result<MicroBatches> split_batch(const Batch& batch, int num_microbatches) {
  const std::int64_t n = batch.inputs.size(0);
  if (num_microbatches < 1 || n % num_microbatches != 0) {
    return sched::Error{fmt::format("the batch of {} samples does not split into {} equal micro-batches", n,
                                    num_microbatches)};
  }
  MicroBatches out;
  out.inputs = batch.inputs.chunk(num_microbatches, 0);
  out.targets = batch.targets.chunk(num_microbatches, 0);
  return out;
}

namespace {

struct Probe {
  torch::Tensor output;
  sched::Bytes retained_bytes = 0;
};

// Runs `layer` on `input` with the graph kept; bytes the forward left allocated (its output and
// what autograd saved for backward).
Probe probe_layer(Layer& layer, const torch::Tensor& input) {
  const DeviceScope scope(kProbeDevice);
  const sched::Bytes before = live_bytes(kProbeDevice);
  Probe probe;
  probe.output = layer.module.forward(input);
  probe.retained_bytes = live_bytes(kProbeDevice) - before;
  return probe;
}

sim::ScaledBytes scaled(sched::Bytes at_one, sched::Bytes at_two) {
  return {at_one - (at_two - at_one), at_two - at_one};
}

}  // namespace

sched::Result<sim::ModelSpec> describe_model(const Model& model, int probe_batch) {
  if (probe_batch < 1) return sched::Error{"describe_model: probe_batch must be >= 1"};
  install_counting_allocator();
  Model copy = clone_model(model);
  const Batch one = make_batch(model.config, probe_batch, model.config.seed);
  const Batch two = make_batch(model.config, 2 * probe_batch, model.config.seed);
  sim::ModelSpec spec;
  spec.name = std::string(model_kind_name(model.config.kind));
  spec.description = fmt::format("pipeworks hw model zoo: {} ({} layers)", spec.name, copy.layers.size());
  auto per_sample = [&](sched::Bytes a, sched::Bytes b) {
    const sim::ScaledBytes s = scaled(a, b);
    return sim::ScaledBytes{s.fixed_bytes, s.per_sample_bytes / probe_batch};
  };
  const auto input_bytes = [](const torch::Tensor& t) { return static_cast<sched::Bytes>(t.nbytes()); };
  spec.input_bytes = per_sample(input_bytes(one.inputs), input_bytes(two.inputs));
  torch::Tensor x1 = one.inputs;
  torch::Tensor x2 = two.inputs;
  try {
    for (Layer& layer : copy.layers) {
      if (x1.is_floating_point()) {
        x1 = x1.detach().requires_grad_(true);
        x2 = x2.detach().requires_grad_(true);
      }
      Probe p1 = probe_layer(layer, x1);
      Probe p2 = probe_layer(layer, x2);
      sim::LayerSpec layer_spec;
      layer_spec.name = layer.name;
      layer_spec.output_bytes = per_sample(input_bytes(p1.output), input_bytes(p2.output));
      layer_spec.stash_bytes = per_sample(p1.retained_bytes, p2.retained_bytes);
      for (const auto& parameter : layer.module.ptr()->parameters()) {
        layer_spec.param_bytes += static_cast<sched::Bytes>(parameter.nbytes());
      }
      spec.layers.push_back(std::move(layer_spec));
      x1 = p1.output;
      x2 = p2.output;
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("describe_model: {}", e.what())};
  }
  return spec;
}

}  // namespace pipeworks::hw
