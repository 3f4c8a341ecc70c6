// Specs -> synthesis problem (problem_from_specs.h).
#include "sim/synth/problem_from_specs.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/limits.h"
#include "sched/placement.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/stage_extra_bytes.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::sim {
namespace {

// The given partition when it covers the model in K stages, else the uniform one.
sched::Result<Partition> stage_partition(const ModelSpec& model, const SynthesisSetup& setup) {
  const int layers = static_cast<int>(model.layers.size());
  if (!setup.partition) {
    auto uniform = uniform_partition(layers, setup.num_stages);
    if (!uniform) return sched::Error{fmt::format("model '{}': {}", model.name, uniform.error().message)};
    return uniform;
  }
  auto checked = explicit_partition(setup.partition->boundaries, layers);
  if (!checked) return sched::Error{fmt::format("model '{}': partition {}", model.name, checked.error().message)};
  if (checked->num_stages() != setup.num_stages) {
    return sched::Error{fmt::format("the partition has {} stages, the problem {}", checked->num_stages(),
                                    setup.num_stages)};
  }
  return checked;
}

// The given placement when it places K stages on devices 0..D-1, none idle, and the cluster has
// D devices; else stage s on device s (more stages than devices an error).
sched::Result<std::vector<int>> stage_placement(const SynthesisSetup& setup, const ClusterSpec& cluster) {
  if (setup.placement.empty()) return default_placement(setup.num_stages, cluster);
  const int devices = *std::max_element(setup.placement.begin(), setup.placement.end()) + 1;
  const auto problems = sched::placement_problems(setup.placement, setup.num_stages, std::max(devices, 0));
  if (!problems.empty()) {
    return sched::Error{fmt::format("placement {}: {}", fmt::join(setup.placement, ","), problems.front().message)};
  }
  if (devices > cluster.num_devices()) {
    return sched::Error{fmt::format("placement {} needs {} devices, but cluster '{}' has {}",
                                    fmt::join(setup.placement, ","), devices, cluster.name, cluster.num_devices())};
  }
  return setup.placement;
}

}  // namespace

sched::Result<int> synthesis_microbatch_size(const SynthesisSetup& setup) {
  const int batch = setup.batch.value_or(setup.num_microbatches * kDefaultSamplesPerMicrobatch);
  auto split = microbatch_size(batch, setup.num_microbatches);
  if (!split) {
    return sched::Error{fmt::format("batch {} and {} micro-batches: {}", batch, setup.num_microbatches,
                                    split.error().message)};
  }
  return split;
}

sched::Result<SpecSynthesis> problem_from_specs(const ModelSpec& model, const ClusterSpec& cluster,
                                                const SynthesisSetup& setup, const SearchOptions& options) {
  if (auto size = sched::check_schedule_size(setup.num_stages, setup.num_microbatches); !size) return size.error();
  auto split = synthesis_microbatch_size(setup);
  if (!split) return split.error();
  auto placement = stage_placement(setup, cluster);
  if (!placement) return placement.error();
  auto partition = stage_partition(model, setup);
  if (!partition) return partition.error();
  auto costs = build_cost_model(model, cluster, *partition, *placement, *split, setup.optimizer);
  if (!costs) return costs.error();
  auto extra = spec_stage_extra_bytes(model, *partition, *split);
  if (!extra) return extra.error();
  set_stage_extra_bytes(*costs, *extra);
  SpecSynthesis out;
  out.problem.num_stages = setup.num_stages;
  out.problem.num_microbatches = setup.num_microbatches;
  out.problem.costs = std::move(costs).value();
  out.problem.memory_cap_bytes = setup.memory_cap_bytes;
  out.problem.placement = setup.placement;
  out.inputs = SynthesisInputs{model.name, cluster.name, *split, options.time_limit_s, options.seed, {}};
  return out;
}

}  // namespace pipeworks::sim
