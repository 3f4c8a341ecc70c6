// The options `pipeworks sweep` and `pipeworks plan` share (--model, --model-spec, --cluster,
// --cluster-spec, --nodes, --memory-cap, --optimizer, --sweep-threads, --schedule,
// --virtual-stages) and how they become specs;
// `simulate` takes the spec options too. --model and --cluster name presets, --model-spec and
// --cluster-spec JSON files, as in `run`; a file given to --model or --cluster is still read,
// with a deprecation note.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/preset_size_options.h"
#include "cli/shared_defaults.h"
#include "sched/generators.h"
#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::cli {

// Which model and cluster: presets by name or spec files ("" = not given).
struct SpecArgs {
  std::string model;
  std::string model_spec;
  std::string cluster;
  std::string cluster_spec;
  std::optional<int> nodes;  // the DGX presets' node count
  PresetSizeArgs size;       // resizes the model preset
};

// --model, --model-spec, --cluster, --cluster-spec, --nodes and the preset size flags; `args`
// holds the defaults shown.
void add_spec_options(CLI::App& command, SpecArgs& args);

struct PlanningArgs {
  SpecArgs specs;
  std::string memory_cap;  // "" = none
  std::string optimizer = kDefaultOptimizer;
  int threads = 0;
};

void add_planning_options(CLI::App& command, PlanningArgs& args);

// The schedule kinds and stages per device a search compares (`sweep` and `plan`).
struct ScheduleSearchArgs {
  std::string schedules = "gpipe,1f1b,zb-h1,zb-h2";
  std::string virtual_stages = "2";
  const CLI::Option* virtual_stages_option = nullptr;  // set by add_schedule_search_options
};

// --schedule and --virtual-stages,-v; `args` holds the defaults shown.
void add_schedule_search_options(CLI::App& command, ScheduleSearchArgs& args);

struct ScheduleSearch {
  std::vector<sched::ScheduleKind> schedules;
  std::vector<int> virtual_stage_counts;
};

// Every error is bad usage and names its option.
sched::Result<ScheduleSearch> resolve_schedule_search(const ScheduleSearchArgs& args);

// The resolved specs; errors say which option was wrong and why.
struct PlanningInputs {
  sim::ModelSpec model;
  sim::ClusterSpec cluster;
  std::optional<sim::Bytes> memory_cap_bytes;
  sim::OptimizerKind optimizer = sim::OptimizerKind::kAdam;
};

// The spec file when one is given, else the preset (a file under the preset's option is read
// with a note on standard error naming `command`); the error lists the presets. With `cluster`, a
// preset costed from FLOPs runs at its devices' sustained FLOP/s unless --flops is given.
sched::Result<sim::ModelSpec> resolve_model(const SpecArgs& args, std::string_view command,
                                            const sim::ClusterSpec* cluster = nullptr);

// Ok when the preset size flags are absent, or resize a model preset within its ranges; their
// errors are usage errors (exit 2), so the commands check them before resolving the specs.
sched::Status check_preset_size_args(const SpecArgs& args);
sched::Result<sim::ClusterSpec> resolve_cluster(const SpecArgs& args, std::string_view command);

// Resolves everything; `usage_error` tells a malformed option (exit 2) from a bad input (exit 1).
sched::Result<PlanningInputs> resolve_planning_args(const PlanningArgs& args, std::string_view command,
                                                   bool& usage_error);

}  // namespace pipeworks::cli
