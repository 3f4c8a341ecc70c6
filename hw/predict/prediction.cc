// The executor's cost model and predicted peaks (see prediction.h).
#include "hw/predict/prediction.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "hw/predict/peak_memory_walk.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/spec/batch_split.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::hw {

void apply_executor_memory(sim::CostModel& costs, bool recompute) {
  if (!recompute) return;
  const std::size_t k = costs.stages.size();
  for (std::size_t s = 0; s < k; ++s) {
    sim::StageCost& stage = costs.stages[s];
    stage.input_bytes = s + 1 < k ? stage.output_bytes : 0;
  }
}

namespace {

// Bytes above the simulated stash while a stage's backward runs layers [begin, end) from the last
// down: at layer l the stashes of the layers after it are already freed, the gradient of its
// output (made by layer l+1, or received) is live, and its own temporaries come on top:
//   later = max over l of  transient(l) + output(l) [l < end-1] - sum_{j > l} stash(j),  >= 0
// In the step's first backward the parameter gradients of l and the layers after it are new:
//   first = max over l of  later's term + sum_{j >= l} grad(j)
// The transients come from the spec (0 where it states none).
sched::Result<StageExtraBytes> composed_backward_bytes(const sim::ModelSpec& spec, int begin, int end, int size) {
  StageExtraBytes extra;
  sched::Bytes freed = 0;
  sched::Bytes grads = 0;
  for (int l = end - 1; l >= begin; --l) {
    const auto i = static_cast<std::size_t>(l);
    auto transient = spec.layers[i].backward_transient_bytes.at(size);
    auto output = spec.layers[i].output_bytes.at(size);
    auto stash = spec.layers[i].stash_bytes.at(size);
    if (!transient || !output || !stash) return sched::Error{"predict: byte counts overflow"};
    grads += sim::gradient_bytes(spec.layers[i].param_bytes);
    const sched::Bytes term = *transient + (l + 1 < end ? *output : 0) - freed;
    extra.later = std::max(extra.later, term);
    extra.first = std::max(extra.first, term + grads);
    freed += *stash;
  }
  return extra;
}

// The spec's measured temporaries of a stage's layer range at `size`.
sched::Result<StageExtraBytes> range_bytes(const sim::StageTemporaries& t, int size) {
  auto forward = t.forward.at(size);
  auto no_grad = t.forward_no_grad.at(size);
  auto first = t.first_backward.at(size);
  auto later = t.later_backward.at(size);
  if (!forward || !no_grad || !first || !later) return sched::Error{"predict: byte counts overflow"};
  return StageExtraBytes{*first, *later, *forward, *no_grad};
}

sched::Status check_inputs(const sched::Schedule& schedule, const sim::Partition& partition,
                           const sim::ModelSpec& spec, const sim::ClusterSpec& cluster, const Profile* profile,
                           const ScheduleReplay* replay) {
  if (partition.num_stages() != schedule.num_stages) {
    return sched::Error{fmt::format("predict: partition has {} stages, the schedule {}", partition.num_stages(),
                                    schedule.num_stages)};
  }
  if (partition.boundaries.back() != spec.num_layers()) {
    return sched::Error{fmt::format("predict: the model spec has {} layers, the partition cuts {}", spec.num_layers(),
                                    partition.boundaries.back())};
  }
  if (profile != nullptr && static_cast<int>(profile->layers.size()) != spec.num_layers()) {
    return sched::Error{"predict: the profile does not describe the spec's layers"};
  }
  if (replay != nullptr && (replay->stages.size() != static_cast<std::size_t>(schedule.num_stages) ||
                            replay->device_contention.size() != static_cast<std::size_t>(schedule.num_devices()))) {
    return sched::Error{"predict: the stage replay was measured on another schedule"};
  }
  if (cluster.num_devices() < schedule.num_devices()) {
    return sched::Error{fmt::format("predict: the cluster spec has {} devices, the schedule uses {}",
                                    cluster.num_devices(), schedule.num_devices())};
  }
  return sched::Ok{};
}

// What a stage holds from I to W (hw/exec/stage_compute.h): on the first stage, whose I has
// nothing to compute, its output's gradient (the last stage's is its loss's, a scalar, counted as
// nothing); on the others, each layer's split_held_bytes (default: its output's gradient).
sched::Result<sched::Bytes> split_held_bytes(const sim::ModelSpec& spec, int begin, int end, bool last, int size) {
  if (begin == 0) {
    if (last) return sched::Bytes{0};
    return spec.layers[static_cast<std::size_t>(end - 1)].output_bytes.at(size);
  }
  sched::Bytes held = 0;
  for (int l = begin; l < end; ++l) {
    const sim::LayerSpec& layer = spec.layers[static_cast<std::size_t>(l)];
    const bool loss_output = last && l + 1 == end && !layer.split_held_bytes;
    auto bytes = loss_output ? sched::Result<sched::Bytes>{0} : layer.split_held_bytes.value_or(layer.output_bytes).at(size);
    if (!bytes || __builtin_add_overflow(held, *bytes, &held)) return sched::Error{"predict: byte counts overflow"};
  }
  return held;
}

// Each stage's temporaries: measured on the stage as a whole when the profile has them for this
// partition, else from the spec's measured temporaries of the stage's layer range, else composed
// from its layers; what a split backward holds from I to W from the spec.
sched::Result<std::vector<StageExtraBytes>> stage_temporaries(const Profile* profile, const sim::ModelSpec& spec,
                                                              const sim::Partition& partition, int size);

sched::Result<std::vector<StageExtraBytes>> stage_extra_bytes(const Profile* profile, const sim::ModelSpec& spec,
                                                              const sim::Partition& partition, int size) {
  auto extra = stage_temporaries(profile, spec, partition, size);
  if (!extra) return extra.error();
  for (int s = 0; s < partition.num_stages(); ++s) {
    auto held = split_held_bytes(spec, partition.begin(s), partition.end(s), s + 1 == partition.num_stages(), size);
    if (!held) return held.error();
    (*extra)[static_cast<std::size_t>(s)].split_held = *held;
  }
  return extra;
}

sched::Result<std::vector<StageExtraBytes>> stage_temporaries(const Profile* profile, const sim::ModelSpec& spec,
                                                              const sim::Partition& partition, int size) {
  const auto k = static_cast<std::size_t>(partition.num_stages());
  if (profile != nullptr && profile->stage_boundaries == partition.boundaries &&
      profile->stage_extra_bytes.size() == k) {
    return profile->stage_extra_bytes;
  }
  std::vector<StageExtraBytes> extra(k);
  for (std::size_t s = 0; s < k; ++s) {
    const int stage = static_cast<int>(s);
    const sim::StageTemporaries* measured = spec.temporaries_of(partition.begin(stage), partition.end(stage));
    auto bytes = measured != nullptr ? range_bytes(*measured, size)
                                     : composed_backward_bytes(spec, partition.begin(stage), partition.end(stage), size);
    if (!bytes) return bytes.error();
    extra[s] = *bytes;
  }
  return extra;
}

// A stage's times as the replay measured them in schedule order (F already without the graph
// where the stage re-materializes), at the device's speed.
void apply_replay_times(const StageTimes& t, double speed, bool recompute, sim::StageCost& stage) {
  const auto at_speed = [speed](const Timing& timing) {
    return static_cast<sched::Nanoseconds>(std::llround(static_cast<double>(timing.median_ns) / speed));
  };
  stage.forward_ns = at_speed(t.forward.alone);
  stage.forward_no_grad_ns = 0;  // F as measured, without the graph where the stage re-materializes
  stage.backward_input_ns = at_speed(t.backward_input.alone);
  stage.backward_weight_ns = at_speed(t.backward_weight.alone);
  // A stage whose every backward is split has no B measured: its whole backward is I + W.
  const bool whole = t.backward.alone.median_ns > 0;
  stage.backward_ns = whole ? at_speed(t.backward.alone) : stage.backward_input_ns + stage.backward_weight_ns;
  stage.recompute_ns = recompute ? at_speed(t.recompute.alone) : 0;
  // What resuming after a wait adds (measured where the replay had something to wait for).
  const auto resume = [&](const Timing& resumed, const Timing& alone) -> sched::Nanoseconds {
    if (resumed.median_ns <= 0) return 0;
    return std::max<sched::Nanoseconds>(0, at_speed(resumed) - at_speed(alone));
  };
  stage.resume_forward_ns = resume(t.forward.resumed, t.forward.alone);
  stage.resume_backward_ns = whole ? resume(t.backward.resumed, t.backward.alone)
                                   : resume(t.backward_input.resumed, t.backward_input.alone);
  stage.resume_recompute_ns = recompute ? resume(t.recompute.resumed, t.recompute.alone) : 0;
  // The first of each kind in a step, as measured (0 where not measured: as the others).
  const auto first = [&](const Timing& timing) -> sched::Nanoseconds {
    return timing.median_ns > 0 ? at_speed(timing) : 0;
  };
  stage.first_forward_ns = first(t.forward.first);
  stage.first_backward_ns = first(t.backward.first);  // no first-of-step cost for I and W (sim::StageCost)
  stage.first_recompute_ns = recompute ? first(t.recompute.first) : 0;
}

// The replay's stage times and each device's measured contention factor, in place of the spec's.
void apply_replay(const ScheduleReplay& replay, const sched::Schedule& schedule, const sim::ClusterSpec& cluster,
                  bool recompute, sim::CostModel& costs) {
  for (int s = 0; s < schedule.num_stages; ++s) {
    const double speed = cluster.devices[static_cast<std::size_t>(schedule.device_of(s))].relative_speed;
    apply_replay_times(replay.stages[static_cast<std::size_t>(s)], speed, recompute,
                       costs.stages[static_cast<std::size_t>(s)]);
  }
  costs.contention_factor.assign(static_cast<std::size_t>(costs.num_devices), 1.0);
  costs.contention_group.assign(static_cast<std::size_t>(costs.num_devices), 0);
  for (std::size_t d = 0; d < costs.contention_factor.size() && d < replay.device_contention.size(); ++d) {
    costs.contention_factor[d] = std::max(1.0, replay.device_contention[d]);
  }
}

void apply_replica_costs(const std::vector<ReplicaStageCosts>& replicas, sim::CostModel& costs) {
  for (std::size_t s = 0; s < costs.stages.size() && s < replicas.size(); ++s) {
    sim::StageCost& stage = costs.stages[s];
    stage.reduce_grad_ns = replicas[s].reduce_grad_ns;
    stage.reduce_grad_buckets = 1;
    stage.param_gather_ns = replicas[s].param_gather_ns;
    stage.optimizer_step_ns = replicas[s].optimizer_step_ns;
  }
}

// The run simulated on `cluster` (the simulator applies its contention; sim/engine/contention.h).
sched::Result<Prediction> predict_on(const RunConfig& config, const sched::Schedule& schedule,
                                     const sim::Partition& partition, const sim::ModelSpec& spec,
                                     const sim::ClusterSpec& cluster, const Profile* profile,
                                     const ScheduleReplay* replay, const std::vector<ReplicaStageCosts>* replicas) {
  auto microbatch = sim::microbatch_size(config.batch_size, config.num_microbatches);
  if (!microbatch) return sched::Error{"predict: " + microbatch.error().message};
  const int size = *microbatch;
  if (auto status = check_inputs(schedule, partition, spec, cluster, profile, replay); !status) return status.error();
  Prediction out;
  auto costs = sim::build_cost_model(spec, cluster, partition, schedule.placement, size, config.optimizer.kind);
  if (!costs) return sched::Error{"predict: " + costs.error().message};
  out.costs = std::move(costs).value();
  apply_executor_memory(out.costs, config.recompute);
  auto extra = stage_extra_bytes(profile, spec, partition, size);
  if (!extra) return extra.error();
  if (replay != nullptr) apply_replay(*replay, schedule, cluster, config.recompute, out.costs);
  if (replicas != nullptr) apply_replica_costs(*replicas, out.costs);
  auto result = sim::simulate(schedule, out.costs);
  if (!result) return sched::Error{"predict: " + result.error().message};
  out.result = std::move(result).value();
  out.peak_activation_bytes = walk_peak_memory(out.result.timeline, schedule, out.costs, *extra);
  for (const sim::DeviceResult& d : out.result.devices) out.device_slowdown.push_back(d.contention_slowdown);
  return out;
}

}  // namespace

sched::Result<Prediction> predict_run(const RunConfig& config, const sched::Schedule& schedule,
                                      const sim::Partition& partition, const sim::ModelSpec& spec,
                                      const sim::ClusterSpec& cluster, const Profile* profile,
                                      const ScheduleReplay* replay,
                                      const std::vector<ReplicaStageCosts>* replicas) {
  if (replay == nullptr) return predict_on(config, schedule, partition, spec, cluster, profile, nullptr, replicas);
  // A replay's times are this machine's, measured alone: devices at speed 1, each with the
  // contention the replay measured instead of the cluster's.
  sim::ClusterSpec alone = cluster;
  for (sim::DeviceSpec& d : alone.devices) d.relative_speed = 1.0;
  alone.contention_factor = 1.0;
  return predict_on(config, schedule, partition, spec, alone, profile, replay, replicas);
}

}  // namespace pipeworks::hw
