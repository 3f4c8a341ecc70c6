// `pipeworks plan`: the fastest pipeline configuration that fits, for a model, a cluster, a
// batch and a number of devices, with a verdict for each runner-up family.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/layout_flags.h"
#include "cli/planning_args.h"
#include "cli/progress_bar.h"
#include "sched/text_file.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/planner.h"
#include "sim/plan/sweep_table.h"
#include "sim/report/plan_report.h"
#include "sim/spec/int_ranges.h"

namespace pipeworks::cli {
namespace {

struct PlanArgs {
  PlanningArgs planning;
  std::string batch;
  std::string devices;
  ScheduleSearchArgs search;
  LayoutSearchArgs layouts{.dp = "1", .tp = "", .sequence_parallel = false, .tp_comm_overlap = false, .zero = "0,1", .replicas = {}};
  std::string output;
};

int fail(int code, const std::string& message) { return report_error("plan", code, message); }

int run(const PlanArgs& args) {
  const bool json = args.output.ends_with(".json");
  if (!args.output.empty() && !json && !args.output.ends_with(".csv")) {
    return fail(kExitUsage, fmt::format("-o {}: the file must end in .csv or .json", args.output));
  }
  if (auto writable = check_output_paths({{"--output", args.output}}); !writable) {
    return fail(kExitInvalid, writable.error().message);
  }
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
  auto plan = sim::make_plan(request, options);
  bar.finish();
  if (!plan) return fail(kExitInvalid, plan.error().message);

  std::cout << sim::plan_report(*plan);
  if (!args.output.empty()) {
    const std::string text = json ? sim::sweep_json(plan->sweep) : sim::sweep_csv(plan->sweep.rows);
    if (auto written = sched::write_text_file(args.output, text); !written) return fail(kExitInvalid, written.error().message);
    fmt::print("\nwrote {} rows to {}\n", plan->sweep.rows.size(), args.output);
  }
  return plan->best ? kExitOk : kExitInvalid;
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
  command->callback([args, &context] { context.exit_code = run(*args); });
}

}  // namespace pipeworks::cli
