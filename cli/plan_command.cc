// `pipeworks plan`: the fastest pipeline configuration that fits, for a model, a cluster, a
// batch and a number of devices, with a verdict for each runner-up family; with --synthesize, a
// schedule searched by sim/synth joins them (sim/synth/plan_synthesis.h decides which row).
#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/layout_flags.h"
#include "cli/planning_args.h"
#include "cli/progress_bar.h"
#include "sched/schedule_file.h"
#include "sched/text_file.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/planner.h"
#include "sim/plan/sweep_table.h"
#include "sim/report/plan_report.h"
#include "sim/spec/int_ranges.h"
#include "sim/synth/plan_synthesis.h"
#include "sim/synth/synthesis_problem.h"  // kMaxTimeLimitS

namespace pipeworks::cli {
namespace {

struct PlanArgs {
  PlanningArgs planning;
  std::string batch;
  std::string devices;
  ScheduleSearchArgs search;
  LayoutSearchArgs layouts{.dp = "1", .tp = "", .sequence_parallel = false, .tp_comm_overlap = false, .zero = "0,1", .replicas = {}};
  std::string output;
  bool synthesize = false;
  sim::PlanSynthesisOptions synthesis;
  std::string synthesized_output;
};

int fail(int code, const std::string& message) { return report_error("plan", code, message); }

// The output files' formats and paths; a usage error's exit code, or nullopt.
std::optional<int> check_outputs(const PlanArgs& args) {
  if (!args.output.empty() && !args.output.ends_with(".json") && !args.output.ends_with(".csv")) {
    return fail(kExitUsage, fmt::format("-o {}: the file must end in .csv or .json", args.output));
  }
  if (!args.synthesized_output.empty()) {
    if (!args.synthesize) return fail(kExitUsage, "--synthesized-output needs --synthesize");
    if (auto format = sched::format_from_extension(args.synthesized_output); !format) {
      return fail(kExitUsage, fmt::format("--synthesized-output: {}", format.error().message));
    }
  }
  if (auto writable = check_output_paths({{"--output", args.output}, {"--synthesized-output", args.synthesized_output}});
      !writable) {
    return fail(kExitInvalid, writable.error().message);
  }
  return std::nullopt;
}

// The rows to -o, and the synthesized schedule to --synthesized-output when one was found.
int write_outputs(const PlanArgs& args, const sim::Plan& plan) {
  if (!args.output.empty()) {
    const bool json = args.output.ends_with(".json");
    const std::string text = json ? sim::sweep_json(plan.sweep) : sim::sweep_csv(plan.sweep.rows);
    if (auto written = sched::write_text_file(args.output, text); !written) return fail(kExitInvalid, written.error().message);
    fmt::print("\nwrote {} rows to {}\n", plan.sweep.rows.size(), args.output);
  }
  if (!args.synthesized_output.empty()) {
    if (!plan.synthesis || !plan.synthesis->found()) return fail(kExitInvalid, "--synthesized-output: no schedule was synthesized (see above)");
    if (auto saved = sched::save_schedule(plan.synthesis->schedule, args.synthesized_output); !saved) {
      return fail(kExitInvalid, saved.error().message);
    }
    fmt::print("\nwrote the synthesized schedule to {} (`pipeworks simulate --schedule-file {}` reads it back)\n",
               args.synthesized_output, args.synthesized_output);
  }
  return plan.best ? kExitOk : kExitInvalid;
}

int run(const PlanArgs& args) {
  if (auto failed = check_outputs(args)) return *failed;
  auto batch = sim::parse_single_int(args.batch);
  if (!batch) return fail(kExitUsage, fmt::format("--batch: {}", batch.error().message));
  auto devices = sim::parse_single_int(args.devices);
  if (!devices) return fail(kExitUsage, fmt::format("--devices: {}", devices.error().message));
  if (auto size = sim::check_cost_model_devices(*devices); !size) {
    return fail(kExitUsage, fmt::format("--devices: {}", size.error().message));
  }
  bool usage_error = false;
  auto inputs = resolve_planning_args(args.planning, "plan", usage_error);
  if (!inputs) return fail(usage_error ? kExitUsage : kExitInvalid, inputs.error().message);

  auto search = resolve_schedule_search(args.search);
  if (!search) return fail(kExitUsage, search.error().message);
  auto layouts = resolve_layout_search(args.layouts);
  if (!layouts) return fail(kExitUsage, layouts.error().message);

  sim::PlanRequest request;
  request.schedules = search->schedules;
  request.virtual_stage_counts = search->virtual_stage_counts;
  request.model = inputs->model;
  request.cluster = inputs->cluster;
  request.batch_size = *batch;
  request.num_devices = *devices;
  request.memory_cap_bytes = inputs->memory_cap_bytes;
  request.optimizer = inputs->optimizer;
  request.zero_stages = layouts->zero_stages;
  request.tp_counts = layouts->tp_counts;
  request.sequence_parallel = layouts->sequence_parallel;
  request.tp_comm_overlap = layouts->tp_comm_overlap;
  request.rank_order = layouts->rank_order;
  request.data_parallel = layouts->options;
  auto spec = sim::plan_sweep_spec(request);
  if (!spec) return fail(kExitInvalid, spec.error().message);
  sim::SkipCounts skipped;
  ProgressBar bar = ProgressBar::on_stderr("plan", sim::sweep_configs(*spec, skipped).size());
  sim::SweepOptions options;
  options.threads = args.planning.threads;
  options.on_progress = [&bar](std::size_t done, std::size_t) { bar.update(done); };
  auto plan = args.synthesize ? sim::make_plan_with_synthesis(request, args.synthesis, options)
                               : sim::make_plan(request, options);
  bar.finish();
  if (!plan) return fail(kExitInvalid, plan.error().message);
  std::cout << sim::plan_report(*plan);
  return write_outputs(args, *plan);
}

void add_synthesis_options(CLI::App& command, PlanArgs& args) {
  command.add_flag("--synthesize", args.synthesize,
                   "Also search a schedule (as `pipeworks synthesize`) from the fastest fitting row with tp 1 and "
                   "dp 1, on that row's placement");
  command.add_option("--synthesis-time-limit", args.synthesis.time_limit_s, "Seconds that search may take")
      ->check(number_from(0, sim::kMaxTimeLimitS, Ends::kAboveLow))->capture_default_str();
  command.add_option("--synthesis-seed", args.synthesis.seed, "Seed of that search's random moves")
      ->check(unsigned_64())->capture_default_str();
  command.add_option("--synthesis-max-evaluations", args.synthesis.max_evaluations,
                     "Stop that search's local search after N evaluations (default: what the time limit buys)")
      ->check(integer_from(0, std::numeric_limits<std::int32_t>::max()));
  command.add_option("--synthesized-output", args.synthesized_output,
                     "Write the synthesized schedule to FILE.csv or FILE.json");
}

}  // namespace

void add_plan_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* command = app.add_subcommand(
      "plan", "The fastest layout (pipeline x data-parallel replicas) that fits on all the devices, and why each "
              "alternative lost");
  add_planning_options(*command, args->planning);
  command->add_option("--batch", args->batch, "Samples per training step")->required();
  command->add_option("--devices", args->devices, "Devices to use (the first N of the cluster)")->required();
  add_schedule_search_options(*command, args->search);
  add_layout_search_flags(*command, args->layouts, false);
  command->add_option("-o,--output", args->output, "Also write every swept row to FILE.csv or FILE.json");
  add_synthesis_options(*command, *args);
  command->callback([args, &context] { context.exit_code = run(*args); });
}

}  // namespace pipeworks::cli
