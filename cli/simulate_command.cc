// `pipeworks simulate`: model + cluster + partition -> cost model; GPipe/1F1B schedule (with
// optional re-materialization) lowered to SEND/RECV; simulated; printed as an aligned summary,
// optionally written as a JSON report, a Chrome trace, an SVG Gantt chart or a terminal grid.
#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/planning_args.h"
#include "sched/text_file.h"
#include "sched/generators.h"
#include "sched/limits.h"
#include "sched/passes.h"
#include "sim/batch_split.h"
#include "sim/cluster_spec.h"
#include "sim/cost_model_builder.h"
#include "sim/partition.h"
#include "sim/partition_text.h"
#include "sim/sim_report.h"
#include "sim/simulator.h"
#include "viz/chrome_trace.h"
#include "viz/svg_gantt.h"
#include "viz/terminal_grid.h"

namespace pipeworks::cli {
namespace {

struct SimulateOptions {
  std::string model = "gpt2-medium";
  std::string cluster = "dgx-h100";
  int stages = 4;
  int microbatches = 8;
  std::string schedule = "gpipe";
  std::optional<int> batch;  // default: 4 samples per micro-batch
  std::string partition = "balanced";
  bool recompute = false;
  std::string optimizer = "adam";
  std::string comm;  // "" = the cluster's comm mode
  std::string json;
  std::string trace;
  std::string svg;
  bool grid = false;
};

constexpr int kDefaultMicrobatchSize = 4;

// A failure and the exit code it maps to.
struct Failure {
  int exit_code;
  std::string message;
};

std::optional<Failure> usage(std::string message) { return Failure{kExitUsage, std::move(message)}; }
std::optional<Failure> invalid(std::string message) { return Failure{kExitInvalid, std::move(message)}; }

// "uniform", "balanced" (over the cluster's speeds and memory) or layer counts "7,6,6,7"; a
// malformed text or a stage count other than --stages is a usage error.
std::optional<Failure> make_partition(const SimulateOptions& o, const sim::ModelSpec& model,
                                      const sim::ClusterSpec& cluster, const std::vector<int>& placement,
                                      sim::PartitionContext context, std::optional<sim::Partition>& out) {
  if (o.partition != "uniform" && o.partition != "balanced") {
    auto counts = sim::parse_layer_counts(o.partition);
    if (!counts) return usage("--" + counts.error().message);
    if (static_cast<int>(counts->size()) != o.stages) {
      return usage(fmt::format("--partition names {} stages but --stages is {}", counts->size(), o.stages));
    }
  }
  for (const int device : placement) {
    context.stage_speed.push_back(cluster.devices[static_cast<std::size_t>(device)].relative_speed);
    context.capacity_bytes.push_back(cluster.devices[static_cast<std::size_t>(device)].memory_bytes);
  }
  auto partition = sim::choose_partition(o.partition, model, o.stages, context);
  if (!partition) return invalid(o.partition == "balanced" ? partition.error().message : "--" + partition.error().message);
  out = std::move(partition).value();
  return std::nullopt;
}

std::optional<Failure> write_outputs(const SimulateOptions& o, const sim::SimResult& result,
                                     const sim::ReportInputs& inputs) {
  if (!o.json.empty()) {
    if (auto st = sched::write_text_file(o.json, sim::report_json(result, inputs)); !st) return invalid(st.error().message);
  }
  const std::vector<const sched::Timeline*> timelines = {&result.timeline};
  if (!o.trace.empty()) {
    if (auto st = viz::write_chrome_trace(o.trace, timelines); !st) return invalid(st.error().message);
  }
  if (!o.svg.empty()) {
    viz::SvgOptions svg;
    svg.title = fmt::format("{} on {}: {} K={} M={} (predicted)", inputs.model, inputs.cluster, inputs.schedule,
                            inputs.num_stages, inputs.num_microbatches);
    if (auto st = viz::write_svg(o.svg, timelines, svg); !st) return invalid(st.error().message);
  }
  return std::nullopt;
}

std::optional<Failure> run(const SimulateOptions& o) {
  const auto kind = sched::parse_schedule_kind(o.schedule);
  if (!kind) return usage(kind.error().message);
  if (auto size = sched::check_schedule_size(o.stages, o.microbatches); !size) return usage(size.error().message);
  if (auto writable = check_output_paths({{"--json", o.json}, {"--trace", o.trace}, {"--svg", o.svg}}); !writable) {
    return invalid(writable.error().message);
  }
  const int batch = o.batch.value_or(o.microbatches * kDefaultMicrobatchSize);
  const auto split = sim::microbatch_size(batch, o.microbatches);
  if (!split) return usage(fmt::format("--batch {} and --microbatches {}: {}", batch, o.microbatches, split.error().message));
  const int microbatch_size = *split;
  auto optimizer = sim::parse_optimizer(o.optimizer);
  if (!optimizer) return usage(optimizer.error().message);

  auto model = resolve_model(o.model);
  if (!model) return invalid(model.error().message);
  auto cluster = resolve_cluster(o.cluster, std::nullopt);
  if (!cluster) return invalid(cluster.error().message);
  if (!o.comm.empty()) {
    auto mode = sim::parse_comm_mode(o.comm);
    if (!mode) return usage(mode.error().message);
    cluster->comm_mode = *mode;
  }
  auto placement = sim::default_placement(o.stages, *cluster);
  if (!placement) return invalid(placement.error().message);
  std::optional<sim::Partition> partition;
  const sim::PartitionContext context{*kind, o.microbatches, microbatch_size, *optimizer, o.recompute, {}, {}};
  if (auto failure = make_partition(o, *model, *cluster, *placement, context, partition)) return failure;
  auto costs = sim::build_cost_model(*model, *cluster, *partition, *placement, microbatch_size, *optimizer);
  if (!costs) return invalid(costs.error().message);

  auto schedule = sched::generate(*kind, sched::ScheduleShape{o.stages, o.microbatches, *placement});
  if (!schedule) return usage(schedule.error().message);
  if (o.recompute) schedule = sched::add_recompute(*schedule);
  if (schedule) schedule = sched::lower_comm(*schedule);
  if (!schedule) return invalid(schedule.error().message);

  const bool need_timeline = !o.json.empty() || !o.trace.empty() || !o.svg.empty() || o.grid;
  auto result = sim::simulate(*schedule, *costs, sim::SimOptions{need_timeline});
  if (!result) return invalid(fmt::format("simulation failed: {}", result.error().message));

  sim::ReportInputs inputs{model->name, cluster->name, o.schedule, o.stages, o.microbatches, microbatch_size,
                           o.recompute, true, sim::stage_layers(*partition, *model)};
  std::cout << fmt::format("{} on {}: {}, K={} stages, M={} micro-batches of {} samples, {} comm{}\n\n",
                           model->name, cluster->name, o.schedule, o.stages, o.microbatches, microbatch_size,
                           sim::comm_mode_name(costs->comm_mode), o.recompute ? ", re-materialization" : "")
            << sim::summary_table(*result, inputs);
  if (o.grid) std::cout << "\n" << viz::terminal_grid(result->timeline);
  return write_outputs(o, *result, inputs);
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* command = app.add_subcommand(
      "simulate", "Predict a pipeline schedule's timeline, bubble, throughput and memory on a cluster");
  command->add_option("--model", o->model, "Model preset name or model spec JSON file")->capture_default_str();
  command->add_option("--cluster", o->cluster, "Cluster preset name or cluster spec JSON file")->capture_default_str();
  command->add_option("--stages,-k,-K", o->stages, "Number of pipeline stages K")
      ->check(integer_from(1, sched::kMaxStages))
      ->capture_default_str();
  command->add_option("--microbatches,-m,-M", o->microbatches, "Number of micro-batches M")
      ->check(integer_from(1, sched::kMaxScheduleCells))
      ->capture_default_str();
  command->add_option("--schedule", o->schedule, "Schedule kind")
      ->check(CLI::IsMember(std::vector<std::string>{"gpipe", "1f1b"}))
      ->capture_default_str();
  command->add_option("--batch", o->batch, "Samples per iteration, a multiple of M (default: 4 per micro-batch)")
      ->check(integer_from(1, std::numeric_limits<int>::max()));
  command->add_option("--partition", o->partition,
                      "uniform, balanced (min-max stage time under memory caps), or layer counts per stage, "
                      "e.g. 7,6,6,7")
      ->capture_default_str();
  command->add_flag("--recompute", o->recompute, "Re-materialize each forward before its backward");
  command->add_option("--optimizer", o->optimizer, "Optimizer whose state counts towards memory")
      ->check(CLI::IsMember(std::vector<std::string>{"sgd", "momentum", "adam"}))
      ->capture_default_str();
  command->add_option("--comm", o->comm, "Override the cluster's comm mode")
      ->check(CLI::IsMember(std::vector<std::string>{"overlap", "blocking"}));
  command->add_option("--json", o->json, "Write the full report as JSON (docs/simulate_report.md)");
  command->add_option("--trace", o->trace, "Write a Chrome/Perfetto trace of the predicted timeline");
  command->add_option("--svg", o->svg, "Write an SVG Gantt chart of the predicted timeline");
  command->add_flag("--grid", o->grid, "Print the predicted timeline as a terminal grid");
  command->callback([o, &context] {
    if (auto failure = run(*o)) {
      std::cerr << "pipeworks simulate: error: " << failure->message << "\n";
      if (failure->exit_code == kExitUsage) std::cerr << "Run 'pipeworks simulate --help' for usage.\n";
      context.exit_code = failure->exit_code;
    } else {
      context.exit_code = kExitOk;
    }
  });
}

}  // namespace pipeworks::cli
