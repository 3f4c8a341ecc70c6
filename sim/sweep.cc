// Sweep enumeration, the parallel run over configurations, and the orderings read off its rows.
// evaluate_config (one configuration) lives in sweep_eval.cc.
#include "sim/sweep.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "sim/batch_split.h"
#include "sim/parallel_for.h"
#include "sim/pareto.h"

namespace pipeworks::sim {
namespace {

sched::Status check_positive(const std::vector<int>& values, std::string_view what) {
  if (values.empty()) return sched::Error{fmt::format("sweep: no {} given", what)};
  for (const int v : values) {
    if (v < 1) return sched::Error{fmt::format("sweep: {} must be >= 1, got {}", what, v)};
  }
  return sched::Ok{};
}

// Rough cost of simulating a configuration (its number of actions), to start the big ones first.
double expected_cost(const SweepConfig& c) {
  return static_cast<double>(c.num_stages) * c.num_microbatches * (c.recompute ? 3.0 : 2.0);
}

}  // namespace

std::vector<std::string_view> sweepable_schedule_names() { return {"gpipe", "1f1b", "zb-h1", "zb-h2"}; }

sched::Status check_sweep_spec(const SweepSpec& spec) {
  for (const sched::ScheduleKind kind : spec.schedules) {
    if (sched::has_virtual_stages(kind)) {
      return sched::Error{fmt::format("sweep: {} is not searched (sweeps search gpipe, 1f1b, zb-h1 and zb-h2; `simulate --schedule "
                                      "{} --virtual-stages V` predicts it)",
                                      sched::schedule_kind_name(kind), sched::schedule_kind_name(kind))};
    }
  }
  for (const auto& [values, what] : {std::pair{&spec.batch_sizes, "batch sizes"},
                                      std::pair{&spec.stage_counts, "stage counts"},
                                      std::pair{&spec.microbatch_counts, "micro-batch counts"}}) {
    auto status = check_positive(*values, what);
    if (!status) return status;
  }
  if (spec.schedules.empty()) return sched::Error{"sweep: no schedules given"};
  if (spec.recompute_modes.empty()) return sched::Error{"sweep: no recompute modes given"};
  const double combinations = static_cast<double>(spec.batch_sizes.size()) * static_cast<double>(spec.stage_counts.size()) *
                              static_cast<double>(spec.microbatch_counts.size()) *
                              static_cast<double>(spec.schedules.size()) * static_cast<double>(spec.recompute_modes.size());
  if (combinations > static_cast<double>(kMaxSweepCombinations)) {
    return sched::Error{fmt::format("sweep: {:.0f} combinations is more than the {} a sweep may enumerate", combinations,
                                    kMaxSweepCombinations)};
  }
  if (spec.memory_cap_bytes && *spec.memory_cap_bytes <= 0) {
    return sched::Error{fmt::format("sweep: memory cap must be positive, got {} bytes", *spec.memory_cap_bytes)};
  }
  if (auto model = check_model_spec(spec.model); !model) {
    return sched::Error{fmt::format("sweep: model '{}': {}", spec.model.name, model.error().message)};
  }
  if (auto cluster = check_cluster_spec(spec.cluster); !cluster) {
    return sched::Error{fmt::format("sweep: cluster '{}': {}", spec.cluster.name, cluster.error().message)};
  }
  return sched::Ok{};
}

std::vector<SweepConfig> sweep_configs(const SweepSpec& spec, SkipCounts& skipped) {
  skipped = {};
  std::vector<SweepConfig> configs;
  const std::size_t per_pair = spec.schedules.size() * spec.recompute_modes.size();
  for (const int batch : spec.batch_sizes) {
    for (const int stages : spec.stage_counts) {
      for (const int microbatches : spec.microbatch_counts) {
        if (stages > spec.cluster.num_devices()) {
          skipped.more_stages_than_devices += per_pair;
        } else if (stages > spec.model.num_layers()) {
          skipped.more_stages_than_layers += per_pair;
        } else if (!microbatch_size(batch, microbatches)) {
          skipped.microbatches_not_dividing_batch += per_pair;
        } else {
          for (const auto schedule : spec.schedules) {
            for (const bool recompute : spec.recompute_modes) {
              configs.push_back({batch, stages, microbatches, schedule, recompute});
            }
          }
        }
      }
    }
  }
  return configs;
}

sched::Result<SweepResult> run_sweep(const SweepSpec& spec, const SweepOptions& options) {
  if (auto status = check_sweep_spec(spec); !status) return status.error();
  if (options.threads < 0 || options.threads > kMaxSweepThreads) {
    return sched::Error{fmt::format("sweep: threads must be from 0 to {}, got {}", kMaxSweepThreads, options.threads)};
  }
  SweepResult result;
  const std::vector<SweepConfig> configs = sweep_configs(spec, result.skipped);
  result.rows.resize(configs.size());
  // Largest first so that no big configuration is left alone at the end; slots keep the order.
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return expected_cost(configs[a]) > expected_cost(configs[b]);
  });
  const std::size_t total = configs.size();
  parallel_for(
      total, options.threads, [&](std::size_t i) { result.rows[i] = evaluate_config(spec, configs[i]); },
      [&](std::size_t done) {
        if (options.on_progress) options.on_progress(done, total);
      },
      &order);
  return result;
}

std::vector<std::size_t> rank_rows(const std::vector<SweepRow>& rows) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].simulated) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SweepRow& x = rows[a];
    const SweepRow& y = rows[b];
    if (x.fits != y.fits) return x.fits;
    if (x.samples_per_s != y.samples_per_s) return x.samples_per_s > y.samples_per_s;
    return x.peak_bytes < y.peak_bytes;
  });
  return order;
}

std::optional<std::size_t> best_fitting_row(const std::vector<SweepRow>& rows) {
  const std::vector<std::size_t> order = rank_rows(rows);
  if (order.empty() || !rows[order.front()].fits) return std::nullopt;
  return order.front();
}

std::vector<std::size_t> pareto_rows(const std::vector<SweepRow>& rows) {
  std::vector<std::size_t> simulated;
  std::vector<ParetoPoint> points;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].simulated) continue;
    simulated.push_back(i);
    points.push_back({rows[i].samples_per_s, rows[i].peak_bytes});
  }
  std::vector<std::size_t> frontier = pareto_frontier(points);
  for (std::size_t& i : frontier) i = simulated[i];
  return frontier;
}

}  // namespace pipeworks::sim
