// Shared option wiring of the planning commands (see planning_args.h).
#include "cli/planning_args.h"

#include <filesystem>

#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "sim/cluster_presets.h"
#include "sim/model_presets.h"
#include "sim/sweep.h"
#include "sim/units.h"

namespace pipeworks::cli {
namespace {

bool has_preset(const std::vector<sim::PresetInfo>& presets, const std::string& name) {
  for (const auto& preset : presets) {
    if (preset.name == name) return true;
  }
  return false;
}

std::string preset_names(const std::vector<sim::PresetInfo>& presets) {
  std::string names;
  for (const auto& preset : presets) names += (names.empty() ? "" : ", ") + preset.name;
  return names;
}

}  // namespace

void add_planning_options(CLI::App& command, PlanningArgs& args) {
  command.add_option("--model", args.model, "Model preset name or model spec JSON file")->required();
  command.add_option("--cluster", args.cluster, "Cluster preset name or cluster spec JSON file")->required();
  command.add_option("--nodes", args.nodes, "Number of nodes for the `multinode` cluster preset (8 GPUs each)")
      ->check(integer_from(1, sim::kMaxPresetNodes));
  command.add_option("--memory-cap", args.memory_cap,
                     "Per-device memory cap, e.g. 40GiB (the smaller of it and the device memory applies)");
  command.add_option("--optimizer", args.optimizer, "Optimizer whose state counts towards memory")
      ->check(CLI::IsMember(std::vector<std::string>{"sgd", "momentum", "adam"}))
      ->capture_default_str();
  command.add_option("--threads", args.threads, "Worker threads (default: every core)")
      ->check(integer_from(0, sim::kMaxSweepThreads));
}

sched::Result<sim::ModelSpec> resolve_model(const std::string& name_or_path) {
  const auto presets = sim::model_presets();
  if (has_preset(presets, name_or_path)) return sim::model_preset(name_or_path);
  if (name_or_path.size() > 3 && name_or_path.substr(name_or_path.size() - 3) == ".pt") {
    return sched::Error{fmt::format("--model '{0}' is a TorchScript model, which the simulator reads through its "
                                    "profile: pipeworks profile --model {0} --input-shape ... -o MODEL.json, then "
                                    "--model MODEL.json (docs/your_model.md)",
                                    name_or_path)};
  }
  std::error_code ignored;
  if (std::filesystem::is_regular_file(name_or_path, ignored)) return sim::load_model_spec(name_or_path);
  return sched::Error{fmt::format("--model '{}' is neither a model preset ({}) nor a file", name_or_path,
                                  preset_names(presets))};
}

sched::Result<sim::ClusterSpec> resolve_cluster(const std::string& name_or_path, std::optional<int> nodes) {
  const auto presets = sim::cluster_presets();
  if (has_preset(presets, name_or_path)) return sim::cluster_preset(name_or_path, {.nodes = nodes});
  std::error_code ignored;
  if (std::filesystem::is_regular_file(name_or_path, ignored)) {
    if (nodes) return sched::Error{"--nodes applies only to the multinode cluster preset, not to a cluster file"};
    return sim::load_cluster_spec(name_or_path);
  }
  return sched::Error{fmt::format("--cluster '{}' is neither a cluster preset ({}) nor a file", name_or_path,
                                  preset_names(presets))};
}

sched::Result<PlanningInputs> resolve_planning_args(const PlanningArgs& args, bool& usage_error) {
  PlanningInputs inputs;
  usage_error = true;
  if (!args.memory_cap.empty()) {
    auto cap = sim::parse_bytes(args.memory_cap);
    if (!cap) return sched::Error{fmt::format("--memory-cap: {}", cap.error().message)};
    if (*cap <= 0) return sched::Error{"--memory-cap must be positive"};
    inputs.memory_cap_bytes = *cap;
  }
  auto optimizer = sim::parse_optimizer(args.optimizer);
  if (!optimizer) return sched::Error{fmt::format("--optimizer: {}", optimizer.error().message)};
  inputs.optimizer = *optimizer;
  usage_error = false;
  auto model = resolve_model(args.model);
  if (!model) return model.error();
  inputs.model = std::move(model).value();
  auto cluster = resolve_cluster(args.cluster, args.nodes);
  if (!cluster) return cluster.error();
  inputs.cluster = std::move(cluster).value();
  return inputs;
}

}  // namespace pipeworks::cli
