// Text of a plan (see plan_report.h); aligned with fmt widths.
#include "sim/report/plan_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/units_text.h"
#include "sim/plan/partition_text.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/size_extrapolation.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

std::string skipped_line(const SkipCounts& s) {
  return s.total() == 0 ? std::string("none skipped") : fmt::format("{} skipped as impossible", s.total());
}

// "412.3 samples/s (51.5 per device), 843,366 tokens/s, MFU 31.2%": MFU and tokens when known.
std::string throughput_text(const SweepRow& r) {
  std::string text = fmt::format("{} samples/s ({} per device)", format_samples_per_s(r.samples_per_s),
                                 format_samples_per_s(r.samples_per_s / r.config.total_devices()));
  if (r.tokens_per_s > 0) text += fmt::format(", {:.0f} tokens/s", r.tokens_per_s);
  if (r.mfu > 0) text += fmt::format(", MFU {:.1f}%", 100 * r.mfu);
  return text;
}

std::string summary(const SweepRow& r, const ModelSpec& model) {
  const SweepConfig& c = r.config;
  std::vector<std::pair<std::string, std::string>> lines = {
      {"layout", layout_text(c.layout())},
      {"stages", fmt::format("{}{} (layers per stage: {} = {})", c.num_stages,
                              c.virtual_stages > 1 ? fmt::format(", {} per device on {} devices", c.virtual_stages, c.num_devices()) : "",
                              layer_counts_text(r.partition, true), to_string(r.partition))},
      {"micro-batches", fmt::format("{} of {} sample{}", c.num_microbatches, c.microbatch_size(),
                                    c.microbatch_size() == 1 ? "" : "s")},
      {"schedule", fmt::format("{}, recompute {}", schedule_text(c), recompute_name(c.recompute))},
      {"step time", r.tail_ns > 0 ? fmt::format("{} ({} of collectives and optimizer after the last compute)",
                                                  format_duration(r.makespan_ns), format_duration(r.tail_ns))
                                  : format_duration(r.makespan_ns)},
      {"throughput", throughput_text(r)},
      {"bubble", fmt::format("{:.1f}%", 100 * r.bubble_fraction)},
      {"peak memory", r.capacity_bytes > 0 ? fmt::format("{} on device {} (cap {})", format_bytes(r.peak_bytes),
                                                         r.peak_device, format_bytes(r.capacity_bytes))
                                           : fmt::format("{} on device {} (capacity unknown: not checked)",
                                                         format_bytes(r.peak_bytes), r.peak_device)},
  };
  if (auto e = size_extrapolation(model, c.microbatch_size())) lines.emplace_back("warning", describe(*e));
  std::string out;
  for (const auto& [key, value] : lines) out += fmt::format("  {:<14}{}\n", key, value);
  return out;
}

// The synthesized family's note: the row it was searched from (or why none was), the faster
// fitting rows synthesis cannot search and why, and whether it beats the best row.
std::string synthesis_text(const Plan& plan) {
  const PlanSynthesis& s = *plan.synthesis;
  std::string out = "\nsynthesized schedule: ";
  if (!s.source) {
    out += fmt::format("not searched: {}\n", s.why_not);
  } else if (!s.why_not.empty()) {
    out += fmt::format("searched from {}, nothing found: {}\n", config_label(plan.sweep.rows[*s.source].config), s.why_not);
  } else {
    out += fmt::format("searched from {}, the fastest fitting row synthesis can express: step {}\n",
                       config_label(plan.sweep.rows[*s.source].config), format_duration(s.row.makespan_ns));
  }
  if (!s.unsearchable.empty()) {
    out += fmt::format("  {} it cannot search: {}\n", s.source ? "faster fitting rows" : "fitting rows", s.unsearchable);
  }
  if (s.beats_best && plan.best) {
    const Nanoseconds best = plan.sweep.rows[*plan.best].makespan_ns;
    out += fmt::format("  faster than the best row: step {} vs {}, {} ({}) shorter\n", format_duration(s.row.makespan_ns),
                       format_duration(best), format_duration(best - s.row.makespan_ns),
                       format_percent(1 - static_cast<double>(s.row.makespan_ns) / static_cast<double>(best)));
  }
  return out;
}

}  // namespace

std::string plan_report(const Plan& plan) {
  const auto& rows = plan.sweep.rows;
  std::string out = fmt::format("plan: {} on {}, batch {}: {} configurations simulated, {}\n", plan.spec.model.name,
                                plan.spec.cluster.name, plan.spec.batch_sizes.front(), rows.size(),
                                skipped_line(plan.sweep.skipped));
  if (plan.best) {
    const SweepRow& best = rows[*plan.best];
    out += fmt::format("\nbest: {}, {}, {}, recompute {}\n", layout_text(best.config.layout()),
                       sched::counted(best.config.num_microbatches, "micro-batch", "micro-batches"), schedule_text(best.config),
                       recompute_name(best.config.recompute));
    out += summary(best, plan.spec.model);
  } else {
    out += "\nno configuration fits in memory\n";
    if (const auto closest = least_overflowing_row(rows)) {
      const SweepRow& r = rows[*closest];
      out += fmt::format("closest: {} stages, {} micro-batches, {}, recompute {}: {}\n", r.config.num_stages,
                         r.config.num_microbatches, schedule_text(r.config),
                         recompute_name(r.config.recompute), r.note);
      if (!r.partition_note.empty()) out += fmt::format("partitioner: {}\n", r.partition_note);
      out += summary(r, plan.spec.model);
    }
  }
  std::size_t width = 0;
  std::size_t label_width = 0;
  std::vector<std::string> labels;
  for (const RunnerUp& up : plan.runners_up) {
    width = std::max(width, up.family.size());
    labels.push_back(up.row ? config_label(rows[*up.row].config) : up.label.empty() ? std::string("-") : up.label);
    if (up.row && size_extrapolation(plan.spec.model, rows[*up.row].config.microbatch_size())) {
      labels.back() += " (extrapolated)";
    }
    label_width = std::max(label_width, labels.back().size());
  }
  out += "\nrunners-up (best of each family):\n";
  for (std::size_t i = 0; i < plan.runners_up.size(); ++i) {
    const RunnerUp& up = plan.runners_up[i];
    out += fmt::format("  {:<{}}  {:<{}}  {}\n", up.family, width, labels[i], label_width, up.reason);
  }
  if (plan.synthesis) out += synthesis_text(plan);
  return out;
}

}  // namespace pipeworks::sim
