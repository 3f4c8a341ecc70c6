// The zoo models' shapes per sample, from their knobs alone (no model is built): the convnet's
// blocks as its builder lays them out, and the bytes autograd keeps for one sample's forward,
// which a run's up-front memory check (hw/run/run_resources.h) multiplies by the micro-batches
// it holds. LibTorch-free.
#pragma once

#include <vector>

#include "hw/model/model_config.h"

namespace pipeworks::hw {

// One conv block: 3x3 convolution from `in_channels` to `out_channels` at `size` x `size`
// (the resolution halves from the third block on, the channels double there).
struct ConvBlockShape {
  double in_channels = 0;
  double out_channels = 0;
  double size = 0;
};
std::vector<ConvBlockShape> convnet_blocks(const ModelConfig& config);

// Bytes autograd keeps for one sample's forward through every layer (fp32), a rough figure:
//   mlp          each hidden Linear + tanh keeps its input and the tanh's output: 4 x width x (2 depth + 1)
//   transformer  per layer about twelve (S, d) tensors (LayerNorms' inputs and outputs, q, k, v,
//                attention output and projection, residuals), two (S, ff), and per head three
//                (S, S) (scores, probabilities, their dropout); the embeddings two (S, d), the head
//                its (S, vocab) logits and log-probabilities
//   convnet      the input, and per block three outputs (convolution, normalization, activation)
//   TorchScript  0: its shapes are its own
double estimated_activation_bytes_per_sample(const ModelConfig& config);

}  // namespace pipeworks::hw
