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
#include "cli/layout_flags.h"
#include "cli/planning_args.h"
#include "cli/schedule_flags.h"
#include "cli/simulate_partition.h"
#include "cli/simulate_schedule.h"
#include "cli/simulation_outputs.h"
#include "sched/generators.h"
#include "sched/limits.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/partition.h"
#include "sim/plan/partition_text.h"
#include "sim/report/sim_report.h"
#include "sim/spec/batch_split.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/tensor_parallel.h"

namespace pipeworks::cli {
namespace {

struct SimulateOptions {
  // Worth simulating when none is named: GPT-2 medium on one DGX H100.
  SpecArgs specs = [] {
    SpecArgs s;
    s.model = "gpt2-medium";
    s.cluster = "dgx-h100";
    return s;
  }();
  ScheduleRequest schedule;
  std::optional<int> batch;  // default: 4 samples per micro-batch
  std::string partition = kDefaultPartition;
  std::string optimizer = kDefaultOptimizer;
  LayoutArgs layout;
  std::string comm;  // "" = the cluster's comm mode
  std::string json;
  std::string trace;
  std::string svg;
  bool grid = false;
};

// The specs: one tensor-parallel rank's model (--tp), the cluster with --comm applied.
std::optional<Failure> resolve_specs(const SimulateOptions& o, sim::ModelSpec& model, sim::ClusterSpec& cluster) {
  if (auto size = check_preset_size_args(o.specs); !size) return usage(size.error().message);
  auto c = resolve_cluster(o.specs, "simulate");
  if (!c) return invalid(c.error().message);
  auto m = resolve_model(o.specs, "simulate", &*c);
  if (!m) return invalid(m.error().message);
  auto rank = sim::tensor_parallel_view(*m, o.layout.tp, o.layout.sequence_parallel, o.layout.tp_comm_overlap);
  if (!rank) return invalid(fmt::format("--tp {}: {}", o.layout.tp, rank.error().message));
  model = std::move(rank).value();
  cluster = std::move(c).value();
  if (!o.comm.empty()) {
    auto mode = sim::parse_comm_mode(o.comm);
    if (!mode) return usage(mode.error().message);
    cluster.comm_mode = *mode;
  }
  return std::nullopt;
}

// What is refused before a spec is read: a generated schedule's size and the output paths.
std::optional<Failure> check_request(const SimulateOptions& o) {
  if (o.schedule.file.empty()) {
    if (auto size = sched::check_schedule_size(o.schedule.stages, o.schedule.microbatches); !size) {
      return usage(size.error().message);
    }
  }
  if (auto writable = check_output_paths({{"--json", o.json}, {"--trace", o.trace}, {"--svg", o.svg}}); !writable) {
    return invalid(writable.error().message);
  }
  return std::nullopt;
}

std::optional<Failure> run(const SimulateOptions& o) {
  const ScheduleRequest& request = o.schedule;
  if (auto refused = check_request(o)) return refused;
  auto optimizer = sim::parse_optimizer(o.optimizer);
  if (!optimizer) return usage(optimizer.error().message);
  auto replicated = layout_from(o.layout, 1, 1);
  if (!replicated) return usage(replicated.error().message);
  auto dp_options = data_parallel_options_from(o.layout.replicas);
  if (!dp_options) return usage(dp_options.error().message);
  sim::ModelSpec model;
  sim::ClusterSpec cluster;
  if (auto failure = resolve_specs(o, model, cluster)) return failure;
  bool usage_error = false;
  auto chosen = schedule_to_simulate(request, cluster, usage_error, *replicated);
  if (!chosen) return usage_error ? usage(chosen.error().message) : invalid(chosen.error().message);
  const sched::Schedule& schedule = chosen->schedule;
  if (auto size = sim::check_cost_model_devices(schedule.num_devices()); !size) return usage(size.error().message);
  const sim::ParallelLayout layout = sim::with_pipeline(*replicated, schedule.num_devices(), schedule.num_stages);
  if (auto fits = sim::check_layout(layout, cluster.num_devices(), cluster.devices_per_node); !fits) {
    return invalid(fmt::format("{} on cluster '{}': {}", sim::layout_text(layout), cluster.name, fits.error().message));
  }
  const int stages = schedule.num_stages;
  const int microbatches = schedule.num_microbatches;
  // --batch is the whole mini-batch, as for run, sweep and plan: each replica takes batch / dp.
  const int batch = o.batch.value_or(microbatches * layout.dp * kDefaultSamplesPerMicrobatch);
  const auto split = sim::microbatch_size(batch, microbatches * layout.dp);
  if (!split) {
    return usage(fmt::format("--batch {} and {} micro-batches x {} replicas: {}", batch, microbatches, layout.dp,
                             split.error().message));
  }
  const bool recompute = schedule.has_recompute();

  const auto kind = sched::parse_schedule_kind(request.kind).value();  // balanced's default in-flight rule
  const sim::PartitionContext context{kind, microbatches, *split, *optimizer, recompute, {}, {}, {}, layout.zero, layout.dp};
  auto partition = simulate_partition(o.partition, model, cluster, schedule, context, sim::replica_devices(layout),
                                      usage_error);
  if (!partition) return usage_error ? usage(partition.error().message) : invalid(partition.error().message);
  auto costs =
      sim::build_cost_model(model, cluster, *partition, schedule.placement, *split, *optimizer, layout, *dp_options);
  if (!costs) return invalid(costs.error().message);
  auto timed = on_stage_times(request, cluster, *replicated, *costs, *chosen);
  if (!timed) return invalid(timed.error().message);
  const bool need_timeline = !o.json.empty() || !o.trace.empty() || !o.svg.empty() || o.grid;
  auto result = sim::simulate(timed->schedule, *costs, sim::SimOptions{need_timeline});
  if (!result) return invalid(fmt::format("simulation failed: {}", result.error().message));

  const auto generated = request.file.empty() ? std::optional(kind) : std::nullopt;
  const sim::ReportInputs inputs{model.name, cluster.name, chosen->name, stages, microbatches, *split, recompute, true,
                                 sim::stage_layers(*partition, model), generated, layout,
                                 sim::input_warnings(model, *split, generated, request.virtual_stages)};
  std::cout << simulation_summary(*result, inputs, {costs->comm_mode, o.partition, o.optimizer, o.grid});
  if (auto written = write_simulation({o.json, o.trace, o.svg}, *result, inputs, *partition); !written) {
    return invalid(written.error().message);
  }
  return std::nullopt;
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* command = app.add_subcommand(
      "simulate", "Predict a pipeline schedule's timeline, bubble, throughput and memory on a cluster");
  add_spec_options(*command, o->specs);
  ScheduleRequest& r = o->schedule;
  const ScheduleFlagTargets targets{&r.kind,           &r.stages,    &r.microbatches,    &r.placement,
                                    &r.virtual_stages, &r.recompute, &r.pipeline_ranks};
  const ScheduleFlags flags =
      add_schedule_flags(*command, targets, {.shape_required = false, .max_device = sched::kMaxStages - 1});
  command->add_option("--schedule-file", r.file,
                      "Simulate this schedule (CSV in torch.distributed.pipelining's layout, or pipeworks JSON): "
                      "compute-only files are lowered, files with SEND/RECV taken as written; K, M and the "
                      "placement come from the file");
  command->add_option("--batch", o->batch, fmt::format("Samples per mini-batch over all replicas, a multiple of M x dp (default: {} per micro-batch)", kDefaultSamplesPerMicrobatch))
      ->check(integer_from(1, std::numeric_limits<int>::max()));
  command->add_option("--partition", o->partition,
                      "uniform, balanced (min-max stage time under memory caps), or layer counts per stage, "
                      "e.g. 7,6,6,7")
      ->capture_default_str();
  command->add_option("--optimizer", o->optimizer, "Optimizer whose state counts towards memory")
      ->check(CLI::IsMember(std::vector<std::string>{"sgd", "momentum", "adam"}))
      ->capture_default_str();
  add_layout_flags(*command, o->layout);
  command->add_option("--comm", o->comm, "Override the cluster's comm mode")
      ->check(CLI::IsMember(std::vector<std::string>{"overlap", "blocking"}));
  command->add_option("--json", o->json, "Write the full report as JSON (docs/simulate_report.md)");
  command->add_option("--trace", o->trace, "Write a Chrome/Perfetto trace of the predicted timeline");
  command->add_option("--svg", o->svg, "Write an SVG Gantt chart of the predicted timeline");
  command->add_flag("--grid", o->grid, "Print the predicted timeline as a terminal grid");
  command->callback([o, &context, flags, targets] {
    if (auto pp = resolve_pipeline_ranks(flags, targets); !pp) {
      context.exit_code = report_error("simulate", kExitUsage, pp.error().message);
      return;
    }
    o->schedule.stages_given = flags.stages->count() > 0 || flags.pipeline_ranks->count() > 0;
    o->schedule.microbatches_given = flags.microbatches->count() > 0;
    o->schedule.kind_given = flags.kind->count() > 0;
    if (auto failure = run(*o)) {
      context.exit_code = report_error("simulate", failure->exit_code, failure->message);
    } else {
      context.exit_code = kExitOk;
    }
  });
}

}  // namespace pipeworks::cli
