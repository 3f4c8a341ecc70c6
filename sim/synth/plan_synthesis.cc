// The plan's synthesized family (plan_synthesis.h): which row to search from, the search on its
// configuration, and the verdict against the plan's best row.
#include "sim/synth/plan_synthesis.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/units_text.h"
#include "sched/virtual_stages.h"
#include "sched/zero_bubble.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/units.h"
#include "sim/synth/problem_from_specs.h"
#include "sim/synth/synthesize.h"

namespace pipeworks::sim {
namespace {

// Unsearchable rows the output names one by one; the rest are counted.
constexpr std::size_t kNamedRows = 3;

// The first fitting row in rank order that synthesis can express, and the fitting rows before
// it (all of them when there is none) that it cannot.
struct Source {
  std::optional<std::size_t> row;
  std::vector<std::size_t> unsearchable;
};

Source pick_source(const std::vector<SweepRow>& rows) {
  Source out;
  for (const std::size_t i : rank_rows(rows)) {
    if (!rows[i].fits) break;  // rank_rows puts the fitting rows first
    if (synthesis_unsupported(rows[i].config).empty()) {
      out.row = i;
      return out;
    }
    out.unsearchable.push_back(i);
  }
  return out;
}

// "K=2 M=8 1f1b rc=off dp=2 z1 (dp 2: ...); ... and 4 more".
std::string unsearchable_text(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& indices) {
  std::string text;
  for (std::size_t n = 0; n < indices.size() && n < kNamedRows; ++n) {
    const SweepConfig& c = rows[indices[n]].config;
    text += fmt::format("{}{} ({})", n == 0 ? "" : "; ", config_label(c), synthesis_unsupported(c));
  }
  if (indices.size() > kNamedRows) text += fmt::format("; and {} more", indices.size() - kNamedRows);
  return text;
}

// The plan's cap, else the largest memory of the K devices (each device's own applies on top,
// synthesis_problem.h); 0 when neither is known.
Bytes synthesis_cap(const Plan& plan, int num_stages) {
  if (plan.spec.memory_cap_bytes) return *plan.spec.memory_cap_bytes;
  Bytes largest = 0;
  for (int d = 0; d < num_stages && d < plan.spec.cluster.num_devices(); ++d) {
    largest = std::max(largest, plan.spec.cluster.devices[static_cast<std::size_t>(d)].memory_bytes);
  }
  return largest;
}

// The row's placement of its K stages on its devices: one a device, the V of the V-shaped kinds,
// else the loop of the kinds with virtual stages (stage s on device s mod p), as they run it.
std::vector<int> row_placement(const SweepConfig& c) {
  if (c.virtual_stages <= 1) return {};
  if (sched::is_v_shaped(c.schedule)) return sched::v_placement(c.num_stages);
  return sched::looped_schedule({c.num_stages, c.num_microbatches, {}}, c.num_devices()).placement;
}

// The synthesized schedule's figures as a row of the source's configuration: its step, bubble,
// peak, and the rates scaled by the step (the batch and the devices are the source's).
SweepRow synthesized_row(const SweepRow& source, const SynthesisResult& found) {
  SweepRow row = source;
  const SimResult& s = found.best.simulated;
  row.makespan_ns = s.step_ns;
  row.tail_ns = s.step_ns - s.compute_end_ns;
  const double speedup = static_cast<double>(source.makespan_ns) / static_cast<double>(std::max<Nanoseconds>(1, s.step_ns));
  row.samples_per_s = source.samples_per_s * speedup;
  row.tokens_per_s = source.tokens_per_s * speedup;
  row.mfu = source.mfu * speedup;
  row.bubble_fraction = s.bubble_fraction;
  row.peak_bytes = 0;
  for (const DeviceResult& d : s.devices) {
    if (d.memory.peak_bytes <= row.peak_bytes) continue;
    row.peak_bytes = d.memory.peak_bytes;
    row.peak_device = d.device;
    row.capacity_bytes = found.caps_bytes.at(static_cast<std::size_t>(d.device));
  }
  row.fits = true;
  row.overflow_bytes = 0;
  row.note.clear();
  return row;
}

// Against the plan's best row: the best when its step is shorter (a tie within kTieFraction, as
// explain_loss calls one), a tie when equal, else why it is slower (explain_loss).
std::string verdict(const SweepRow& synthesized, const SweepRow& best) {
  if (synthesized.makespan_ns < best.makespan_ns) {
    const double shorter = 1 - static_cast<double>(synthesized.makespan_ns) / static_cast<double>(best.makespan_ns);
    return fmt::format("the best: faster than the best row ({}): step {} vs {}, {} ({}) shorter{}",
                       config_label(best.config), format_duration(synthesized.makespan_ns),
                       format_duration(best.makespan_ns), format_duration(best.makespan_ns - synthesized.makespan_ns),
                       format_percent(shorter),
                       shorter < kTieFraction
                           ? fmt::format(", within {}: a tie the cost model cannot tell apart", format_percent(kTieFraction))
                           : "");
  }
  if (synthesized.makespan_ns == best.makespan_ns) {
    return fmt::format("ties with the best ({} samples/s): the search found no shorter step",
                       format_samples_per_s(synthesized.samples_per_s));
  }
  return explain_loss(synthesized, best);
}

// The search on the source row's configuration; the family's reason says what came of it.
void search_from(Plan& plan, const PlanRequest& request, const PlanSynthesisOptions& options, RunnerUp& up) {
  PlanSynthesis& out = *plan.synthesis;
  const SweepRow& source = plan.sweep.rows[*out.source];
  const SweepConfig& c = source.config;
  const Bytes cap = synthesis_cap(plan, c.num_stages);
  if (cap <= 0) {
    out.source.reset();
    out.why_not = "no memory cap: the plan has none and the devices' memory is unknown";
    return;
  }
  up.family = fmt::format("synthesized (searched from {})", config_label(c));
  SynthesisSetup setup{c.num_stages, c.num_microbatches, c.batch_size, request.optimizer, cap, source.partition};
  setup.placement = row_placement(c);
  const SearchOptions search{options.time_limit_s, options.seed, options.max_evaluations};
  auto problem = problem_from_specs(plan.spec.model, plan.spec.cluster, setup, search);
  auto found = problem ? synthesize(problem->problem, search) : sched::Result<SynthesisResult>(problem.error());
  if (!found) {
    out.why_not = found.error().message;
    up.reason = "searched, nothing found: " + out.why_not;
    return;
  }
  out.row = synthesized_row(source, *found);
  out.schedule = found->best.schedule;
  out.report_json = synthesis_report_json(*found, problem->inputs);
  const SweepRow& best = plan.sweep.rows[*plan.best];
  out.beats_best = out.row.makespan_ns < best.makespan_ns;
  up.label = fmt::format("K={} M={} synthesized", c.num_stages, c.num_microbatches);
  up.reason = verdict(out.row, best);
}

}  // namespace

std::string synthesis_unsupported(const SweepConfig& config) {
  std::vector<std::string> reasons;
  if (config.tp > 1) reasons.push_back(fmt::format("tp {}: synthesis does not model tensor parallelism", config.tp));
  if (config.dp > 1) {
    reasons.push_back(fmt::format("dp {}: synthesis models one pipeline without data parallelism", config.dp));
  }
  std::string text;
  for (const std::string& r : reasons) text += (text.empty() ? "" : "; ") + r;
  return text;
}

void add_synthesized_family(Plan& plan, const PlanRequest& request, const PlanSynthesisOptions& options) {
  plan.synthesis = PlanSynthesis{};
  PlanSynthesis& out = *plan.synthesis;
  RunnerUp up;
  up.family = "synthesized";
  const Source source = plan.best ? pick_source(plan.sweep.rows) : Source{};
  out.unsearchable = unsearchable_text(plan.sweep.rows, source.unsearchable);
  out.source = source.row;
  if (!plan.best) {
    out.why_not = "no configuration fits";
  } else if (!source.row) {
    out.why_not = "no fitting row has tp 1 and dp 1";
  } else {
    search_from(plan, request, options, up);
  }
  if (!out.source) up.reason = "not searched: " + out.why_not;
  plan.runners_up.push_back(std::move(up));
}

sched::Result<Plan> make_plan_with_synthesis(const PlanRequest& request, const PlanSynthesisOptions& synthesis,
                                             const SweepOptions& options) {
  const SearchOptions search{synthesis.time_limit_s, synthesis.seed, synthesis.max_evaluations};
  if (auto valid = check_search_options(search); !valid) return valid.error();
  auto plan = make_plan(request, options);
  if (!plan) return plan.error();
  add_synthesized_family(*plan, request, synthesis);
  return plan;
}

}  // namespace pipeworks::sim
