// The knobs of the model zoo and of a user's TorchScript model, free of LibTorch so the CLI and
// the profiler can hold them: which model, its sizes, dropout and the seed its parameters and
// data come from; for a TorchScript file, its path, the shape of a sample and the loss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"

namespace pipeworks::hw {

// kScripted: a TorchScript module from a file (hw/model/scripted_model.h), not a zoo model.
enum class ModelKind : std::uint8_t { kMlp, kTransformer, kConvnet, kScripted };

std::string_view model_kind_name(ModelKind kind);  // "mlp", "transformer", "convnet", "scripted"
// A zoo model's name; any other name with a '/' or a '.' is a TorchScript file (kScripted).
sched::Result<ModelKind> parse_model_kind(std::string_view text);
std::vector<std::string_view> model_kind_names();  // the zoo's three

enum class LossKind : std::uint8_t {
  kMse,           // mean squared error against a float target of the output's shape
  kCrossEntropy,  // mean over all positions; output (..., C), target int64 (...)
};
std::string_view loss_kind_name(LossKind kind);  // "mse", "cross_entropy"
sched::Result<LossKind> parse_loss_kind(std::string_view text);

enum class InputDtype : std::uint8_t { kFloat32, kInt64 };
std::string_view input_dtype_name(InputDtype dtype);  // "float32", "int64"
sched::Result<InputDtype> parse_input_dtype(std::string_view text);

// One sample's shape, e.g. "3,224,224" -> {3, 224, 224}: 1 to 8 sizes, each 1..kMaxModelWidth.
sched::Result<std::vector<std::int64_t>> parse_sample_shape(std::string_view text);
std::string sample_shape_text(const std::vector<std::int64_t>& shape);  // "3,224,224"

// A user's TorchScript module: what the command line says about it, then what loading it found
// (load_scripted_model fills the second part; until then the model has no layers).
struct ScriptedModelConfig {
  std::string path;                       // a torch.jit.save'd module
  std::vector<std::int64_t> input_shape;  // one sample, without the batch dimension
  InputDtype input_dtype = InputDtype::kFloat32;
  std::int64_t input_high = 0;            // int64 inputs are drawn from [0, input_high)
  LossKind loss = LossKind::kMse;         // cross_entropy: classes along the output's last dim
  // Real data instead of synthetic: torch.save({"inputs": X, "targets": Y}, path) in Python;
  // each step draws its batch from the N samples (input shape and dtype come from X).
  std::string data_path;
  // Found by loading:
  std::vector<std::string> layer_names;     // the top-level children, in order
  std::vector<std::int64_t> output_shape;   // one sample's output
  std::vector<std::string> random_layers;   // children that draw random numbers (dropout)
  double parameters = 0;
  std::int64_t data_samples = 0;            // N of the data file
};

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

  ScriptedModelConfig scripted;  // kScripted only
};

// The model's name in reports and specs: the zoo's kind, or a TorchScript file's stem.
std::string model_display_name(const ModelConfig& config);

// Bounds on the knobs, so a typo cannot ask for a model that exhausts memory while it is built:
// depths (depth, layers, heads, conv_blocks) and widths (width, seq_len, model_width, ff_width,
// vocab, channels, image_size, classes) each, and the parameters of the whole model.
inline constexpr int kMaxModelDepth = 4096;
inline constexpr int kMaxModelWidth = 1 << 16;
inline constexpr double kMaxModelParameters = 1 << 30;  // 4 GiB of fp32 weights

// Checks every size is within 1 and its bound above, heads divides model_width, dropout in
// [0, 1), the convnet's resolution stays >= 1 and the parameters stay within their bound; for
// a TorchScript model, the sample's shape and the int64 inputs' range.
sched::Status check_model_config(const ModelConfig& config);

// Whether the model splits over `tp` tensor-parallel ranks (hw/model/tensor_parallel_model.h):
// tp 1 always; above 1 the mlp (tp dividing width) and the transformer (tp dividing heads and
// ff_width); an error names the model or the size that does not divide.
sched::Status check_tensor_parallel_split(const ModelConfig& config, int tp);

// The model's parameter count (weights and biases of its dominant layers; within a few percent).
double estimated_parameters(const ModelConfig& config);

// Number of layers (the units a partition cuts at) the model will have (a TorchScript model:
// once loaded).
int num_model_layers(const ModelConfig& config);

}  // namespace pipeworks::hw
