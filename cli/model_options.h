// The model flags shared by `pipeworks run` and `pipeworks profile`: a zoo model and its sizes,
// or a TorchScript file and what its samples and loss are (header-only; only LibTorch-built
// commands include it, and it needs nothing but the LibTorch-free ModelConfig).
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "hw/model/model_config.h"

namespace pipeworks::cli {

struct ModelOptions {
  std::string model = "mlp";
  std::string input_shape;  // TorchScript models: one sample's shape
  std::string input_dtype = "float32";
  std::string loss = "mse";
  std::string data;  // TorchScript models: torch.save({"inputs": X, "targets": Y}) file
};

inline void add_model_options(CLI::App* cmd, ModelOptions& o, hw::ModelConfig& c) {
  const auto size = [cmd](const char* flag, int& value, const char* help, int high) {
    cmd->add_option(flag, value, help)->check(integer_from(1, high))->capture_default_str();
  };
  cmd->add_option("--model", o.model,
                  "mlp | transformer | convnet | FILE.pt (your TorchScript nn.Sequential; docs/your_model.md)")
      ->capture_default_str();
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
  cmd->add_option("--seed", c.seed, "seed of parameters and data")->check(unsigned_64())->capture_default_str();
  cmd->add_option("--input-shape", o.input_shape, "FILE.pt: one sample's shape, without the batch (e.g. 3,32,32)");
  cmd->add_option("--input-dtype", o.input_dtype, "FILE.pt: float32 (inputs ~ N(0,1)) | int64 (see --input-high)")
      ->capture_default_str();
  cmd->add_option("--input-high", c.scripted.input_high, "FILE.pt, int64 inputs: drawn from [0, this) (e.g. a vocabulary)")
      ->check(integer_from(1, 1 << 30));
  cmd->add_option("--loss", o.loss,
                  "FILE.pt: mse (targets ~ N(0,1) of the output's shape) | cross_entropy (classes along the "
                  "output's last dimension)")
      ->capture_default_str();
  cmd->add_option("--data", o.data,
                  "FILE.pt: real samples, torch.save({\"inputs\": X, \"targets\": Y}, path); each step draws its batch "
                  "(the sample shape and dtype come from X)");
}

// A zoo or TorchScript flag given for another kind of model than --model's (it would be ignored):
// an error naming both. A flag's kind is how its help begins ("transformer: encoder layers",
// "FILE.pt: ..."), the one place add_model_options says it.
inline sched::Status check_model_kind_flags(const CLI::App& cmd) {
  const CLI::Option* model = cmd.get_option_no_throw("--model");
  if (model == nullptr || cmd.get_option_no_throw("--depth") == nullptr) return sched::Ok{};
  const std::string given = model->count() > 0 ? model->results().back() : "mlp";
  const bool scripted = given.size() > 3 && given.ends_with(".pt");
  const std::string kind = scripted ? "FILE.pt" : given;
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() == 0) continue;
    const std::string& help = option->get_description();
    for (const char* owner : {"mlp", "transformer", "convnet", "FILE.pt"}) {
      const std::string prefix = owner;
      const bool owned = help.starts_with(prefix + ":") || help.starts_with(prefix + ",");
      if (owned && prefix != kind) {
        const std::string owner_text = prefix == "FILE.pt" ? "a TorchScript model (--model FILE.pt)" : "--model " + prefix;
        return sched::Error{fmt::format("{}: only for {}, not --model {} (it would be ignored)", option->get_name(),
                                        owner_text, given)};
      }
    }
  }
  return sched::Ok{};
}

// The --model text and the TorchScript flags into `c` (a usage error otherwise). A TorchScript
// model is loaded afterwards (hw::load_scripted_model), which can fail on the file's contents.
inline sched::Status resolve_model_options(const ModelOptions& o, hw::ModelConfig& c) {
  auto kind = hw::parse_model_kind(o.model);
  if (!kind) return kind.error();
  c.kind = *kind;
  if (c.kind != hw::ModelKind::kScripted) {
    if (!o.input_shape.empty()) return sched::Error{"--input-shape: only for a TorchScript model (--model FILE.pt)"};
    if (!o.data.empty()) return sched::Error{"--data: only for a TorchScript model (--model FILE.pt)"};
    return hw::check_model_config(c);
  }
  if (o.input_shape.empty() && o.data.empty()) {
    return sched::Error{"--model " + o.model + ": needs --input-shape, one sample's shape (e.g. 3,32,32), or --data"};
  }
  if (!o.input_shape.empty()) {
    auto shape = hw::parse_sample_shape(o.input_shape);
    if (!shape) return sched::Error{"--input-shape: " + shape.error().message};
    c.scripted.input_shape = *shape;
  }
  auto dtype = hw::parse_input_dtype(o.input_dtype);
  if (!dtype) return sched::Error{"--input-dtype: " + dtype.error().message};
  auto loss = hw::parse_loss_kind(o.loss);
  if (!loss) return sched::Error{"--loss: " + loss.error().message};
  c.scripted.path = o.model;
  c.scripted.data_path = o.data;
  c.scripted.input_dtype = *dtype;
  c.scripted.loss = *loss;
  if (o.data.empty() && c.scripted.input_dtype == hw::InputDtype::kInt64 && c.scripted.input_high < 1) {
    return sched::Error{"--input-dtype int64: needs --input-high N (inputs are drawn from [0, N))"};
  }
  return hw::check_model_config(c);
}

}  // namespace pipeworks::cli
