// The executor's cost model and predicted peaks (see prediction.h).
#include "hw/predict/prediction.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/executor_peak.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/stage_extra_bytes.h"
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

// Each stage's bytes beyond the stashes from the spec (sim/plan/stage_extra_bytes.h), with the
// temporaries the profile measured on each stage as a whole where it has them for this partition.
sched::Result<std::vector<StageExtraBytes>> stage_extra_bytes(const Profile* profile, const sim::ModelSpec& spec,
                                                              const sim::Partition& partition, int size) {
  auto extra = sim::spec_stage_extra_bytes(spec, partition, size);
  if (!extra) return sched::Error{"predict: " + extra.error().message};
  const bool measured = profile != nullptr && profile->stage_boundaries == partition.boundaries &&
                        profile->stage_extra_bytes.size() == extra->size();
  for (std::size_t s = 0; measured && s < extra->size(); ++s) {
    const sched::Bytes held = (*extra)[s].split_held;
    (*extra)[s] = profile->stage_extra_bytes[s];
    (*extra)[s].split_held = held;
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
  sim::set_stage_extra_bytes(out.costs, *extra);
  if (replay != nullptr) apply_replay(*replay, schedule, cluster, config.recompute, out.costs);
  if (replicas != nullptr) apply_replica_costs(*replicas, out.costs);
  auto result = sim::simulate(schedule, out.costs);
  if (!result) return sched::Error{"predict: " + result.error().message};
  out.result = std::move(result).value();
  out.peak_activation_bytes = sim::walk_peak_memory(out.result.timeline, schedule, out.costs);
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
