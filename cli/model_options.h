// The model-zoo flags shared by `pipeworks run` and `pipeworks profile` (header-only; only
// LibTorch-built commands include it, and it needs nothing but the LibTorch-free ModelConfig).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hw/model/model_config.h"

namespace pipeworks::cli {

inline void add_model_options(CLI::App* cmd, std::string& model, hw::ModelConfig& c) {
  cmd->add_option("--model", model, "mlp | transformer | convnet")->capture_default_str();
  cmd->add_option("--depth", c.depth, "mlp: hidden layers")->capture_default_str();
  cmd->add_option("--width", c.width, "mlp: layer width")->capture_default_str();
  cmd->add_option("--layers", c.layers, "transformer: encoder layers")->capture_default_str();
  cmd->add_option("--seq-len", c.seq_len, "transformer: sequence length")->capture_default_str();
  cmd->add_option("--model-width", c.model_width, "transformer: model width")->capture_default_str();
  cmd->add_option("--heads", c.heads, "transformer: attention heads")->capture_default_str();
  cmd->add_option("--ff-width", c.ff_width, "transformer: feed-forward width")->capture_default_str();
  cmd->add_option("--vocab", c.vocab, "transformer: vocabulary size")->capture_default_str();
  cmd->add_option("--conv-blocks", c.conv_blocks, "convnet: conv blocks")->capture_default_str();
  cmd->add_option("--channels", c.channels, "convnet: channels of the first block")->capture_default_str();
  cmd->add_option("--image-size", c.image_size, "convnet: image side in pixels")->capture_default_str();
  cmd->add_option("--dropout", c.dropout, "dropout probability (mlp, transformer)")->capture_default_str();
  cmd->add_option("--seed", c.seed, "seed of parameters and data")->capture_default_str();
}

}  // namespace pipeworks::cli
