// `pipeworks presets`: the model and cluster presets that --model and --cluster accept by name,
// and the GPU cost models --gpu does, each with its description (where its figures come from).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_list.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/gpu_kernels.h"
#include "sim/spec/model_presets.h"

namespace pipeworks::cli {
namespace {

std::string preset_table(const std::vector<sim::PresetInfo>& presets) {
  std::size_t width = 0;
  for (const auto& p : presets) width = std::max(width, p.name.size());
  std::string out;
  for (const auto& p : presets) out += fmt::format("  {:<{}}  {}\n", p.name, width, p.description);
  return out;
}

// The built-in GPU cost models, each with the origin of its figures.
std::vector<sim::PresetInfo> gpu_cost_models() {
  std::vector<sim::PresetInfo> out;
  for (const std::string& name : sim::gpu_kernel_model_names()) {
    auto gpu = sim::gpu_kernel_model(name);
    out.push_back({name, gpu ? gpu->source : gpu.error().message});
  }
  return out;
}

}  // namespace

void add_presets_command(CLI::App& app, CommandContext& context) {
  CLI::App* command =
      app.add_subcommand("presets", "List the model and cluster presets that --model and --cluster take by name");
  command->callback([&context] {
    std::cout << "models (--model NAME; a model spec JSON file goes to --model-spec: docs/model_spec.md):\n"
              << preset_table(sim::model_presets())
              << "  resize: --layers N (uniform, gpt*, amoeba); --model-width, --heads, --seq-len, --vocab (gpt*);\n"
                 "          --flops RATE (gpt*, amoeba); --gpu NAME (gpt*); --layer-forward, --layer-backward, --layer-output,\n"
                 "          --layer-stash, --layer-params (uniform)\n"
              << "\nclusters (--cluster NAME; a cluster spec JSON file goes to --cluster-spec):\n"
              << preset_table(sim::cluster_presets()) << "  resize: --nodes N (dgx-a100, dgx-h100, dgx-h200, multinode)\n"
              << "\nGPU cost models (--gpu NAME or a data file: gpt* timed kernel by kernel, docs/gpu_cost_model.md):\n"
              << preset_table(gpu_cost_models());
    context.exit_code = kExitOk;
  });
}

}  // namespace pipeworks::cli
