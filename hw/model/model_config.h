// The knobs of the model zoo, free of LibTorch so the CLI and the profiler can hold them:
// which model, its sizes, dropout and the seed its parameters and data come from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"

namespace pipeworks::hw {

enum class ModelKind : std::uint8_t { kMlp, kTransformer, kConvnet };

std::string_view model_kind_name(ModelKind kind);  // "mlp", "transformer", "convnet"
sched::Result<ModelKind> parse_model_kind(std::string_view text);
std::vector<std::string_view> model_kind_names();

struct ModelConfig {
  ModelKind kind = ModelKind::kMlp;
  std::uint64_t seed = 1;  // parameters and synthetic data derive from it
  double dropout = 0.0;    // probability, mlp and transformer

  // mlp: `depth` hidden layers Linear(width, width) + tanh, then a Linear head; MSE loss.
  int depth = 8;
  int width = 256;

  // transformer: token+position embedding, `layers` pre-LayerNorm encoder layers (self-attention
  // with `heads` heads, then a `ff_width` feed-forward), an LM head; next-token cross-entropy.
  int layers = 4;
  int seq_len = 32;
  int model_width = 64;
  int heads = 4;
  int ff_width = 256;
  int vocab = 256;

  // convnet: `conv_blocks` 3x3 conv blocks on image_size^2 RGB images, channels doubling and
  // the resolution halving every block after the second (so early blocks cost far more than
  // late ones), then a linear classifier over `classes`; cross-entropy.
  int conv_blocks = 4;
  int channels = 16;
  int image_size = 32;
  int classes = 10;
};

// Bounds on the knobs, so a typo cannot ask for a model that exhausts memory while it is built:
// depths (depth, layers, heads, conv_blocks) and widths (width, seq_len, model_width, ff_width,
// vocab, channels, image_size, classes) each, and the parameters of the whole model.
inline constexpr int kMaxModelDepth = 4096;
inline constexpr int kMaxModelWidth = 1 << 16;
inline constexpr double kMaxModelParameters = 1 << 30;  // 4 GiB of fp32 weights

// Checks every size is within 1 and its bound above, heads divides model_width, dropout in
// [0, 1), the convnet's resolution stays >= 1 and the parameters stay within their bound.
sched::Status check_model_config(const ModelConfig& config);

// The model's parameter count (weights and biases of its dominant layers; within a few percent).
double estimated_parameters(const ModelConfig& config);

// Number of layers (the units a partition cuts at) the model will have.
int num_model_layers(const ModelConfig& config);

}  // namespace pipeworks::hw
