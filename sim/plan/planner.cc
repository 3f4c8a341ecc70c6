// The planner (see planner.h): a sweep over the sensible configurations, the best fitting row,
// and a verdict for each runner-up family.
#include "sim/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "sched/units_text.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/tensor_parallel.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

// Ascending; O(sqrt n).
std::vector<int> divisors(int n) {
  std::vector<int> low;
  std::vector<int> high;
  for (int d = 1; static_cast<std::int64_t>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// The row standing for a family: its best fitting row in rank order, else its least overflowing.
std::optional<std::size_t> family_row(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranked,
                                      const std::function<bool(const SweepConfig&)>& member) {
  for (const std::size_t i : ranked) {
    if (rows[i].fits && member(rows[i].config)) return i;
  }
  std::vector<SweepRow> members;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (member(rows[i].config)) {
      members.push_back(rows[i]);
      index.push_back(i);
    }
  }
  const auto least = least_overflowing_row(members);
  if (!least) return std::nullopt;
  return index[*least];
}

RunnerUp verdict(std::string family, const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranked,
                 const std::optional<std::size_t>& best, const std::function<bool(const SweepConfig&)>& member) {
  RunnerUp up;
  up.family = std::move(family);
  up.row = family_row(rows, ranked, member);
  up.contains_best = best && up.row == best;
  const bool any = std::any_of(rows.begin(), rows.end(), [&](const SweepRow& r) { return member(r.config); });
  if (!up.row) {
    up.reason = any ? "no configuration could be simulated"
                    : "none possible: every configuration was skipped as impossible (the batch does not split into "
                      "its replicas' micro-batches, or more stages than layers)";
  } else if (up.contains_best) {
    up.reason = "the best (shown above)";
  } else if (!rows[*up.row].fits || !best) {
    up.reason = explain_loss(rows[*up.row], rows[*up.row]);
  } else {
    up.reason = explain_loss(rows[*up.row], rows[*best]);
  }
  return up;
}

// How much slower `loser` is, and whether its compute, its bubble or its communication is to
// blame (planner.h).
std::string explain_slower(const SweepRow& loser, const SweepRow& best) {
  // T = W x f x g with W = M x c, f = E / W, g = T / E (see planner.h); compare on a log scale.
  const auto work = [](const SweepRow& r) {
    return static_cast<double>(r.config.num_microbatches) * static_cast<double>(r.stage_compute_ns);
  };
  const std::string slower =
      fmt::format("slower by {} ({} vs {} samples/s)", format_percent(1 - loser.samples_per_s / best.samples_per_s),
                  format_samples_per_s(loser.samples_per_s), format_samples_per_s(best.samples_per_s));
  const auto compute_end = [](const SweepRow& r) { return static_cast<double>(r.makespan_ns - r.tail_ns); };
  if (work(loser) <= 0 || work(best) <= 0 || compute_end(loser) <= 0 || compute_end(best) <= 0) return slower;
  const double compute_factor = work(loser) / work(best);
  const double bubble_factor = (compute_end(loser) / work(loser)) / (compute_end(best) / work(best));
  const double tail_factor = (static_cast<double>(loser.makespan_ns) / compute_end(loser)) /
                             (static_cast<double>(best.makespan_ns) / compute_end(best));
  const double c = std::abs(std::log(compute_factor));
  const double b = std::abs(std::log(bubble_factor));
  const double t = std::abs(std::log(tail_factor));
  const std::string_view cause = t > b && t > c ? "communication" : b >= c ? "bubble" : "compute";
  std::string text = fmt::format(
      "{}, mostly {}: bubble {} vs {} (overhead x{:.2f}); slowest stage computes {} x {} vs {} x {} per micro-batch "
      "(x{:.2f})",
      slower, cause, format_percent(loser.bubble_fraction), format_percent(best.bubble_fraction), bubble_factor,
      loser.config.num_microbatches, format_duration(loser.stage_compute_ns), best.config.num_microbatches,
      format_duration(best.stage_compute_ns), compute_factor);
  if (loser.tail_ns > 0 || best.tail_ns > 0) {
    text += fmt::format("; collectives and optimizer after the last compute {} vs {} (x{:.2f})",
                        format_duration(loser.tail_ns), format_duration(best.tail_ns), tail_factor);
  }
  return text;
}

// "no sharding (dp > 1)", "ZeRO-1".
std::string zero_family(ZeroStage zero) {
  if (zero == ZeroStage::kNone) return "no sharding (dp > 1)";
  return fmt::format("ZeRO-{}", zero_stage_name(zero));
}

// Every tp dividing a node's devices and the budget, for a model whose layers split; else 1.
std::vector<int> default_tp_counts(const PlanRequest& request) {
  if (!splits_over_tensor_parallel(request.model) || request.model.tensor_parallel != 1) return {1};
  std::vector<int> counts;
  for (const int tp : divisors(request.cluster.devices_per_node)) {
    if (request.num_devices % tp == 0) counts.push_back(tp);
  }
  return counts;
}

// "pp 8 x dp 4", or with tensor parallelism searched "tp 2 x pp 4 x dp 1".
std::string layout_family(int tp, int pp, int dp, bool tp_searched) {
  if (!tp_searched) return fmt::format("pp {} x dp {}", pp, dp);
  return fmt::format("tp {} x pp {} x dp {}", tp, pp, dp);
}

}  // namespace

std::vector<sched::ScheduleKind> plan_schedules() {
  using sched::ScheduleKind;
  return {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZbH1, ScheduleKind::kZbH2};
}

sched::Result<SweepSpec> plan_sweep_spec(const PlanRequest& request) {
  if (request.batch_size < 1) return sched::Error{fmt::format("plan: batch size must be >= 1, got {}", request.batch_size)};
  if (request.num_devices < 1) return sched::Error{fmt::format("plan: devices must be >= 1, got {}", request.num_devices)};
  if (request.num_devices > request.cluster.num_devices()) {
    return sched::Error{fmt::format("plan: {} devices asked for, but cluster '{}' has {}", request.num_devices,
                                    request.cluster.name, request.cluster.num_devices())};
  }
  if (request.zero_stages.empty()) return sched::Error{"plan: no ZeRO stages to search"};
  SweepSpec spec;
  spec.model = request.model;
  spec.cluster = request.cluster;
  spec.batch_sizes = {request.batch_size};
  for (const int k : divisors(request.num_devices)) {
    if (k <= request.model.num_layers()) spec.stage_counts.push_back(k);
  }
  spec.dp_counts = divisors(request.num_devices);
  spec.tp_counts = request.tp_counts.empty() ? default_tp_counts(request) : request.tp_counts;
  spec.sequence_parallel = request.sequence_parallel;
  spec.tp_comm_overlap = request.tp_comm_overlap;
  spec.exact_devices = request.num_devices;
  spec.zero_stages = request.zero_stages;
  spec.rank_order = request.rank_order;
  spec.data_parallel = request.data_parallel;
  spec.microbatch_counts = divisors(request.batch_size);
  spec.schedules = request.schedules.empty() ? plan_schedules() : request.schedules;
  if (!request.virtual_stage_counts.empty()) spec.virtual_stage_counts = request.virtual_stage_counts;
  spec.recompute_modes = {false, true};
  spec.memory_cap_bytes = request.memory_cap_bytes;
  spec.optimizer = request.optimizer;
  return spec;
}

sched::Result<Plan> make_plan(const PlanRequest& request, const SweepOptions& options) {
  auto spec = plan_sweep_spec(request);
  if (!spec) return spec.error();
  auto sweep = run_sweep(*spec, options);
  if (!sweep) return sweep.error();
  Plan plan;
  plan.spec = std::move(spec).value();
  plan.sweep = std::move(sweep).value();
  const auto& rows = plan.sweep.rows;
  plan.best = best_fitting_row(rows);
  const std::vector<std::size_t> ranked = rank_rows(rows);
  for (const auto& variant : schedule_variants(plan.spec)) {
    const sched::ScheduleKind schedule = variant.first;  // named copies: lambdas below capture them
    const int v = variant.second;
    const std::string name = schedule_text(SweepConfig{1, v, 1, schedule, false, v, 1, ZeroStage::kNone});
    for (const bool recompute : plan.spec.recompute_modes) {
      plan.runners_up.push_back(verdict(
          fmt::format("{}, recompute {}", name, recompute_name(recompute)), rows, ranked, plan.best,
          [=](const SweepConfig& c) { return c.schedule == schedule && c.virtual_stages == v && c.recompute == recompute; }));
    }
  }
  // Families by layout: pp pipeline ranks (one stage each, or v each for the virtual kinds)
  // x dp replicas; then by sharding where replicas were searched.
  const bool tp_searched = plan.spec.tp_counts != std::vector<int>{1};
  for (const int tp : plan.spec.tp_counts) {
    for (const int pp : plan.spec.stage_counts) {
      for (const int dp : plan.spec.dp_counts) {
        if (static_cast<std::int64_t>(tp) * pp * dp != request.num_devices) continue;
        plan.runners_up.push_back(
            verdict(layout_family(tp, pp, dp, tp_searched), rows, ranked, plan.best,
                    [=](const SweepConfig& c) { return c.tp == tp && c.num_devices() == pp && c.dp == dp; }));
      }
    }
  }
  if (plan.spec.zero_stages.size() > 1 && request.num_devices > 1) {
    for (const ZeroStage zero : plan.spec.zero_stages) {
      plan.runners_up.push_back(verdict(zero_family(zero), rows, ranked, plan.best,
                                        [=](const SweepConfig& c) { return c.dp > 1 && c.zero == zero; }));
    }
  }
  return plan;
}

std::string explain_loss(const SweepRow& loser, const SweepRow& best) {
  if (!loser.simulated) return fmt::format("could not be simulated: {}", loser.note);
  if (!loser.fits) {
    return fmt::format("does not fit: device {} needs {}, {} over its {} cap", loser.peak_device,
                       format_bytes(loser.peak_bytes), format_bytes(loser.overflow_bytes),
                       format_bytes(loser.capacity_bytes));
  }
  if (loser.samples_per_s >= best.samples_per_s) {
    // Ranked after the best with equal throughput: by its peak memory, or by sweep order on a
    // full tie. Rounded figures can look equal, so the difference is printed in bytes.
    if (loser.peak_bytes <= best.peak_bytes) {
      return fmt::format("ties with the best ({} samples/s, {} peak); the best comes first in sweep order",
                         format_samples_per_s(loser.samples_per_s), format_bytes(loser.peak_bytes));
    }
    return fmt::format("as fast ({} samples/s) but needs {} more memory ({} vs {})",
                       format_samples_per_s(loser.samples_per_s), sched::counted(loser.peak_bytes - best.peak_bytes, "byte"),
                       format_bytes(loser.peak_bytes), format_bytes(best.peak_bytes));
  }
  std::string cause;
  if (loser.config.total_devices() < best.config.total_devices()) {
    cause = fmt::format("uses {} of the best's {} devices; ", loser.config.total_devices(), best.config.total_devices());
  }
  if (1 - loser.samples_per_s / best.samples_per_s < kTieFraction) {
    cause += fmt::format("a tie within {}: ", format_percent(kTieFraction));
  }
  return cause + explain_slower(loser, best);
}

std::string config_label(const SweepConfig& c) {
  std::string label = c.tp > 1 ? fmt::format("tp={} ", c.tp) : std::string();
  label += fmt::format("K={} M={} {} rc={}", c.num_stages, c.num_microbatches, schedule_text(c), recompute_name(c.recompute));
  if (c.dp > 1) label += fmt::format(" dp={} z{}", c.dp, zero_stage_name(c.zero));
  return label;
}

std::optional<std::size_t> least_overflowing_row(const std::vector<SweepRow>& rows) {
  std::optional<std::size_t> least;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    if (!r.simulated) continue;
    if (!least) {
      least = i;
      continue;
    }
    const SweepRow& l = rows[*least];
    if (r.overflow_bytes < l.overflow_bytes ||
        (r.overflow_bytes == l.overflow_bytes && r.samples_per_s > l.samples_per_s)) {
      least = i;
    }
  }
  return least;
}

}  // namespace pipeworks::sim
