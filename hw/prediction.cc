// The executor's cost model and predicted peaks (see prediction.h).
#include "hw/prediction.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/cost_model_builder.h"

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
//   extra = max over l of  transient(l) + output(l) [l < end-1] - sum_{j > l} stash(j),  >= 0
sched::Result<sched::Bytes> backward_extra_bytes(const Profile& profile, const sim::ModelSpec& spec, int begin,
                                                 int end, int size) {
  sched::Bytes extra = 0;
  sched::Bytes freed = 0;
  for (int l = end - 1; l >= begin; --l) {
    const auto i = static_cast<std::size_t>(l);
    auto transient = profile.layers[i].backward_transient.at(size);
    auto output = spec.layers[i].output_bytes.at(size);
    auto stash = spec.layers[i].stash_bytes.at(size);
    if (!transient || !output || !stash) return sched::Error{"predict: byte counts overflow"};
    extra = std::max(extra, *transient + (l + 1 < end ? *output : 0) - freed);
    freed += *stash;
  }
  return extra;
}

// One simulation of the run on `cluster` (predict_run without the contention refinement).
sched::Result<Prediction> predict_on(const RunConfig& config, const sched::Schedule& schedule,
                                     const sim::Partition& partition, const sim::ModelSpec& spec,
                                     const sim::ClusterSpec& cluster, const Profile* profile) {
  if (config.num_microbatches < 1 || config.batch_size % config.num_microbatches != 0) {
    return sched::Error{"predict: the batch does not split into equal micro-batches"};
  }
  const int size = config.batch_size / config.num_microbatches;
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
  if (cluster.num_devices() < schedule.num_devices()) {
    return sched::Error{fmt::format("predict: the cluster spec has {} devices, the schedule uses {}",
                                    cluster.num_devices(), schedule.num_devices())};
  }
  Prediction out;
  auto costs = sim::build_cost_model(spec, cluster, partition, schedule.placement, size, config.optimizer.kind);
  if (!costs) return sched::Error{"predict: " + costs.error().message};
  out.costs = std::move(costs).value();
  apply_executor_memory(out.costs, config.recompute);

  std::vector<sched::Bytes> transient(static_cast<std::size_t>(schedule.num_stages), 0);
  if (profile != nullptr) {
    for (int s = 0; s < schedule.num_stages; ++s) {
      const double speed = cluster.devices[static_cast<std::size_t>(schedule.device_of(s))].relative_speed;
      sim::StageCost& stage = out.costs.stages[static_cast<std::size_t>(s)];
      sched::Nanoseconds no_graph = 0;
      for (int l = partition.begin(s); l < partition.end(s); ++l) {
        const LayerProfile& layer = profile->layers[static_cast<std::size_t>(l)];
        auto t = scaled_time(layer.forward_no_grad, size, speed);
        if (!t) return t.error();
        no_graph += *t;
      }
      if (profile->stage_boundaries == partition.boundaries &&
          profile->stage_backward_extra_bytes.size() == static_cast<std::size_t>(schedule.num_stages)) {
        transient[static_cast<std::size_t>(s)] = profile->stage_backward_extra_bytes[static_cast<std::size_t>(s)];
      } else {
        auto extra = backward_extra_bytes(*profile, spec, partition.begin(s), partition.end(s), size);
        if (!extra) return extra.error();
        transient[static_cast<std::size_t>(s)] = *extra;
      }
      // Under re-materialization F runs without the graph and R is the forward that keeps it.
      if (config.recompute) {
        stage.recompute_ns = stage.forward_ns;
        stage.forward_ns = no_graph;
      }
    }
  }
  auto result = sim::simulate(schedule, out.costs);
  if (!result) return sched::Error{"predict: " + result.error().message};
  out.result = std::move(result).value();
  out.peak_activation_bytes.assign(static_cast<std::size_t>(schedule.num_devices()), 0);
  std::vector<sched::Bytes> device_transient(out.peak_activation_bytes.size(), 0);
  for (int s = 0; s < schedule.num_stages; ++s) {
    const auto d = static_cast<std::size_t>(schedule.device_of(s));
    out.peak_activation_bytes[d] += out.costs.stages[static_cast<std::size_t>(s)].grad_bytes;
    device_transient[d] = std::max(device_transient[d], transient[static_cast<std::size_t>(s)]);
  }
  for (std::size_t d = 0; d < out.peak_activation_bytes.size(); ++d) {
    out.peak_activation_bytes[d] += out.result.devices[d].memory.peak_activation_bytes + device_transient[d];
  }
  const std::vector<sched::Bytes> held = held_input_grad_growth(out.result.timeline, schedule, out.costs);
  for (std::size_t d = 0; d < out.peak_activation_bytes.size(); ++d) out.peak_activation_bytes[d] += held[d];
  out.device_slowdown.assign(out.peak_activation_bytes.size(), 1.0);
  return out;
}

}  // namespace

// Walks each device's simulated memory steps with the held input gradients added:
//   device(s):  ... B(s,m) ends: +input grad ............ B(s-1,m) ends: -input grad ...
std::vector<sched::Bytes> held_input_grad_growth(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                                 const sim::CostModel& costs) {
  const auto devices = static_cast<std::size_t>(schedule.num_devices());
  // (time, delta of memory, delta of held gradients) per device
  std::vector<std::vector<std::tuple<sched::Nanoseconds, sched::Bytes, sched::Bytes>>> events(devices);
  std::vector<sched::Bytes> previous(devices, 0);
  for (const sched::MemorySample& m : timeline.memory) {
    const auto d = static_cast<std::size_t>(m.device);
    if (d >= devices) continue;
    events[d].emplace_back(m.time_ns, m.bytes - previous[d], 0);
    previous[d] = m.bytes;
  }
  for (const sched::Span& span : timeline.spans) {
    if (span.lane != sched::Lane::kCompute || span.action.kind != sched::ActionKind::kBackward) continue;
    const int s = span.action.stage;
    // B(s,m) makes the gradient of s's input; B(s,m) for s < K-1 consumes the one of s+1.
    if (s > 0) {
      const auto d = static_cast<std::size_t>(schedule.device_of(s));
      events[d].emplace_back(span.end_ns, 0, costs.stages[static_cast<std::size_t>(s - 1)].output_bytes);
    }
    if (s + 1 < schedule.num_stages) {
      const auto d = static_cast<std::size_t>(schedule.device_of(s + 1));
      events[d].emplace_back(span.end_ns, 0, -costs.stages[static_cast<std::size_t>(s)].output_bytes);
    }
  }
  std::vector<sched::Bytes> growth(devices, 0);
  for (std::size_t d = 0; d < devices; ++d) {
    std::sort(events[d].begin(), events[d].end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    sched::Bytes memory = 0, held = 0, peak = 0, peak_with = 0;
    for (std::size_t i = 0; i < events[d].size(); ++i) {
      memory += std::get<1>(events[d][i]);
      held += std::get<2>(events[d][i]);
      // Evaluate after every event at the same time stamp has applied.
      if (i + 1 < events[d].size() && std::get<0>(events[d][i + 1]) == std::get<0>(events[d][i])) continue;
      peak = std::max(peak, memory);
      peak_with = std::max(peak_with, memory + held);
    }
    growth[d] = peak_with - peak;
  }
  return growth;
}

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
                                      const sim::ClusterSpec& cluster, const Profile* profile) {
  const double factor = profile != nullptr ? profile->machine.contention_factor : 1.0;
  if (!(factor > 1.0) || schedule.num_devices() < 2 || cluster.num_devices() < schedule.num_devices()) {
    return predict_on(config, schedule, partition, spec, cluster, profile);
  }
  // The cluster's devices carry the measured contention as a uniform slow-down; take it off,
  // simulate, and put back on each device only the share of its compute time that overlaps
  // another device's compute (bubbles run alone). Refined twice, since the overlap moves.
  sim::ClusterSpec alone = cluster;
  for (sim::DeviceSpec& d : alone.devices) d.relative_speed *= factor;
  auto prediction = predict_on(config, schedule, partition, spec, alone, profile);
  for (int round = 0; round < kContentionRounds && prediction; ++round) {
    const std::vector<double> overlap = compute_overlap_fractions(prediction->result.timeline);
    sim::ClusterSpec adjusted = alone;
    std::vector<double> slowdown(overlap.size(), 1.0);
    for (std::size_t d = 0; d < overlap.size() && d < adjusted.devices.size(); ++d) {
      slowdown[d] = 1.0 + (factor - 1.0) * overlap[d];
      adjusted.devices[d].relative_speed /= slowdown[d];
    }
    prediction = predict_on(config, schedule, partition, spec, adjusted, profile);
    if (prediction) prediction->device_slowdown = slowdown;
  }
  return prediction;
}

}  // namespace pipeworks::hw
