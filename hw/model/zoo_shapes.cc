// The zoo models' per-sample shapes (see zoo_shapes.h).
#include "hw/model/zoo_shapes.h"

#include <cmath>

namespace pipeworks::hw {
namespace {

constexpr double kFloatBytes = 4;

double mlp_activations(const ModelConfig& c) { return kFloatBytes * c.width * (2.0 * c.depth + 1); }

double transformer_activations(const ModelConfig& c) {
  const double s = c.seq_len;
  const double d = c.model_width;
  const double layer = s * (12 * d + 2.0 * c.ff_width) + 3.0 * c.heads * s * s;
  return kFloatBytes * (2 * s * d + c.layers * layer + 2 * s * c.vocab);
}

double convnet_activations(const ModelConfig& c) {
  double total = kFloatBytes * 3.0 * c.image_size * c.image_size;
  for (const ConvBlockShape& b : convnet_blocks(c)) total += kFloatBytes * 3 * b.out_channels * b.size * b.size;
  return total;
}

}  // namespace

std::vector<ConvBlockShape> convnet_blocks(const ModelConfig& c) {
  std::vector<ConvBlockShape> blocks;
  double channels = 3;
  double size = c.image_size;
  for (int i = 0; i < c.conv_blocks; ++i) {
    const double out = i == 0 ? c.channels : (i >= 2 ? channels * 2 : channels);
    if (i >= 2) size = std::floor(size / 2);
    blocks.push_back({channels, out, size});
    channels = out;
  }
  return blocks;
}

double estimated_activation_bytes_per_sample(const ModelConfig& c) {
  switch (c.kind) {
    case ModelKind::kMlp:
      return mlp_activations(c);
    case ModelKind::kTransformer:
      return transformer_activations(c);
    case ModelKind::kConvnet:
      return convnet_activations(c);
    case ModelKind::kScripted:
      return 0;
  }
  return 0;
}

}  // namespace pipeworks::hw
