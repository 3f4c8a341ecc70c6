// Shared option wiring of the planning commands (see planning_args.h).
#include "cli/planning_args.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/arg_checks.h"
#include "cli/renamed_option.h"
#include "sim/plan/sweep.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/int_ranges.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/units.h"

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

bool is_file(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored);
}

void note_file_under_preset_option(std::string_view command, std::string_view option, const std::string& path,
                                   std::string_view file_option) {
  std::cerr << fmt::format("pipeworks {}: note: a spec file under {} is deprecated; use {} {}\n", command, option,
                           file_option, path);
}

}  // namespace

void add_spec_options(CLI::App& command, SpecArgs& args) {
  CLI::Option* model = command.add_option("--model", args.model, "Model preset (pipeworks presets)");
  CLI::Option* model_spec = command.add_option("--model-spec", args.model_spec, "Model spec JSON file (docs/model_spec.md)");
  CLI::Option* cluster = command.add_option("--cluster", args.cluster, "Cluster preset (pipeworks presets)");
  CLI::Option* cluster_spec =
      command.add_option("--cluster-spec", args.cluster_spec, "Cluster spec JSON file (docs/model_spec.md, \"Cluster spec\")");
  if (!args.model.empty()) model->capture_default_str();
  if (!args.cluster.empty()) cluster->capture_default_str();
  model->excludes(model_spec);
  cluster->excludes(cluster_spec);
  command.add_option("--nodes", args.nodes, "Number of nodes for the dgx-a100, dgx-h100, dgx-h200 and multinode cluster presets (8 GPUs each)")
      ->check(integer_from(1, sim::kMaxPresetNodes))
      ->excludes(cluster_spec);
  add_preset_size_options(command, args.size);
}

void add_planning_options(CLI::App& command, PlanningArgs& args) {
  add_spec_options(command, args.specs);
  command.add_option("--memory-cap", args.memory_cap,
                     "Per-device memory cap, e.g. 40GiB (the smaller of it and the device memory applies)");
  command.add_option("--optimizer", args.optimizer, "Optimizer whose state counts towards memory")
      ->check(CLI::IsMember(std::vector<std::string>{"sgd", "momentum", "adam"}))
      ->capture_default_str();
  add_renamed_option(command, "--sweep-threads", "--threads", args.threads,
                     "Threads simulating configurations in parallel (0: every core)", [](CLI::Option& o) {
                       o.check(integer_from(0, sim::kMaxSweepThreads))->capture_default_str();
                     });
}

void add_schedule_search_options(CLI::App& command, ScheduleSearchArgs& args) {
  command.add_option("--schedule", args.schedules,
                     "Schedules searched, e.g. gpipe,1f1b (any kind: interleaved-1f1b, looped-bfs, zb-v, dualpipe-v, "
                     "interleaved-zb too)")
      ->capture_default_str();
  args.virtual_stages_option = command.add_option("--virtual-stages,-v", args.virtual_stages,
                     "Stages per device searched for interleaved-1f1b, looped-bfs and interleaved-zb, e.g. 2,4 (zb-v and "
                     "dualpipe-v: 2)")
      ->capture_default_str();
}

sched::Result<ScheduleSearch> resolve_schedule_search(const ScheduleSearchArgs& args) {
  auto names = sim::parse_name_list(args.schedules, sim::sweepable_schedule_names());
  if (!names) return sched::Error{fmt::format("--schedule: {}", names.error().message)};
  auto virtual_stages = sim::parse_int_list(args.virtual_stages);
  if (!virtual_stages) return sched::Error{fmt::format("--virtual-stages: {}", virtual_stages.error().message)};
  ScheduleSearch out;
  for (const auto name : *names) out.schedules.push_back(sched::parse_schedule_kind(name).value());
  out.virtual_stage_counts = std::move(virtual_stages).value();
  const bool read = std::any_of(out.schedules.begin(), out.schedules.end(), sim::searches_virtual_stage_counts);
  if (args.virtual_stages_option != nullptr && args.virtual_stages_option->count() > 0 && !read) {
    std::vector<std::string_view> readers;
    for (const std::string_view name : sim::sweepable_schedule_names()) {
      if (sim::searches_virtual_stage_counts(sched::parse_schedule_kind(name).value())) readers.push_back(name);
    }
    return sched::Error{fmt::format("--virtual-stages: no schedule searched takes it (it applies to {}; zb-v and "
                                    "dualpipe-v always have 2)",
                                    fmt::join(readers, ", "))};
  }
  return out;
}

sched::Status check_preset_size_args(const SpecArgs& args) {
  if (!args.size.any()) return sched::Ok{};
  const bool preset = !args.model.empty() && args.model_spec.empty() && has_preset(sim::model_presets(), args.model);
  if (!preset) {
    return sched::Error{"the preset size flags (--layers, --model-width, ...) resize a model preset; a spec file is "
                        "taken as written"};
  }
  auto sized = sized_model_preset(args.model, args.size);
  if (!sized) return sized.error();
  return sched::Ok{};
}

sched::Result<sim::ModelSpec> resolve_model(const SpecArgs& args, std::string_view command,
                                            const sim::ClusterSpec* cluster) {
  const bool preset = !args.model.empty() && args.model_spec.empty() && has_preset(sim::model_presets(), args.model);
  if (args.size.any() && !preset) {
    return sched::Error{"the preset size flags (--layers, --model-width, ...) resize a model preset; a spec file is "
                        "taken as written"};
  }
  if (!args.model_spec.empty()) return sim::load_model_spec(args.model_spec);
  const std::string& name = args.model;
  if (name.empty()) return sched::Error{"--model or --model-spec is required"};
  const auto presets = sim::model_presets();
  if (preset) return sized_model_preset(name, args.size, cluster);
  if (name.size() > 3 && name.substr(name.size() - 3) == ".pt") {
    return sched::Error{fmt::format("--model '{0}' is a TorchScript model, which the simulator reads through its "
                                    "profile: pipeworks profile --model {0} --input-shape ... -o MODEL.json, then "
                                    "--model-spec MODEL.json (docs/your_model.md)",
                                    name)};
  }
  if (!is_file(name)) {
    return sched::Error{fmt::format("--model '{}' is not a model preset ({}); a spec file goes to --model-spec", name,
                                    preset_names(presets))};
  }
  note_file_under_preset_option(command, "--model", name, "--model-spec");
  return sim::load_model_spec(name);
}

sched::Result<sim::ClusterSpec> resolve_cluster(const SpecArgs& args, std::string_view command) {
  if (!args.cluster_spec.empty()) return sim::load_cluster_spec(args.cluster_spec);
  const std::string& name = args.cluster;
  if (name.empty()) return sched::Error{"--cluster or --cluster-spec is required"};
  const auto presets = sim::cluster_presets();
  if (has_preset(presets, name)) return sim::cluster_preset(name, {.nodes = args.nodes});
  if (!is_file(name)) {
    return sched::Error{fmt::format("--cluster '{}' is not a cluster preset ({}); a spec file goes to --cluster-spec",
                                    name, preset_names(presets))};
  }
  if (args.nodes) return sched::Error{"--nodes applies only to the DGX cluster presets, not to a cluster file"};
  note_file_under_preset_option(command, "--cluster", name, "--cluster-spec");
  return sim::load_cluster_spec(name);
}

sched::Result<PlanningInputs> resolve_planning_args(const PlanningArgs& args, std::string_view command,
                                                   bool& usage_error) {
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
  if (args.specs.model.empty() && args.specs.model_spec.empty()) return sched::Error{"--model or --model-spec is required"};
  if (args.specs.cluster.empty() && args.specs.cluster_spec.empty()) {
    return sched::Error{"--cluster or --cluster-spec is required"};
  }
  if (auto size = check_preset_size_args(args.specs); !size) return size.error();
  usage_error = false;
  auto cluster = resolve_cluster(args.specs, command);
  if (!cluster) return cluster.error();
  inputs.cluster = std::move(cluster).value();
  auto model = resolve_model(args.specs, command, &inputs.cluster);
  if (!model) return model.error();
  inputs.model = std::move(model).value();
  return inputs;
}

}  // namespace pipeworks::cli
