// Model kinds by name and the checks on the model zoo's knobs (see model_config.h).
#include "hw/model/model_config.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

constexpr std::array<std::string_view, 3> kNames = {"mlp", "transformer", "convnet"};

sched::Status within(std::string_view name, int value, int high) {
  if (value < 1 || value > high) {
    return sched::Error{fmt::format("model: {} must be from 1 to {}, got {}", name, high, value)};
  }
  return sched::Ok{};
}

double convnet_parameters(const ModelConfig& c) {
  double channels = 3;
  double size = c.image_size;
  double total = 0;
  for (int i = 0; i < c.conv_blocks; ++i) {
    const double out = i == 0 ? c.channels : (i >= 2 ? channels * 2 : channels);
    if (i >= 2) size = std::floor(size / 2);
    total += 9 * channels * out + out;
    channels = out;
  }
  return total + channels * size * size * c.classes;
}

}  // namespace

std::string_view model_kind_name(ModelKind kind) { return kNames.at(static_cast<std::size_t>(kind)); }

sched::Result<ModelKind> parse_model_kind(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<ModelKind>(i);
  }
  return sched::Error{fmt::format("unknown model '{}' (expected mlp, transformer or convnet)", text)};
}

std::vector<std::string_view> model_kind_names() { return {kNames.begin(), kNames.end()}; }

sched::Status check_model_config(const ModelConfig& c) {
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
  }
  return 0;
}

}  // namespace pipeworks::hw
