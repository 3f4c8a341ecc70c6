// Model kinds by name and the checks on the model zoo's knobs (see model_config.h).
#include "hw/model/model_config.h"

#include <array>
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hw/model/zoo_shapes.h"

namespace pipeworks::hw {
namespace {

constexpr std::array<std::string_view, 4> kNames = {"mlp", "transformer", "convnet", "scripted"};
constexpr std::size_t kZooModels = 3;
constexpr std::size_t kMaxSampleDims = 8;

sched::Status within(std::string_view name, int value, int high) {
  if (value < 1 || value > high) {
    return sched::Error{fmt::format("model: {} must be from 1 to {}, got {}", name, high, value)};
  }
  return sched::Ok{};
}

double convnet_parameters(const ModelConfig& c) {
  double total = 0;
  double channels = 3;
  double size = c.image_size;
  for (const ConvBlockShape& b : convnet_blocks(c)) {
    total += 9 * b.in_channels * b.out_channels + b.out_channels;
    channels = b.out_channels;
    size = b.size;
  }
  return total + channels * size * size * c.classes;
}

}  // namespace

std::string_view model_kind_name(ModelKind kind) { return kNames.at(static_cast<std::size_t>(kind)); }

sched::Result<ModelKind> parse_model_kind(std::string_view text) {
  for (std::size_t i = 0; i < kZooModels; ++i) {
    if (kNames[i] == text) return static_cast<ModelKind>(i);
  }
  if (text.find('/') != std::string_view::npos || text.find('.') != std::string_view::npos) {
    return ModelKind::kScripted;
  }
  return sched::Error{fmt::format(
      "unknown model '{}' (expected mlp, transformer, convnet or a TorchScript file such as ./model.pt)", text)};
}

std::vector<std::string_view> model_kind_names() { return {kNames.begin(), kNames.begin() + kZooModels}; }

std::string_view loss_kind_name(LossKind kind) { return kind == LossKind::kMse ? "mse" : "cross_entropy"; }

sched::Result<LossKind> parse_loss_kind(std::string_view text) {
  if (text == "mse") return LossKind::kMse;
  if (text == "cross_entropy") return LossKind::kCrossEntropy;
  return sched::Error{fmt::format("unknown loss '{}' (expected mse or cross_entropy)", text)};
}

std::string_view input_dtype_name(InputDtype dtype) { return dtype == InputDtype::kFloat32 ? "float32" : "int64"; }

sched::Result<InputDtype> parse_input_dtype(std::string_view text) {
  if (text == "float32") return InputDtype::kFloat32;
  if (text == "int64") return InputDtype::kInt64;
  return sched::Error{fmt::format("unknown input dtype '{}' (expected float32 or int64)", text)};
}

sched::Result<std::vector<std::int64_t>> parse_sample_shape(std::string_view text) {
  const auto bad = [&] {
    return sched::Error{fmt::format(
        "sample shape '{}' must be 1 to {} sizes separated by commas, each from 1 to {} (e.g. 3,32,32)", text,
        kMaxSampleDims, kMaxModelWidth)};
  };
  std::vector<std::int64_t> shape;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size()) return bad();
    if (value < 1 || value > kMaxModelWidth || shape.size() == kMaxSampleDims) return bad();
    shape.push_back(value);
    start = comma + 1;
  }
  return shape;
}

std::string sample_shape_text(const std::vector<std::int64_t>& shape) { return fmt::format("{}", fmt::join(shape, ",")); }

std::string model_display_name(const ModelConfig& config) {
  if (config.kind != ModelKind::kScripted) return std::string(model_kind_name(config.kind));
  const std::string& path = config.scripted.path;
  const std::size_t slash = path.find_last_of('/');
  std::string stem = slash == std::string::npos ? path : path.substr(slash + 1);
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == ".pt") stem.resize(stem.size() - 3);
  return stem.empty() ? "scripted" : stem;
}

namespace {

// One sample's elements stay within what a model's width may be squared (2^32), so a batch of
// them cannot exhaust memory before the model sees it.
sched::Status check_scripted_config(const ScriptedModelConfig& s) {
  if (s.path.empty()) return sched::Error{"model: a TorchScript model needs its file"};
  if (s.input_shape.empty() && s.data_path.empty()) {
    return sched::Error{"model: a TorchScript model needs --input-shape (one sample's shape) or --data"};
  }
  double elements = 1;
  for (const std::int64_t size : s.input_shape) elements *= static_cast<double>(size);
  if (elements > static_cast<double>(kMaxModelWidth) * kMaxModelWidth) {
    return sched::Error{fmt::format("model: a sample of shape {} has {:.3g} elements, more than {:.3g}",
                                    sample_shape_text(s.input_shape), elements,
                                    static_cast<double>(kMaxModelWidth) * kMaxModelWidth)};
  }
  if (s.input_dtype == InputDtype::kInt64 && (s.input_high < 1 || s.input_high > (std::int64_t{1} << 31))) {
    return sched::Error{fmt::format("model: int64 inputs need --input-high from 1 to 2^31 (inputs are drawn from "
                                    "[0, input-high), e.g. the vocabulary size), got {}", s.input_high)};
  }
  if (s.parameters > kMaxModelParameters) {
    return sched::Error{fmt::format("model: {} has {:.3g} parameters, more than the limit of {:.3g}", s.path,
                                    s.parameters, kMaxModelParameters)};
  }
  return sched::Ok{};
}

}  // namespace

sched::Status check_model_config(const ModelConfig& c) {
  if (c.kind == ModelKind::kScripted) return check_scripted_config(c.scripted);
  if (!(c.dropout >= 0.0 && c.dropout < 1.0)) {
    return sched::Error{fmt::format("model: dropout must be in [0, 1), got {}", c.dropout)};
  }
  const std::array<std::pair<std::string_view, int>, 4> depths = {
      {{"depth", c.depth}, {"layers", c.layers}, {"heads", c.heads}, {"conv_blocks", c.conv_blocks}}};
  const std::array<std::pair<std::string_view, int>, 8> widths = {
      {{"width", c.width}, {"seq_len", c.seq_len}, {"model_width", c.model_width}, {"ff_width", c.ff_width},
       {"vocab", c.vocab}, {"channels", c.channels}, {"image_size", c.image_size}, {"classes", c.classes}}};
  for (const auto& [name, value] : depths) {
    if (auto s = within(name, value, kMaxModelDepth); !s) return s;
  }
  for (const auto& [name, value] : widths) {
    if (auto s = within(name, value, kMaxModelWidth); !s) return s;
  }
  if (c.model_width % c.heads != 0) {
    return sched::Error{
        fmt::format("model: heads ({}) must divide model_width ({})", c.heads, c.model_width)};
  }
  if (c.kind == ModelKind::kConvnet) {
    int size = c.image_size;
    for (int block = 2; block < c.conv_blocks; ++block) size /= 2;
    if (size < 1) {
      return sched::Error{fmt::format("model: image_size {} is too small for {} conv blocks",
                                      c.image_size, c.conv_blocks)};
    }
    if (c.conv_blocks > 24) return sched::Error{"model: conv_blocks must be <= 24"};
  }
  if (const double parameters = estimated_parameters(c); parameters > kMaxModelParameters) {
    return sched::Error{fmt::format("model: {} has about {:.3g} parameters, more than the limit of {:.3g}",
                                    model_kind_name(c.kind), parameters, kMaxModelParameters)};
  }
  return sched::Ok{};
}

double estimated_parameters(const ModelConfig& c) {
  switch (c.kind) {
    case ModelKind::kMlp:
      return (c.depth + 1.0) * (static_cast<double>(c.width) * c.width + c.width);
    case ModelKind::kTransformer: {
      const double d = c.model_width;
      const double layer = 4 * d * d + 2 * d * c.ff_width + c.ff_width + 9 * d;
      return static_cast<double>(c.vocab) * d + static_cast<double>(c.seq_len) * d + c.layers * layer + d * c.vocab + c.vocab;
    }
    case ModelKind::kConvnet:
      return convnet_parameters(c);
    case ModelKind::kScripted:
      return c.scripted.parameters;
  }
  return 0;
}

int num_model_layers(const ModelConfig& c) {
  switch (c.kind) {
    case ModelKind::kMlp:
      return c.depth + 1;
    case ModelKind::kTransformer:
      return c.layers + 2;
    case ModelKind::kConvnet:
      return c.conv_blocks + 1;
    case ModelKind::kScripted:
      return static_cast<int>(c.scripted.layer_names.size());
  }
  return 0;
}

sched::Status check_tensor_parallel_split(const ModelConfig& c, int tp) {
  if (tp == 1) return sched::Ok{};
  auto divides = [&](const char* what, int size) -> sched::Status {
    if (size % tp == 0) return sched::Ok{};
    return sched::Error{fmt::format("--tp {}: the {}'s {} ({}) does not split into {} equal shards", tp,
                                    model_display_name(c), what, size, tp)};
  };
  switch (c.kind) {
    case ModelKind::kMlp:
      return divides("--width", c.width);
    case ModelKind::kTransformer:
      if (auto s = divides("--heads", c.heads); !s) return s;
      return divides("--ff-width", c.ff_width);
    case ModelKind::kConvnet:
    case ModelKind::kScripted:
      break;
  }
  return sched::Error{fmt::format("--tp {}: the {} model cannot split over tensor-parallel ranks (the mlp and the "
                                  "transformer can)",
                                  tp, model_display_name(c))};
}

}  // namespace pipeworks::hw
