// `pipeworks presets`: the model and cluster presets that --model and --cluster accept by name,
// each with its description (where its figures come from).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_list.h"
#include "sim/spec/cluster_presets.h"
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

}  // namespace

void add_presets_command(CLI::App& app, CommandContext& context) {
  CLI::App* command =
      app.add_subcommand("presets", "List the model and cluster presets that --model and --cluster take by name");
  command->callback([&context] {
    std::cout << "models (--model NAME; a model spec JSON file goes to --model-spec: docs/model_spec.md):\n"
              << preset_table(sim::model_presets())
              << "  resize: --layers N (uniform, gpt*, amoeba); --model-width, --heads, --seq-len, --vocab (gpt*);\n"
                 "          --flops RATE (gpt*, amoeba); --layer-forward, --layer-backward, --layer-output,\n"
                 "          --layer-stash, --layer-params (uniform)\n"
              << "\nclusters (--cluster NAME; a cluster spec JSON file goes to --cluster-spec):\n"
              << preset_table(sim::cluster_presets()) << "  resize: --nodes N (dgx-a100, dgx-h100, dgx-h200, multinode)\n";
    context.exit_code = kExitOk;
  });
}

}  // namespace pipeworks::cli
