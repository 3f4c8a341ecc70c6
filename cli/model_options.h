// The model-zoo flags shared by `pipeworks run` and `pipeworks profile` (header-only; only
// LibTorch-built commands include it, and it needs nothing but the LibTorch-free ModelConfig).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/arg_checks.h"
#include "hw/model/model_config.h"

namespace pipeworks::cli {

inline void add_model_options(CLI::App* cmd, std::string& model, hw::ModelConfig& c) {
  const auto size = [cmd](const char* flag, int& value, const char* help, int high) {
    cmd->add_option(flag, value, help)->check(integer_from(1, high))->capture_default_str();
  };
  cmd->add_option("--model", model, "mlp | transformer | convnet")->capture_default_str();
  size("--depth", c.depth, "mlp: hidden layers", hw::kMaxModelDepth);
  size("--width", c.width, "mlp: layer width", hw::kMaxModelWidth);
  size("--layers", c.layers, "transformer: encoder layers", hw::kMaxModelDepth);
  size("--seq-len", c.seq_len, "transformer: sequence length", hw::kMaxModelWidth);
  size("--model-width", c.model_width, "transformer: model width", hw::kMaxModelWidth);
  size("--heads", c.heads, "transformer: attention heads", hw::kMaxModelDepth);
  size("--ff-width", c.ff_width, "transformer: feed-forward width", hw::kMaxModelWidth);
  size("--vocab", c.vocab, "transformer: vocabulary size", hw::kMaxModelWidth);
  size("--conv-blocks", c.conv_blocks, "convnet: conv blocks", hw::kMaxModelDepth);
  size("--channels", c.channels, "convnet: channels of the first block", hw::kMaxModelWidth);
  size("--image-size", c.image_size, "convnet: image side in pixels", hw::kMaxModelWidth);
  cmd->add_option("--dropout", c.dropout, "dropout probability (mlp, transformer)")
      ->check(number_from(0, 1, Ends::kBelowHigh))
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "seed of parameters and data")->capture_default_str();
}

}  // namespace pipeworks::cli
