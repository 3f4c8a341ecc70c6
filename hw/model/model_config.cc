// Model kinds by name and the checks on the model zoo's knobs (see model_config.h).
#include "hw/model/model_config.h"

#include <array>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

constexpr std::array<std::string_view, 3> kNames = {"mlp", "transformer", "convnet"};

sched::Status positive(std::string_view name, int value) {
  if (value < 1) return sched::Error{fmt::format("model: {} must be >= 1, got {}", name, value)};
  return sched::Ok{};
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
  const std::array<std::pair<std::string_view, int>, 12> sizes = {{{"depth", c.depth},
                                                                   {"width", c.width},
                                                                   {"layers", c.layers},
                                                                   {"seq_len", c.seq_len},
                                                                   {"model_width", c.model_width},
                                                                   {"heads", c.heads},
                                                                   {"ff_width", c.ff_width},
                                                                   {"vocab", c.vocab},
                                                                   {"conv_blocks", c.conv_blocks},
                                                                   {"channels", c.channels},
                                                                   {"image_size", c.image_size},
                                                                   {"classes", c.classes}}};
  for (const auto& [name, value] : sizes) {
    if (auto s = positive(name, value); !s) return s;
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
  return sched::Ok{};
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
