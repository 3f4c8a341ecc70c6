// `pipeworks sweep`: simulate every combination of stages, micro-batches, schedule and
// re-materialization for a model on a cluster; print the best and the Pareto frontier, and
// write every row to CSV or JSON.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/layout_flags.h"
#include "cli/renamed_option.h"
#include "cli/planning_args.h"
#include "cli/progress_bar.h"
#include "sched/text_file.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/sweep.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/int_ranges.h"

namespace pipeworks::cli {
namespace {

struct SweepArgs {
  PlanningArgs planning;
  std::string batch;
  std::string stages;
  std::string microbatches;
  ScheduleSearchArgs search;
  LayoutSearchArgs layouts{.dp = "1", .tp = "", .sequence_parallel = false, .tp_comm_overlap = false, .zero = "0", .replicas = {}};
  std::string recompute = "off,on";
  std::size_t top = 10;
  std::string output;
};

int fail(int code, const std::string& message) { return report_error("sweep", code, message); }

// Fills the lists of `spec` from the arguments; any error is bad usage.
sched::Status parse_lists(const SweepArgs& args, sim::SweepSpec& spec) {
  const auto list = [](const std::string& text, std::string_view option, std::vector<int>& out) -> sched::Status {
    auto values = sim::parse_int_list(text);
    if (!values) return sched::Error{fmt::format("{}: {}", option, values.error().message)};
    out = std::move(values).value();
    return sched::Ok{};
  };
  if (auto s = list(args.batch, "--batch", spec.batch_sizes); !s) return s;
  if (args.stages.empty()) return sched::Error{"--pp is required (the pipeline ranks to compare, e.g. 2,4,8)"};
  if (auto s = list(args.stages, "--pp", spec.stage_counts); !s) return s;
  if (auto s = list(args.microbatches, "--microbatches", spec.microbatch_counts); !s) return s;
  auto search = resolve_schedule_search(args.search);
  if (!search) return search.error();
  spec.schedules = search->schedules;
  spec.virtual_stage_counts = search->virtual_stage_counts;
  auto recompute = sim::parse_name_list(args.recompute, {"off", "on"});
  if (!recompute) return sched::Error{fmt::format("--recompute: {}", recompute.error().message)};
  for (const auto name : *recompute) spec.recompute_modes.push_back(name == "on");
  auto layouts = resolve_layout_search(args.layouts);
  if (!layouts) return layouts.error();
  spec.dp_counts = layouts->dp_counts;
  if (!layouts->tp_counts.empty()) spec.tp_counts = layouts->tp_counts;
  spec.sequence_parallel = layouts->sequence_parallel;
  spec.tp_comm_overlap = layouts->tp_comm_overlap;
  spec.zero_stages = layouts->zero_stages;
  spec.rank_order = layouts->rank_order;
  spec.data_parallel = layouts->options;
  return sched::Ok{};
}

std::string skipped_text(const sim::SkipCounts& s) {
  if (s.total() == 0) return "0 skipped";
  std::vector<std::string> parts;
  if (s.more_stages_than_devices > 0) {
    parts.push_back(fmt::format("{} needing more devices than the cluster's", s.more_stages_than_devices));
  }
  if (s.more_stages_than_layers > 0) parts.push_back(fmt::format("{} more stages than layers", s.more_stages_than_layers));
  if (s.microbatches_not_dividing_batch > 0) {
    parts.push_back(fmt::format("{} micro-batches not dividing the batch", s.microbatches_not_dividing_batch));
  }
  return fmt::format("{} skipped ({})", s.total(), fmt::join(parts, ", "));
}

int run(const SweepArgs& args) {
  const bool json = args.output.ends_with(".json");
  if (!args.output.empty() && !json && !args.output.ends_with(".csv")) {
    return fail(kExitUsage, fmt::format("-o {}: the file must end in .csv or .json", args.output));
  }
  if (auto writable = check_output_paths({{"--output", args.output}}); !writable) {
    return fail(kExitInvalid, writable.error().message);
  }
  bool usage_error = false;
  auto inputs = resolve_planning_args(args.planning, "sweep", usage_error);
  if (!inputs) return fail(usage_error ? kExitUsage : kExitInvalid, inputs.error().message);
  sim::SweepSpec spec;
  spec.model = inputs->model;
  spec.cluster = inputs->cluster;
  spec.memory_cap_bytes = inputs->memory_cap_bytes;
  spec.optimizer = inputs->optimizer;
  if (auto lists = parse_lists(args, spec); !lists) return fail(kExitUsage, lists.error().message);
  for (const int devices : spec.stage_counts) {
    if (auto size = sim::check_cost_model_devices(devices); !size) {
      return fail(kExitUsage, fmt::format("--pp: {}", size.error().message));
    }
  }

  if (auto valid = sim::check_sweep_spec(spec); !valid) return fail(kExitInvalid, valid.error().message);
  sim::SkipCounts skipped;
  ProgressBar bar = ProgressBar::on_stderr("sweep", sim::sweep_configs(spec, skipped).size());
  sim::SweepOptions options;
  options.threads = args.planning.threads;
  options.on_progress = [&bar](std::size_t done, std::size_t) { bar.update(done); };
  auto result = sim::run_sweep(spec, options);
  bar.finish();
  if (!result) return fail(kExitInvalid, result.error().message);

  const auto& rows = result->rows;
  std::size_t fitting = 0;
  std::size_t failed = 0;
  for (const auto& row : rows) {
    fitting += row.simulated && row.fits ? 1 : 0;
    failed += row.simulated ? 0 : 1;
  }
  fmt::print("sweep: {} on {} ({} devices): {} configurations simulated, {}; {} fit in memory\n", spec.model.name,
             spec.cluster.name, spec.cluster.num_devices(), rows.size() - failed, skipped_text(result->skipped), fitting);
  for (const auto& row : rows) {
    if (!row.simulated) fmt::print("failed: {} stages, {} micro-batches: {}\n", row.config.num_stages, row.config.num_microbatches, row.note);
  }
  const bool show_batch = spec.batch_sizes.size() > 1;
  std::vector<std::size_t> ranked = sim::rank_rows(rows);
  if (ranked.size() > args.top) ranked.resize(args.top);
  if (!ranked.empty()) {
    fmt::print("\nTop {} (fitting first, by samples/s):\n{}", ranked.size(), sim::rows_table(rows, ranked, show_batch));
    fmt::print("\nPareto frontier (samples/s against peak memory):\n{}",
               sim::rows_table(rows, sim::pareto_rows(rows), show_batch));
  }
  if (!args.output.empty()) {
    const std::string text = json ? sim::sweep_json(*result) : sim::sweep_csv(rows);
    if (auto written = sched::write_text_file(args.output, text); !written) return fail(kExitInvalid, written.error().message);
    fmt::print("\nwrote {} rows to {}\n", rows.size(), args.output);
  }
  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* command = app.add_subcommand(
      "sweep", "Simulate every combination of stages, micro-batches, schedule and re-materialization");
  add_planning_options(*command, args->planning);
  command->add_option("--batch", args->batch, "Samples per step; a list or range, e.g. 512 or 256,512")->required();
  add_renamed_option(*command, "--pp", "--stages", args->stages,
                     "Pipeline ranks (devices a pipeline spans), e.g. 2,4,8 or pow2:1..64: K = pp stages, or v x pp "
                     "for the virtual-stage kinds",
                     [](CLI::Option&) {});
  add_layout_search_flags(*command, args->layouts, true);
  command->add_option("--microbatches", args->microbatches, "Micro-batch counts, e.g. 1..64")->required();
  add_schedule_search_options(*command, args->search);
  command->add_option("--recompute", args->recompute, "Re-materialization modes, e.g. off,on")->capture_default_str();
  command->add_option("--top", args->top, "How many of the best configurations to print")
      ->check(integer_from(0, 1'000'000))
      ->capture_default_str();
  command->add_option("-o,--output", args->output, "Write every row to FILE.csv or FILE.json");
  command->callback([args, &context] { context.exit_code = run(*args); });
}

}  // namespace pipeworks::cli
