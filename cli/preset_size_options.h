// Resizing a model preset from the command line, as Python's model_preset(name, layers=, ...)
// does: `simulate --model gpt2-medium --layers 48 --seq-len 2048`. The flags that mean the
// same as `run`'s model flags have their names (--layers, --model-width, --heads, --seq-len,
// --vocab); the uniform preset's per-layer costs have their own. A flag the chosen preset does
// not have is an error (sim::model_preset says which), and so is any of them with --model-spec.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::cli {

struct PresetSizeArgs {
  std::optional<int> layers;
  std::optional<std::int64_t> model_width, heads, seq_len, vocab;
  std::optional<double> flops;
  std::string attention;  // "" = the preset's default
  std::string gpu;        // "" = none (a built-in GPU cost model's name or a data file's path)
  std::string layer_forward, layer_backward, layer_output, layer_stash, layer_params;  // "" = not given

  bool any() const;
};

// The flags, in a "Preset size" group of --help.
void add_preset_size_options(CLI::App& command, PresetSizeArgs& args);

// The preset `name` resized by `args`; errors name the flag (not sim's option name).
// With a cluster, a preset costed from FLOPs runs at its devices' rate unless --flops says
// otherwise (sim::model_preset_on).
sched::Result<sim::ModelSpec> sized_model_preset(const std::string& name, const PresetSizeArgs& args,
                                                 const sim::ClusterSpec* cluster = nullptr);

}  // namespace pipeworks::cli
