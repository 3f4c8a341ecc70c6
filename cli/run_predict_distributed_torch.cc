// `pipeworks run --distributed --predict` (see run_options.h): rank 0 prints the measured steps,
// the costs the ranks measured, predicted against measured side by side (viz/comparison.h) and
// the step's error; --json, --trace and --svg write them.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/prediction_pictures.h"
#include "cli/run_options.h"
#include "cli/run_printing.h"
#include "hw/dist/distributed_env.h"
#include "hw/dist/distributed_prediction.h"
#include "sched/text_file.h"
#include "sched/units_text.h"
#include "viz/comparison.h"
#include "viz/comparison_table.h"

namespace pipeworks::cli {
namespace {

double ms(sched::Nanoseconds ns) { return static_cast<double>(ns) / 1e6; }

void print_costs(const hw::DistributedPrediction& p) {
  fmt::print("\nmeasured by the ranks before the first step ({} processes on this machine):\n", p.world_size);
  if (p.comm.handoff_bandwidth_bytes_per_s > 0) {
    fmt::print("  hand-off       {:.1f} us sending + {:.1f} us + bytes / {:.3g} GB/s over the run's group (largest "
               "hand-off {})\n",
               static_cast<double>(p.comm.send_overhead_ns) / 1e3, static_cast<double>(p.comm.handoff_latency_ns) / 1e3,
               p.comm.handoff_bandwidth_bytes_per_s / 1e9, sched::format_bytes(p.comm.largest_handoff_bytes));
  }
  if (p.comm.tensor_link) {
    fmt::print("  tensor all-reduce  {:.1f} us at 4 bytes, {:.1f} us at {} (the tensor-parallel group's Gloo ring)\n",
               static_cast<double>(p.comm.tensor_small_ns) / 1e3, static_cast<double>(p.comm.tensor_large_ns) / 1e3,
               sched::format_bytes(p.comm.tensor_bytes));
  }
  for (std::size_t s = 0; s < p.comm.stages.size(); ++s) {
    const hw::ReplicaStageCosts& c = p.comm.stages[s];
    fmt::print("  stage {:<2}       REDUCE_GRAD {:.3f} ms, parameter all-gather {:.3f} ms, optimizer step {:.3f} ms\n",
               s, ms(c.reduce_grad_ns), ms(c.param_gather_ns), ms(c.optimizer_step_ns));
  }
  fmt::print("  contention     {:.3f}x with {} workers computing at once (rank 0's profile)\n",
             p.cluster.contention_factor, p.profile->options.workers);
}

nlohmann::json report_json(const hw::DistributedPrediction& p, double error) {
  nlohmann::json j;
  j["processes"] = p.world_size;
  j["threads_per_process"] = p.run.threads_per_worker;
  j["cores"] = p.cluster.cores;
  j["core_slice_ns"] = p.comm.core_slice_ns ? nlohmann::json(*p.comm.core_slice_ns) : nlohmann::json();
  j["predicted_step_ns"] = p.prediction->result.step_ns;
  j["measured_step_ns"] = p.measured_step_ns;
  j["step_error"] = error;
  j["handoff_latency_ns"] = p.comm.handoff_latency_ns;
  j["handoff_bandwidth_bytes_per_s"] = p.comm.handoff_bandwidth_bytes_per_s;
  j["send_overhead_ns"] = p.comm.send_overhead_ns;
  j["contention_factor"] = p.cluster.contention_factor;
  if (p.comm.tensor_link) {
    j["tensor_all_reduce"] = {{"bytes", p.comm.tensor_bytes},
                              {"small_ns", p.comm.tensor_small_ns},
                              {"large_ns", p.comm.tensor_large_ns},
                              {"link_latency_ns", p.comm.tensor_link->latency_ns},
                              {"link_bandwidth_bytes_per_s", p.comm.tensor_link->bandwidth_bytes_per_s}};
  }
  for (const hw::ReplicaStageCosts& c : p.comm.stages) {
    j["stages"].push_back({{"reduce_grad_ns", c.reduce_grad_ns}, {"param_gather_ns", c.param_gather_ns},
                           {"optimizer_step_ns", c.optimizer_step_ns}});
  }
  j["predicted_peak_activation_bytes"] = p.prediction->peak_activation_bytes;
  if (!p.run.steps.empty()) j["measured_peak_activation_bytes"] = p.run.steps.back().peak_activation_bytes;
  j["measured_steps_ns"] = nlohmann::json::array();
  for (const hw::StepStats& s : p.run.steps) j["measured_steps_ns"].push_back(s.step_ns);
  j["notes"] = p.notes;
  j["warnings"] = p.warnings;
  j["predicted"] = viz::timeline_records(p.prediction->result.timeline);
  j["measured"] = viz::timeline_records(p.run.last_timeline);
  return j;
}

int report(const RunOptions& options, const hw::DistributedPrediction& p) {
  print_costs(p);
  for (const std::string& note : p.notes) fmt::print("note: {}\n", note);
  for (const std::string& warning : p.warnings) fmt::print("warning: {}\n", warning);
  viz::ComparisonOptions compare;  // each rank's process holds its own memory: peaks per device
  compare.predicted_peak_bytes = p.prediction->peak_activation_bytes;
  if (!p.run.steps.empty()) compare.measured_peak_bytes = p.run.steps.back().peak_activation_bytes;
  auto comparison = viz::compare_timelines(p.prediction->result.timeline, p.run.last_timeline, compare);
  if (comparison) {
    fmt::print("\nthe last step, replica 0 (predicted vs measured):\n{}", viz::comparison_table(*comparison));
  } else {
    fmt::print("note: no side-by-side table: {}\n", comparison.error().message);
  }
  const sched::Nanoseconds predicted = p.prediction->result.step_ns;
  const double error = p.measured_step_ns > 0 ? static_cast<double>(predicted) / static_cast<double>(p.measured_step_ns) - 1 : 0;
  const auto [fastest, slowest] = std::minmax_element(
      p.run.steps.begin(), p.run.steps.end(), [](const auto& a, const auto& b) { return a.step_ns < b.step_ns; });
  fmt::print("\nstep: predicted {:.3f} ms, measured {:.3f} ms (median of {} steps, {:.3f} to {:.3f} ms), error {:+.1f}%\n",
             ms(predicted), ms(p.measured_step_ns), p.run.steps.size(),
             p.run.steps.empty() ? 0.0 : ms(fastest->step_ns), p.run.steps.empty() ? 0.0 : ms(slowest->step_ns), 100 * error);
  if (auto s = write_prediction_pictures({options.trace, options.svg, options.json}, p.prediction->result.timeline,
                                         p.run.last_timeline, options.config, p.run.partition);
      !s) {
    return report_error("run", kExitInvalid, s.error().message);
  }
  if (!options.json.empty()) {
    if (auto s = sched::write_text_file(options.json, report_json(p, error).dump(2) + "\n"); !s) {
      return report_error("run", kExitInvalid, s.error().message);
    }
  }
  return kExitOk;
}

}  // namespace

int run_distributed_prediction(const RunOptions& options) {
  if (!options.predict.model_spec.empty() || !options.predict.cluster_spec.empty()) {
    return report_error("run", kExitUsage,
                        "--distributed --predict measures its own costs: drop --model-spec and --cluster-spec");
  }
  auto env = hw::read_distributed_env();
  if (!env) return report_error("run", kExitUsage, env.error().message);
  if (env->rank == 0) print_run_header(hw::model_display_name(options.config.model), options.config, true);
  hw::DistributedPredictionSettings settings;
  settings.warmup = options.predict.warmup;
  settings.repetitions = options.predict.repetitions;
  auto p = hw::predict_distributed(options.config, settings, distributed_options(options), print_step);
  if (!p) return report_error("run", kExitInvalid, p.error().message);
  return p->rank == 0 ? report(options, *p) : kExitOk;
}

}  // namespace pipeworks::cli
