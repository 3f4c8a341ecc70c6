// `pipeworks simulate`: model + cluster + partition -> cost model; GPipe/1F1B schedule (with
// optional re-materialization) lowered to SEND/RECV; simulated; printed as an aligned summary,
// optionally written as a JSON report, a Chrome trace, an SVG Gantt chart or a terminal grid.
#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_list.h"
#include "cli/planning_args.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/cluster_spec.h"
#include "sim/cost_model_builder.h"
#include "sim/partition.h"
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

// "uniform", "balanced", or per-stage layer counts "7,6,6,7".
sched::Result<sim::Partition> make_partition(const SimulateOptions& o, const sim::ModelSpec& model,
                                             const sim::ClusterSpec& cluster, const std::vector<int>& placement,
                                             int microbatch_size, sim::OptimizerKind optimizer, bool& usage_error) {
  usage_error = false;
  const int k = o.stages;
  if (o.partition == "uniform") return sim::uniform_partition(model.num_layers(), k);
  if (o.partition == "balanced") {
    sim::BalanceOptions b;
    b.microbatch_size = microbatch_size;
    b.optimizer = optimizer;
    b.recompute = o.recompute;
    for (int s = 0; s < k; ++s) {
      const auto& device = cluster.devices[static_cast<std::size_t>(placement[static_cast<std::size_t>(s)])];
      b.stage_speed.push_back(device.relative_speed);
      b.capacity_bytes.push_back(device.memory_bytes);
      b.in_flight.push_back(o.schedule == "gpipe" ? o.microbatches : std::min(o.microbatches, k - s));
    }
    return sim::balanced_partition(model, k, b);
  }
  std::vector<int> boundaries = {0};
  std::size_t at = 0;
  while (at <= o.partition.size()) {
    const std::size_t comma = std::min(o.partition.find(',', at), o.partition.size());
    const std::string token = o.partition.substr(at, comma - at);
    int count = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), count);
    if (token.empty() || ec != std::errc{} || end != token.data() + token.size() || count < 1) {
      usage_error = true;
      return sched::Error{fmt::format("--partition '{}': expected uniform, balanced or positive layer counts "
                                      "per stage such as 7,6,6,7 (bad entry '{}')",
                                      o.partition, token)};
    }
    count = std::min(count, model.num_layers() + 1);  // too many either way; keeps the sum small
    boundaries.push_back(boundaries.back() + count);
    at = comma + 1;
  }
  if (static_cast<int>(boundaries.size()) - 1 != k) {
    usage_error = true;
    return sched::Error{fmt::format("--partition names {} stages but --stages is {}", boundaries.size() - 1, k)};
  }
  auto p = sim::explicit_partition(boundaries, model.num_layers());
  if (!p) return sched::Error{fmt::format("--partition: {} (the model has {} layers)", p.error().message, model.num_layers())};
  return p;
}

std::optional<Failure> write_outputs(const SimulateOptions& o, const sim::SimResult& result,
                                     const sim::ReportInputs& inputs) {
  if (!o.json.empty()) {
    if (auto st = write_text_file(o.json, sim::report_json(result, inputs)); !st) return invalid(st.error().message);
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
  const int batch = o.batch.value_or(o.microbatches * kDefaultMicrobatchSize);
  if (batch % o.microbatches != 0) {
    return usage(fmt::format("--batch {} is not a multiple of --microbatches {}", batch, o.microbatches));
  }
  const int microbatch_size = batch / o.microbatches;
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
  bool partition_usage = false;
  auto partition = make_partition(o, *model, *cluster, *placement, microbatch_size, *optimizer, partition_usage);
  if (!partition) return Failure{partition_usage ? kExitUsage : kExitInvalid, partition.error().message};
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
                           o.recompute, true, {}};
  for (int s = 0; s < partition->num_stages(); ++s) {
    const int b = partition->begin(s);
    const int e = partition->end(s);
    inputs.stages.push_back(sim::StageLayers{b, e, model->layers[static_cast<std::size_t>(b)].name,
                                             model->layers[static_cast<std::size_t>(e - 1)].name});
  }
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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--microbatches,-m,-M", o->microbatches, "Number of micro-batches M")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--schedule", o->schedule, "Schedule kind")
      ->check(CLI::IsMember(std::vector<std::string>{"gpipe", "1f1b"}))
      ->capture_default_str();
  command->add_option("--batch", o->batch, "Samples per iteration, a multiple of M (default: 4 per micro-batch)")
      ->check(CLI::PositiveNumber);
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
