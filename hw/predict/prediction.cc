// The executor's cost model and predicted peaks (see prediction.h).
#include "hw/predict/prediction.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "hw/predict/peak_memory_walk.h"
#include "sim/batch_split.h"
#include "sim/cost_model_builder.h"
#include "sim/optimizer.h"

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

constexpr int kContentionRounds = 2;

sched::Result<sched::Nanoseconds> scaled_time(const sim::ScaledDuration& d, int size, double speed) {
  auto at = d.at(size);
  if (!at) return at.error();
  return static_cast<sched::Nanoseconds>(std::llround(static_cast<double>(*at) / speed));
}

// Bytes above the simulated stash while a stage's backward runs layers [begin, end) from the last
// down: at layer l the stashes of the layers after it are already freed, the gradient of its
// output (made by layer l+1, or received) is live, and its own temporaries come on top:
//   later = max over l of  transient(l) + output(l) [l < end-1] - sum_{j > l} stash(j),  >= 0
// In the step's first backward the parameter gradients of l and the layers after it are new:
//   first = max over l of  later's term + sum_{j >= l} grad(j)
// `profile` may be null (no transients known: 0).
sched::Result<StageExtraBytes> composed_backward_bytes(const Profile* profile, const sim::ModelSpec& spec,
                                                          int begin, int end, int size) {
  StageExtraBytes extra;
  sched::Bytes freed = 0;
  sched::Bytes grads = 0;
  for (int l = end - 1; l >= begin; --l) {
    const auto i = static_cast<std::size_t>(l);
    sched::Bytes transient = 0;
    if (profile != nullptr) {
      auto t = profile->layers[i].backward_transient.at(size);
      if (!t) return sched::Error{"predict: byte counts overflow"};
      transient = *t;
    }
    auto output = spec.layers[i].output_bytes.at(size);
    auto stash = spec.layers[i].stash_bytes.at(size);
    if (!output || !stash) return sched::Error{"predict: byte counts overflow"};
    grads += sim::gradient_bytes(spec.layers[i].param_bytes);
    const sched::Bytes term = transient + (l + 1 < end ? *output : 0) - freed;
    extra.later = std::max(extra.later, term);
    extra.first = std::max(extra.first, term + grads);
    freed += *stash;
  }
  return extra;
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

// Each stage's temporaries: measured on the stage as a whole when the profile has them for this
// partition, else composed from its layers.
sched::Result<std::vector<StageExtraBytes>> stage_extra_bytes(const Profile* profile, const sim::ModelSpec& spec,
                                                              const sim::Partition& partition, int size) {
  const auto k = static_cast<std::size_t>(partition.num_stages());
  if (profile != nullptr && profile->stage_boundaries == partition.boundaries &&
      profile->stage_extra_bytes.size() == k) {
    return profile->stage_extra_bytes;
  }
  std::vector<StageExtraBytes> extra(k);
  for (std::size_t s = 0; s < k; ++s) {
    const int stage = static_cast<int>(s);
    auto composed = composed_backward_bytes(profile, spec, partition.begin(stage), partition.end(stage), size);
    if (!composed) return composed.error();
    extra[s] = *composed;
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
  stage.backward_ns = at_speed(t.backward.alone);
  stage.recompute_ns = recompute ? at_speed(t.recompute.alone) : 0;
  // What resuming after a wait adds (measured where the replay had something to wait for).
  const auto resume = [&](const Timing& resumed, const Timing& alone) -> sched::Nanoseconds {
    if (resumed.median_ns <= 0) return 0;
    return std::max<sched::Nanoseconds>(0, at_speed(resumed) - at_speed(alone));
  };
  stage.resume_forward_ns = resume(t.forward.resumed, t.forward.alone);
  stage.resume_backward_ns = resume(t.backward.resumed, t.backward.alone);
  stage.resume_recompute_ns = recompute ? resume(t.recompute.resumed, t.recompute.alone) : 0;
  // The first of each kind in a step, as measured (0 where not measured: as the others).
  const auto first = [&](const Timing& timing) -> sched::Nanoseconds {
    return timing.median_ns > 0 ? at_speed(timing) : 0;
  };
  stage.first_forward_ns = first(t.forward.first);
  stage.first_backward_ns = first(t.backward.first);
  stage.first_recompute_ns = recompute ? first(t.recompute.first) : 0;
}

// Under re-materialization F runs without the graph and R is the forward that keeps it.
sched::Status apply_no_graph_forward(const Profile& profile, int begin, int end, int size, double speed,
                                     sim::StageCost& stage) {
  sched::Nanoseconds no_graph = 0;
  for (int l = begin; l < end; ++l) {
    auto t = scaled_time(profile.layers[static_cast<std::size_t>(l)].forward_no_grad, size, speed);
    if (!t) return t.error();
    no_graph += *t;
  }
  stage.recompute_ns = stage.forward_ns;
  stage.forward_ns = no_graph;
  return sched::Ok{};
}

// One simulation of the run on `cluster` (predict_run without the contention refinement).
sched::Result<Prediction> predict_on(const RunConfig& config, const sched::Schedule& schedule,
                                     const sim::Partition& partition, const sim::ModelSpec& spec,
                                     const sim::ClusterSpec& cluster, const Profile* profile,
                                     const ScheduleReplay* replay) {
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
  for (int s = 0; s < schedule.num_stages; ++s) {
    const double speed = cluster.devices[static_cast<std::size_t>(schedule.device_of(s))].relative_speed;
    sim::StageCost& stage = out.costs.stages[static_cast<std::size_t>(s)];
    if (replay != nullptr) {
      apply_replay_times(replay->stages[static_cast<std::size_t>(s)], speed, config.recompute, stage);
    } else if (profile != nullptr && config.recompute) {
      auto status = apply_no_graph_forward(*profile, partition.begin(s), partition.end(s), size, speed, stage);
      if (!status) return status.error();
    }
  }
  auto result = sim::simulate(schedule, out.costs);
  if (!result) return sched::Error{"predict: " + result.error().message};
  out.result = std::move(result).value();
  out.peak_activation_bytes = walk_peak_memory(out.result.timeline, schedule, out.costs, *extra);
  out.device_slowdown.assign(out.peak_activation_bytes.size(), 1.0);
  return out;
}

}  // namespace

std::vector<double> compute_overlap_fractions(const sched::Timeline& timeline) {
  using Interval = std::pair<sched::Nanoseconds, sched::Nanoseconds>;
  const auto devices = static_cast<std::size_t>(std::max(0, timeline.num_devices));
  std::vector<std::vector<Interval>> busy(devices);
  for (const sched::Span& span : timeline.spans) {
    if (span.lane != sched::Lane::kCompute || span.device < 0 || static_cast<std::size_t>(span.device) >= devices) {
      continue;
    }
    if (span.end_ns > span.start_ns) busy[static_cast<std::size_t>(span.device)].emplace_back(span.start_ns, span.end_ns);
  }
  std::vector<double> fractions(devices, 0.0);
  for (std::size_t d = 0; d < devices; ++d) {
    // The union of every other device's compute intervals, merged and sorted.
    std::vector<Interval> others;
    for (std::size_t o = 0; o < devices; ++o) {
      if (o != d) others.insert(others.end(), busy[o].begin(), busy[o].end());
    }
    std::sort(others.begin(), others.end());
    std::vector<Interval> merged;
    for (const Interval& i : others) {
      if (!merged.empty() && i.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, i.second);
      } else {
        merged.push_back(i);
      }
    }
    sched::Nanoseconds total = 0;
    sched::Nanoseconds shared = 0;
    for (const Interval& own : busy[d]) {
      total += own.second - own.first;
      const auto first = std::lower_bound(merged.begin(), merged.end(), Interval{own.first, own.first},
                                          [](const Interval& a, const Interval& b) { return a.second < b.first; });
      for (auto it = first; it != merged.end() && it->first < own.second; ++it) {
        shared += std::max<sched::Nanoseconds>(0, std::min(own.second, it->second) - std::max(own.first, it->first));
      }
    }
    fractions[d] = total > 0 ? static_cast<double>(shared) / static_cast<double>(total) : 0.0;
  }
  return fractions;
}

sched::Result<Prediction> predict_run(const RunConfig& config, const sched::Schedule& schedule,
                                      const sim::Partition& partition, const sim::ModelSpec& spec,
                                      const sim::ClusterSpec& cluster, const Profile* profile,
                                      const ScheduleReplay* replay) {
  if (cluster.num_devices() < schedule.num_devices()) {
    return predict_on(config, schedule, partition, spec, cluster, profile, replay);  // its error
  }
  // Each device's contention factor c, and the cluster at full speed ("alone"). The profile's
  // cluster carries its whole-model c as a uniform slow-down, which is taken off; a replay's
  // stage times are this machine's alone, so its devices run at speed 1.
  sim::ClusterSpec alone = cluster;
  std::vector<double> factor(static_cast<std::size_t>(schedule.num_devices()), 1.0);
  if (replay != nullptr) {
    for (sim::DeviceSpec& d : alone.devices) d.relative_speed = 1.0;
    for (std::size_t d = 0; d < factor.size() && d < replay->device_contention.size(); ++d) {
      factor[d] = replay->device_contention[d];
    }
  } else if (profile != nullptr && profile->machine.contention_factor > 1.0) {
    for (sim::DeviceSpec& d : alone.devices) d.relative_speed *= profile->machine.contention_factor;
    factor.assign(factor.size(), profile->machine.contention_factor);
  }
  const bool contended = schedule.num_devices() > 1 && std::any_of(factor.begin(), factor.end(), [](double f) {
                           return f > 1.0;
                         });
  if (!contended) return predict_on(config, schedule, partition, spec, alone, profile, replay);
  // Simulate at full speed, then put back on each device only the share of its compute time
  // that overlaps another device's compute (bubbles run alone). Refined twice: the overlap moves.
  auto prediction = predict_on(config, schedule, partition, spec, alone, profile, replay);
  for (int round = 0; round < kContentionRounds && prediction; ++round) {
    const std::vector<double> overlap = compute_overlap_fractions(prediction->result.timeline);
    sim::ClusterSpec adjusted = alone;
    std::vector<double> slowdown(overlap.size(), 1.0);
    for (std::size_t d = 0; d < overlap.size() && d < adjusted.devices.size(); ++d) {
      slowdown[d] = 1.0 + (factor[d] - 1.0) * overlap[d];
      adjusted.devices[d].relative_speed /= slowdown[d];
    }
    prediction = predict_on(config, schedule, partition, spec, adjusted, profile, replay);
    if (prediction) prediction->device_slowdown = slowdown;
  }
  return prediction;
}

}  // namespace pipeworks::hw
