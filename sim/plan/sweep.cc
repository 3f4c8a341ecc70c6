// Sweep enumeration, the parallel run over configurations, and the orderings read off its rows.
// evaluate_config (one configuration) lives in sweep_eval.cc.
#include "sim/plan/sweep.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "sim/engine/cost_model.h"
#include "sim/plan/parallel_for.h"
#include "sim/plan/pareto.h"
#include "sim/spec/tensor_parallel.h"

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

// The configurations that differ only in their sharding, each group in the order they come: they
// ask for the same schedules (ScheduleMemo), so one thread evaluates them in turn rather than two
// at once, one waiting for the other's. Largest first, so that no big group is left alone at the end.
std::vector<std::vector<std::size_t>> sharding_groups(const std::vector<SweepConfig>& configs) {
  std::map<std::tuple<int, int, int, sched::ScheduleKind, bool, int, int, int>, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const SweepConfig& c = configs[i];
    const auto key = std::tuple{c.batch_size, c.num_stages, c.num_microbatches, c.schedule, c.recompute,
                                c.virtual_stages, c.dp, c.tp};
    const auto [found, added] = group_of.try_emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[found->second].push_back(i);
  }
  std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
    return expected_cost(configs[a.front()]) * a.size() > expected_cost(configs[b.front()]) * b.size();
  });
  return groups;
}

// tp counts from 1 to a node's devices, dividing them; above 1 only for a model whose layers split.
sched::Status check_tensor_parallel(const SweepSpec& spec) {
  if (auto positive = check_positive(spec.tp_counts, "tensor-parallel counts"); !positive) return positive;
  for (const int tp : spec.tp_counts) {
    if (tp == 1) continue;
    ParallelLayout layout;
    layout.tp = tp;
    if (auto fits = check_layout(layout, spec.cluster.num_devices(), spec.cluster.devices_per_node); !fits) {
      return sched::Error{fmt::format("sweep: tensor parallelism {} on cluster '{}': {}", tp, spec.cluster.name,
                                      fits.error().message)};
    }
    if (auto view = tensor_parallel_view(spec.model, tp, spec.sequence_parallel, spec.tp_comm_overlap); !view) {
      return sched::Error{"sweep: " + view.error().message};
    }
  }
  const bool split = std::any_of(spec.tp_counts.begin(), spec.tp_counts.end(), [](int tp) { return tp > 1; });
  if (!split && (spec.sequence_parallel || spec.tp_comm_overlap)) {
    return sched::Error{"sweep: sequence parallelism and overlapped tensor-parallel collectives need a tensor-parallel "
                        "count above 1"};
  }
  return sched::Ok{};
}

}  // namespace

bool searches_virtual_stage_counts(sched::ScheduleKind kind) {
  return sched::has_virtual_stages(kind) && !sched::is_v_shaped(kind);
}

std::vector<std::pair<sched::ScheduleKind, int>> schedule_variants(const SweepSpec& spec) {
  std::vector<std::pair<sched::ScheduleKind, int>> out;
  for (const sched::ScheduleKind kind : spec.schedules) {
    if (searches_virtual_stage_counts(kind)) {
      for (const int v : spec.virtual_stage_counts) out.emplace_back(kind, v);
    } else {
      out.emplace_back(kind, sched::is_v_shaped(kind) ? 2 : 1);
    }
  }
  return out;
}

std::vector<std::string_view> sweepable_schedule_names() { return sched::schedule_kind_names(); }

std::string schedule_text(const SweepConfig& config) {
  const std::string_view name = sched::schedule_kind_name(config.schedule);
  if (!searches_virtual_stage_counts(config.schedule)) return std::string(name);
  return fmt::format("{} v={}", name, config.virtual_stages);
}

sched::Status check_sweep_spec(const SweepSpec& spec) {
  for (const int v : spec.virtual_stage_counts) {
    if (v < 2) return sched::Error{fmt::format("sweep: virtual stages per device must be >= 2, got {}", v)};
  }
  if (spec.virtual_stage_counts.empty()) return sched::Error{"sweep: no virtual stage counts given"};
  for (const auto& [values, what] : {std::pair{&spec.batch_sizes, "batch sizes"},
                                      std::pair{&spec.stage_counts, "stage counts"},
                                      std::pair{&spec.microbatch_counts, "micro-batch counts"}}) {
    auto status = check_positive(*values, what);
    if (!status) return status;
  }
  for (const int devices : spec.stage_counts) {
    if (auto size = check_cost_model_devices(devices); !size) return sched::Error{"sweep: " + size.error().message};
  }
  if (spec.schedules.empty()) return sched::Error{"sweep: no schedules given"};
  if (spec.recompute_modes.empty()) return sched::Error{"sweep: no recompute modes given"};
  if (auto dp = check_positive(spec.dp_counts, "data-parallel counts"); !dp) return dp;
  if (auto tp = check_tensor_parallel(spec); !tp) return tp;
  if (spec.zero_stages.empty()) return sched::Error{"sweep: no ZeRO stages given"};
  if (spec.data_parallel.bucket_bytes < 1) return sched::Error{"sweep: the gradient bucket must hold at least 1 byte"};
  const double combinations = static_cast<double>(spec.batch_sizes.size()) * static_cast<double>(spec.stage_counts.size()) *
                              static_cast<double>(spec.dp_counts.size()) * static_cast<double>(spec.zero_stages.size()) *
                              static_cast<double>(spec.tp_counts.size()) *
                              static_cast<double>(spec.microbatch_counts.size()) *
                              static_cast<double>(schedule_variants(spec).size()) *
                              static_cast<double>(spec.recompute_modes.size());
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

namespace {

// The configurations of one (batch, pp, dp, M) over the schedule variants, sharding and recompute.
void add_layout_configs(const SweepSpec& spec, SweepConfig base, SkipCounts& skipped,
                        std::vector<SweepConfig>& configs) {
  const auto variants = schedule_variants(spec);
  const std::size_t modes = spec.recompute_modes.size();
  const std::int64_t replicas_microbatches = static_cast<std::int64_t>(base.dp) * base.num_microbatches;
  const int pp = base.num_stages;
  for (const auto& [schedule, v] : variants) {
    const std::int64_t stages = static_cast<std::int64_t>(pp) * v;
    if (stages > spec.model.num_layers()) {
      skipped.more_stages_than_layers += modes;
      continue;
    }
    if (replicas_microbatches > base.batch_size || base.batch_size % replicas_microbatches != 0) {
      skipped.microbatches_not_dividing_batch += modes;
      continue;
    }
    for (const ZeroStage zero : spec.zero_stages) {
      if (base.dp == 1 && zero != spec.zero_stages.front()) continue;  // nothing to shard: one row
      for (const bool recompute : spec.recompute_modes) {
        SweepConfig c = base;
        c.num_stages = static_cast<int>(stages);
        c.schedule = schedule;
        c.recompute = recompute;
        c.virtual_stages = v;
        c.zero = base.dp == 1 ? ZeroStage::kNone : zero;
        configs.push_back(c);
      }
    }
  }
}

}  // namespace

std::vector<SweepConfig> sweep_configs(const SweepSpec& spec, SkipCounts& skipped) {
  skipped = {};
  std::vector<SweepConfig> configs;
  const std::size_t per_layout = schedule_variants(spec).size() * spec.recompute_modes.size();
  for (const int batch : spec.batch_sizes) {
    for (const int tp : spec.tp_counts) {
      for (const int pp : spec.stage_counts) {
        for (const int dp : spec.dp_counts) {
          const std::int64_t devices = static_cast<std::int64_t>(tp) * pp * dp;
          if (spec.exact_devices && devices != *spec.exact_devices) continue;
          for (const int microbatches : spec.microbatch_counts) {
            if (devices > spec.cluster.num_devices()) {
              skipped.more_stages_than_devices += per_layout;
              continue;
            }
            const SweepConfig base{batch, pp, microbatches, sched::ScheduleKind::kGPipe, false, 1, dp, ZeroStage::kNone, tp};
            add_layout_configs(spec, base, skipped, configs);
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
  result.rows.resize(configs.size());  // slots keep the configurations' order
  const std::vector<std::vector<std::size_t>> groups = sharding_groups(configs);
  const std::size_t total = configs.size();
  SweepMemo memo;
  // One rank's model per tensor-parallel count, checked once (a configuration whose view fails
  // reports it itself).
  std::map<int, ModelSpec> rank_models;
  for (const int tp : spec.tp_counts) {
    const bool split = tp > 1;
    auto view = tensor_parallel_view(spec.model, tp, split && spec.sequence_parallel, split && spec.tp_comm_overlap);
    if (view && check_model_spec(*view)) rank_models.emplace(tp, std::move(view).value());
  }
  const auto rank_model = [&](int tp) -> const ModelSpec* {
    const auto it = rank_models.find(tp);
    return it == rank_models.end() ? nullptr : &it->second;
  };
  std::mutex progress;
  std::size_t evaluated = 0;
  parallel_for(groups.size(), options.threads, [&](std::size_t g) {
    for (const std::size_t i : groups[g]) {
      result.rows[i] = evaluate_config(spec, configs[i], &memo, rank_model(configs[i].tp));
      const std::lock_guard<std::mutex> lock(progress);
      ++evaluated;
      if (options.on_progress) options.on_progress(evaluated, total);
    }
  });
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
