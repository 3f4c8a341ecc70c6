// `pipeworks synthesize`: model + cluster + K + M (+ a placement) + a per-device memory cap -> the
// schedule with the shortest simulated step that fits the cap (sim/synth/synthesize.h decides
// everything); this file parses, checks the edge, prints and writes.
#include <cstdint>
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
#include "cli/schedule_flags.h"
#include "cli/shared_defaults.h"
#include "cli/synthesis_printing.h"
#include "sched/limits.h"
#include "sched/schedule_file.h"
#include "sched/text_file.h"
#include "sim/spec/units.h"
#include "sim/synth/placement_search.h"
#include "sim/synth/problem_from_specs.h"
#include "sim/synth/synthesize.h"

namespace pipeworks::cli {
namespace {

struct SynthesizeOptions {
  SpecArgs specs;
  int stages = kDefaultStages;
  int microbatches = kDefaultMicrobatches;
  std::vector<int> placement;  // empty: stage s on device s
  int search_placement = 0;     // > 0: the devices whose placements are searched
  std::string memory_cap;
  std::optional<int> batch;  // default: 4 samples per micro-batch
  std::string optimizer = kDefaultOptimizer;
  double time_limit_s = 10;
  std::uint64_t seed = 1;
  std::int64_t max_evaluations = -1;
  bool no_recompute = false;
  std::string output;
  std::string json;
};

sim::SearchOptions search_options(const SynthesizeOptions& o) { return {o.time_limit_s, o.seed, o.max_evaluations, !o.no_recompute}; }

// What the search is asked: the resolved specs and the setup (sim/synth/problem_from_specs.h builds the rest).
struct Question {
  sim::ModelSpec model;
  sim::ClusterSpec cluster;
  sim::SynthesisSetup setup;
};

std::optional<Failure> resolve(const SynthesizeOptions& o, sim::Bytes cap, Question& out) {
  if (auto size = check_preset_size_args(o.specs); !size) return usage(size.error().message);
  auto optimizer = sim::parse_optimizer(o.optimizer);
  if (!optimizer) return usage(optimizer.error().message);
  out.setup = sim::SynthesisSetup{o.stages, o.microbatches, o.batch, *optimizer, cap, {}, o.placement};
  if (auto split = sim::synthesis_microbatch_size(out.setup); !split) {
    return usage("--" + split.error().message);
  }
  auto cluster = resolve_cluster(o.specs, "synthesize");
  if (!cluster) return invalid(cluster.error().message);
  auto model = resolve_model(o.specs, "synthesize", &*cluster);
  if (!model) return invalid(model.error().message);
  out.model = std::move(model).value();
  out.cluster = std::move(cluster).value();
  return std::nullopt;
}

// The search on the given placement, or over the candidates of --search-placement.
std::optional<Failure> search(const SynthesizeOptions& o, const Question& q, sim::SynthesisResult& result,
                              sim::SynthesisInputs& inputs) {
  if (o.search_placement > 0) {
    auto found = sim::synthesize_placements(q.model, q.cluster, q.setup, search_options(o), o.search_placement);
    if (!found) return invalid(found.error().message);
    result = std::move(found->result);
    inputs = std::move(found->chosen.inputs);
    std::cout << placement_trials_text(inputs.placements_tried);
    return std::nullopt;
  }
  auto built = sim::problem_from_specs(q.model, q.cluster, q.setup, search_options(o));
  if (!built) return invalid(built.error().message);
  auto found = sim::synthesize(built->problem, search_options(o));
  if (!found) return invalid(found.error().message);
  result = std::move(found).value();
  inputs = std::move(built->inputs);
  return std::nullopt;
}

// Checks at the edge: K x M, the cap's spelling, the output paths and the schedule file's format.
std::optional<Failure> check_edge(const SynthesizeOptions& o, sim::Bytes& cap) {
  if (auto size = sched::check_schedule_size(o.stages, o.microbatches); !size) {
    return usage(size.error().message);
  }
  auto parsed = sim::parse_bytes(o.memory_cap);
  if (!parsed) return usage(fmt::format("--memory-cap: {}", parsed.error().message));
  if (*parsed <= 0) return usage(fmt::format("--memory-cap must be positive, got '{}'", o.memory_cap));
  cap = *parsed;
  if (!o.output.empty()) {
    if (auto format = sched::format_from_extension(o.output); !format) {
      return usage(fmt::format("--output: {}", format.error().message));
    }
  }
  if (auto writable = check_output_paths({{"--output", o.output}, {"--json", o.json}}); !writable) {
    return invalid(writable.error().message);
  }
  return std::nullopt;
}

std::optional<Failure> run(const SynthesizeOptions& o) {
  sim::Bytes cap = 0;
  if (auto failure = check_edge(o, cap)) return failure;
  Question question;
  if (auto failure = resolve(o, cap, question)) return failure;
  sim::SynthesisResult result;
  sim::SynthesisInputs inputs;
  if (auto failure = search(o, question, result, inputs)) return failure;
  std::cout << synthesis_summary(result, inputs);
  if (!o.output.empty()) {
    if (auto saved = sched::save_schedule(result.best.schedule, o.output); !saved) {
      return invalid(saved.error().message);
    }
    std::cout << fmt::format("schedule        {} (`pipeworks simulate --schedule-file {}` reads it back)\n", o.output,
                             o.output);
  }
  if (!o.json.empty()) {
    if (auto written = sched::write_text_file(o.json, sim::synthesis_report_json(result, inputs)); !written) {
      return invalid(written.error().message);
    }
  }
  if (!std::cout.flush()) return invalid("standard output: write failed");
  return std::nullopt;
}

// --placement without --stages: K is its length.
void stages_from_placement(CLI::App& command, SynthesizeOptions& o) {
  if (command.count("--stages") == 0 && !o.placement.empty()) o.stages = static_cast<int>(o.placement.size());
}

void add_options(CLI::App& command, SynthesizeOptions& o) {
  add_spec_options(command, o.specs);
  command.add_option("--stages,-k,-K", o.stages,
                     "Number of pipeline stages K (one per device unless --placement; default with it: its length)")
      ->check(integer_from(1, sched::kMaxStages))->capture_default_str();
  CLI::Option* placement = add_placement_flag(command, o.placement, sched::kMaxStages - 1);
  command.add_option("--search-placement", o.search_placement,
                     "Search the placement of the K stages on D devices too: one per device (K = D), a V (K = 2D), a "
                     "loop (K a multiple of D); the fastest that fits wins")
      ->check(integer_from(1, sched::kMaxStages))->excludes(placement);
  command.add_option("--microbatches,-m,-M", o.microbatches, "Number of micro-batches M")
      ->check(integer_from(1, sched::kMaxScheduleCells))->capture_default_str();
  command.add_option("--memory-cap", o.memory_cap,
                     "Per-device memory cap, e.g. 40GiB (the smaller of it and the device memory applies)")->required();
  command.add_option("--batch", o.batch,
                     fmt::format("Samples per mini-batch, a multiple of M (default: {} per micro-batch)",
                                 kDefaultSamplesPerMicrobatch))
      ->check(integer_from(1, std::numeric_limits<int>::max()));
  command.add_option("--optimizer", o.optimizer, "Optimizer whose state counts towards memory")
      ->check(CLI::IsMember(std::vector<std::string>{"sgd", "momentum", "adam"}))->capture_default_str();
  command.add_option("--time-limit", o.time_limit_s, "Seconds the search may take (its evaluations follow from it)")
      ->check(number_from(0, sim::kMaxTimeLimitS, Ends::kAboveLow))->capture_default_str();
  command.add_option("--seed", o.seed, "Seed of the local search's random moves (same seed, same schedule)")
      ->check(unsigned_64())->capture_default_str();
  command.add_option("--max-evaluations", o.max_evaluations,
                     "Stop the local search after N evaluations (default: what the time limit buys)")
      ->check(integer_from(0, std::numeric_limits<std::int32_t>::max()));
  command.add_flag("--no-recompute", o.no_recompute,
                   "Never re-materialize (by default R is searched where the cap holds fewer than M micro-batches)");
  command.add_option("-o,--output", o.output,
                     "Write the schedule to FILE.csv (torch.distributed.pipelining's layout) or FILE.json");
  command.add_option("--json", o.json, "Write the synthesis report as JSON");
}

}  // namespace

void add_synthesize_command(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<SynthesizeOptions>();
  o->specs.model = "gpt2-medium";
  o->specs.cluster = "dgx-h100";
  CLI::App* command = app.add_subcommand(
      "synthesize", "Search for the schedule with the shortest predicted step that fits a per-device memory cap");
  add_options(*command, *o);
  command->callback([o, command, &context] {
    stages_from_placement(*command, *o);
    if (auto failure = run(*o)) {
      context.exit_code = report_error("synthesize", failure->exit_code, failure->message);
    } else {
      context.exit_code = kExitOk;
    }
  });
}

}  // namespace pipeworks::cli
