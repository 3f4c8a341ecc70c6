// The options `pipeworks sweep` and `pipeworks plan` share (--model, --cluster, --nodes,
// --memory-cap, --optimizer, --threads) and how they become specs: a name is a preset when
// one has it, otherwise a JSON file.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "sched/result.h"
#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/optimizer.h"

namespace pipeworks::cli {

struct PlanningArgs {
  std::string model;
  std::string cluster;
  std::optional<int> nodes;
  std::string memory_cap;  // "" = none
  std::string optimizer = "adam";
  int threads = 0;
};

void add_planning_options(CLI::App& command, PlanningArgs& args);

// The resolved specs; errors say which option was wrong and why.
struct PlanningInputs {
  sim::ModelSpec model;
  sim::ClusterSpec cluster;
  std::optional<sim::Bytes> memory_cap_bytes;
  sim::OptimizerKind optimizer = sim::OptimizerKind::kAdam;
};

// A preset of that name, else the JSON file at that path; the error lists the presets.
sched::Result<sim::ModelSpec> resolve_model(const std::string& name_or_path);
sched::Result<sim::ClusterSpec> resolve_cluster(const std::string& name_or_path, std::optional<int> nodes);

// Resolves everything; `usage_error` tells a malformed option (exit 2) from a bad input (exit 1).
sched::Result<PlanningInputs> resolve_planning_args(const PlanningArgs& args, bool& usage_error);

}  // namespace pipeworks::cli
