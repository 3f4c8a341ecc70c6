// `pipeworks run --predict` (see run_predict.h): its options, hw::run_with_prediction's progress
// printed as it happens, and the predicted-vs-measured table, trace, chart and JSON.
#include "cli/run_predict.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/arg_checks.h"
#include "cli/commands.h"
#include "cli/planning_args.h"
#include "cli/predict_progress.h"
#include "cli/prediction_pictures.h"
#include "cli/profile_report.h"
#include "cli/replay_report.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/predict/prediction_report_json.h"
#include "hw/predict/run_prediction.h"
#include "hw/run/run_limits.h"
#include "sched/text_file.h"
#include "sched/units_text.h"
#include "sim/spec/units.h"
#include "viz/comparison.h"
#include "viz/comparison_table.h"

namespace pipeworks::cli {

void add_predict_options(CLI::App* cmd, PredictOptions& o) {
  cmd->add_flag("--predict", o.enabled,
                "simulate the same schedule beside the run and print predicted vs measured (profiles the model "
                "unless --model-spec is given)");
  cmd->add_option("--model-spec", o.model_spec,
                  "model spec (pipeworks profile): what --predict simulates with instead of profiling, and what "
                  "--partition balanced cuts by");
  cmd->add_option("--cluster-spec", o.cluster_spec, "--predict: cluster spec instead of measuring this machine");
  cmd->add_option("--warmup", o.warmup, "--predict: steps run before the --steps measured ones")
      ->check(integer_from(0, hw::kMaxSteps))
      ->capture_default_str();
  cmd->add_option("--profile-repetitions", o.repetitions, "--predict: timed repetitions per profiled layer")
      ->check(integer_from(1, hw::kMaxRepetitions))
      ->capture_default_str();
  cmd->add_flag("!--no-stage-replay", o.stage_replay,
                "--predict: skip the stage replay (each device's program replayed in schedule order), which gives "
                "the calibrated prediction beside the headline one from the specs");
  cmd->add_option("--replay-rounds", o.replay_rounds,
                  "--predict: measured rounds of the stage replay (at least; more when M is small, so every "
                  "stage's F and B get 16 samples)")
      ->check(integer_from(1, hw::kMaxRepetitions))
      ->capture_default_str();
}

sched::Status check_predict_flags(const CLI::App& cmd, const PredictOptions& options, bool distributed) {
  for (const char* name : {"--cluster-spec", "--warmup", "--profile-repetitions", "--no-stage-replay", "--replay-rounds"}) {
    if (!options.enabled && cmd.count(name) > 0) {
      return sched::Error{fmt::format("{} applies to --predict only: add --predict or drop {}", name, name)};
    }
  }
  for (const char* name : {"--no-stage-replay", "--replay-rounds"}) {
    if (distributed && cmd.count(name) > 0) {
      return sched::Error{fmt::format("--distributed --predict has no stage replay: drop {}", name)};
    }
  }
  return sched::Ok{};
}

namespace {

int fail(const std::string& message) {
  std::cerr << "pipeworks run: error: " << message << "\n";
  return kExitInvalid;
}

// The specs named on the command line, loaded; the rest of the settings as given.
sched::Result<hw::PredictionSettings> settings_from(const PredictOptions& p) {
  hw::PredictionSettings s;
  if (!p.model_spec.empty()) {
    auto spec = sim::load_model_spec(p.model_spec);
    if (!spec) return spec.error();
    s.model_spec = std::move(spec).value();
  }
  if (!p.cluster_spec.empty()) {
    auto cluster = sim::load_cluster_spec(p.cluster_spec);
    if (!cluster) return cluster.error();
    s.cluster_spec = std::move(cluster).value();
  }
  s.warmup = p.warmup;
  s.repetitions = p.repetitions;
  s.stage_replay = p.stage_replay;
  s.replay_rounds = p.replay_rounds;
  return s;
}

viz::MeasuredSpreads spreads_of(const hw::MeasuredRun& run) {
  viz::MeasuredSpreads spreads;
  spreads.steps = static_cast<int>(run.steps.size());
  std::vector<std::int64_t> makespans, peaks;
  for (const hw::MeasuredStep& s : run.steps) {
    makespans.push_back(s.makespan_ns);
    peaks.push_back(*std::max_element(s.peak_activation_bytes.begin(), s.peak_activation_bytes.end()));
  }
  spreads.step_ns = *viz::spread_of(makespans);
  spreads.peak_bytes = *viz::spread_of(peaks);
  return spreads;
}

void print_cost_model(const hw::PredictionReport& r) {
  const sim::CostModel& cm = r.prediction.costs;
  fmt::print("\npredicted from the model spec{} and the cluster spec{} (the headline)",
             r.profile ? " (profiled now at this run's micro-batch size)" : "", r.profile ? "" : " given");
  fmt::print("\ncost model: dispatch {} per compute action, hand-off {}, device speed {:.3f}, contention slow-down "
             "where workers overlap {:.3f}x per device, {} comm\nstep time = pipeline makespan (first action start "
             "to last action end); measured = median step (step {})\n\n",
             sim::format_duration(cm.per_action_overhead_ns),
             cm.links.empty() ? std::string("none") : sim::format_duration(cm.links.front().latency_ns),
             r.device_speed(), fmt::join(r.prediction.device_slowdown, "x, "), sim::comm_mode_name(cm.comm_mode),
             r.median().step);
}

// The replay-calibrated prediction against the same measured step, when the stage replay ran.
sched::Result<std::optional<viz::Comparison>> calibrated_comparison(const hw::PredictionReport& r) {
  if (!r.calibrated) return std::optional<viz::Comparison>{};
  viz::ComparisonOptions compare;
  compare.predicted_peak_bytes = r.calibrated_peak_bytes;
  compare.measured_peak_bytes = r.median().peak_activation_bytes;
  auto comparison = viz::compare_timelines(r.calibrated->result.timeline, r.median().timeline, compare);
  if (!comparison) return comparison.error();
  return std::optional<viz::Comparison>(std::move(comparison).value());
}

void print_calibrated(const viz::Comparison& headline, const viz::Comparison& calibrated) {
  const auto pct = [](double e) { return viz::format_relative(e); };
  fmt::print("\ncalibrated by the stage replay (this schedule's stage times and contention measured):\n"
             "  step time {} (error {}): the composition's error; the headline's {} less it is the cost model's\n",
             sim::format_duration(calibrated.predicted_step_ns), pct(calibrated.step_error()),
             pct(headline.step_error()));
  for (const viz::DeviceComparison& d : calibrated.devices) {
    fmt::print("  device {} peak act. {} (error {})\n", d.device, sched::format_bytes(d.predicted_peak_bytes),
               pct(viz::relative_error(static_cast<double>(d.predicted_peak_bytes),
                                       static_cast<double>(d.measured_peak_bytes))));
  }
}

sched::Status write_outputs(const hw::PredictionReport& r, const viz::Comparison& comparison,
                            const std::optional<viz::Comparison>& calibrated, const viz::MeasuredSpreads& spreads,
                            const RunOutputs& outputs) {
  const sched::Timeline& predicted = r.prediction.result.timeline;
  const sched::Timeline& measured = r.median().timeline;
  if (auto s = write_prediction_pictures(outputs, predicted, measured, r.config, r.plan.partition); !s) return s;
  if (outputs.json.empty()) return sched::Ok{};
  nlohmann::json j = viz::comparison_json(comparison, spreads);
  j.update(hw::prediction_report_json(r));
  j["calibrated"] = calibrated ? viz::comparison_json(*calibrated, spreads) : nlohmann::json(nullptr);
  j["predicted"] = viz::timeline_records(predicted);
  j["measured"] = viz::timeline_records(measured);
  return sched::write_text_file(outputs.json, j.dump(2) + "\n");
}

}  // namespace

int run_with_prediction(const hw::RunConfig& config, const PredictOptions& options, const RunOutputs& outputs) {
  auto settings = settings_from(options);
  if (!settings) return fail(settings.error().message);
  auto report = hw::run_with_prediction(config, *settings, printing_observer(config, settings->warmup));
  if (!report) return fail(report.error().message);
  const hw::PredictionReport& r = *report;
  fmt::print("workers: {}\n", hw::describe_worker_cpus(r.run.worker_cpus));
  for (const std::string& note : r.notes) fmt::print("note: {}\n", note);
  for (const std::string& warning : r.warnings) fmt::print("warning: {}\n", warning);
  const viz::MeasuredSpreads spreads = spreads_of(r.run);
  viz::ComparisonOptions compare;
  compare.predicted_peak_bytes = r.predicted_peak_bytes;
  compare.measured_peak_bytes = r.median().peak_activation_bytes;
  auto comparison = viz::compare_timelines(r.prediction.result.timeline, r.median().timeline, compare);
  if (!comparison) return fail(comparison.error().message);
  auto calibrated = calibrated_comparison(r);
  if (!calibrated) return fail(calibrated.error().message);
  print_cost_model(r);
  fmt::print("{}", viz::comparison_table(*comparison, spreads));
  if (*calibrated) print_calibrated(*comparison, **calibrated);
  if (auto s = write_outputs(r, *comparison, *calibrated, spreads, outputs); !s) return fail(s.error().message);
  return comparison->same_actions() ? kExitOk : fail("the predicted and measured action sets differ");
}

}  // namespace pipeworks::cli
