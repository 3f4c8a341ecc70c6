// `pipeworks run --predict` (see run_predict.h): the wiring of profile -> cost model -> simulate
// beside the measured run, and the predicted-vs-measured table, trace, chart and JSON.
#include "cli/run_predict.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/profile_report.h"
#include "cli/replay_report.h"
#include "hw/device_support.h"
#include "hw/layer_partition.h"
#include "hw/measured_run.h"
#include "hw/prediction.h"
#include "hw/replay_and_measure.h"
#include "hw/stage_memory.h"
#include "hw/threads.h"
#include "sim/units.h"
#include "viz/chrome_trace.h"
#include "viz/comparison.h"
#include "viz/comparison_table.h"
#include "viz/svg_gantt.h"

namespace pipeworks::cli {

void add_predict_options(CLI::App* cmd, PredictOptions& o) {
  cmd->add_flag("--predict", o.enabled,
                "simulate the same schedule beside the run and print predicted vs measured (profiles the model "
                "unless --model-spec is given)");
  cmd->add_option("--model-spec", o.model_spec,
                  "model spec (pipeworks profile): what --predict simulates with instead of profiling, and what "
                  "--partition balanced cuts by");
  cmd->add_option("--cluster-spec", o.cluster_spec, "--predict: cluster spec instead of measuring this machine");
  cmd->add_option("--warmup", o.warmup, "--predict: steps run before the --steps measured ones")->capture_default_str();
  cmd->add_option("--profile-repetitions", o.repetitions, "--predict: timed repetitions per profiled layer")
      ->capture_default_str();
  cmd->add_flag("!--no-stage-replay", o.stage_replay,
                "--predict: stage costs from the layer profile alone, without replaying each device's program in "
                "schedule order");
  cmd->add_option("--replay-rounds", o.replay_rounds,
                  "--predict: measured rounds of the stage replay (at least; more when M is small, so every "
                  "stage's F and B get 16 samples)")
      ->capture_default_str();
}

namespace {

struct Costs {
  sim::ModelSpec spec;
  sim::ClusterSpec cluster;
  std::optional<hw::Profile> profile;
  std::vector<std::string> notes;
};

// Profiles at exactly the run's micro-batch size (the one-point fit is all per-sample cost, so it
// reproduces the measured median there); the machine is measured with the run's workers and
// threads.
sched::Result<Costs> obtain_costs(const hw::RunConfig& c, const PredictOptions& p, int devices, int threads) {
  Costs costs;
  const int size = c.batch_size / c.num_microbatches;
  if (p.model_spec.empty()) {
    hw::ProfileOptions po;
    po.model = c.model;
    po.microbatch_sizes = {size};
    // On GPUs the layer times go unused (the stage replay times the stages there) and the bytes
    // need one pass: time each layer once.
    po.repetitions = c.device == "cpu" ? p.repetitions : 1;
    po.threads = threads;
    po.workers = devices;
    po.measure_machine = p.cluster_spec.empty();
    auto profile = hw::profile_model(po, [](const std::string& line) {
      fmt::print("  profile: {}\n", line);
      std::fflush(stdout);
    });
    if (!profile) return profile.error();
    costs.spec = profile->spec;
    costs.cluster = profile->cluster;
    costs.profile = std::move(profile).value();
  } else {
    auto spec = sim::load_model_spec(p.model_spec);
    if (!spec) return spec.error();
    costs.spec = std::move(spec).value();
  }
  if (!p.cluster_spec.empty()) {
    auto cluster = sim::load_cluster_spec(p.cluster_spec);
    if (!cluster) return cluster.error();
    costs.cluster = std::move(cluster).value();
  } else if (!costs.profile) {
    auto machine = hw::profile_machine(c.model, size, devices, threads, p.repetitions, costs.notes);
    if (!machine) return machine.error();
    costs.cluster = hw::cluster_from_machine(*machine);
  }
  return costs;
}

nlohmann::json steps_json(const hw::MeasuredRun& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto* list : {&run.warmup, &run.steps}) {
    for (const hw::MeasuredStep& s : *list) {
      steps.push_back({{"step", s.step},
                       {"warmup", list == &run.warmup},
                       {"step_ns", s.step_ns},
                       {"makespan_ns", s.makespan_ns},
                       {"loss", s.loss},
                       {"peak_activation_bytes", s.peak_activation_bytes}});
    }
  }
  return steps;
}

sched::Status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) return sched::Error{"cannot write " + path};
  return sched::Ok{};
}

int fail(const std::string& message) {
  std::cerr << "pipeworks run: error: " << message << "\n";
  return kExitInvalid;
}

}  // namespace

int run_with_prediction(const hw::RunConfig& c, const PredictOptions& p, const RunOutputs& outputs,
                        const std::string& model_name, const std::string& schedule_name) {
  if (c.num_microbatches < 1 || c.batch_size < 1 || c.batch_size % c.num_microbatches != 0) {
    return fail(fmt::format("batch size {} must be a positive multiple of the {} micro-batches", c.batch_size,
                            c.num_microbatches));
  }
  if (p.warmup < 0 || p.repetitions < 1 || p.replay_rounds < 1) {
    return fail("--warmup must be >= 0, --profile-repetitions and --replay-rounds >= 1");
  }
  if (auto status = hw::check_model_config(c.model); !status) return fail(status.error().message);
  auto schedule = hw::build_schedule(c);
  if (!schedule) return fail(schedule.error().message);
  auto partition = hw::parse_partition(c.partition, hw::num_model_layers(c.model), c.num_stages);
  if (!partition) return fail(partition.error().message);
  const int devices = schedule->num_devices();
  auto domains = hw::memory_domains(c.device, devices);
  if (!domains) return fail(domains.error().message);
  if (c.device != "cpu" && p.model_spec.empty() && !p.stage_replay) {
    return fail("--no-stage-replay: the layer profiler times layers on the CPU; on " + c.device +
                " the stage costs come from the stage replay (or give --model-spec)");
  }
  const int threads = hw::resolve_threads_per_worker(c.threads_per_worker, devices);
  fmt::print("pipeworks run --predict: {} on {}, {} stages x {} micro-batches (batch {}), {}{}, partition {}, {} "
             "thread(s) per worker\n",
             model_name, c.device, c.num_stages, c.num_microbatches, c.batch_size, schedule_name,
             c.recompute ? " + recompute" : "", sim::to_string(*partition), threads);
  std::fflush(stdout);

  auto costs = obtain_costs(c, p, devices, threads);
  if (!costs) return fail(costs.error().message);
  if (costs->profile) {
    // Forward and backward temporaries of each stage as a whole, at the run's micro-batch size and
    // partition.
    auto extra = hw::measure_stage_extra_bytes(c.model, *partition, c.batch_size / c.num_microbatches, 3, c.device);
    if (!extra) return fail(extra.error().message);
    costs->profile->stage_boundaries = partition->boundaries;
    costs->profile->stage_extra_bytes = std::move(extra).value();
    fmt::print("{}", profile_summary(*costs->profile));
  }
  // The measured run's steps; with a stage replay, its rounds and these steps take turns, so both
  // see the same machine (replay_and_measure.h).
  fmt::print("{:>4}  {:>12}  {:>12}  {}\n", "step", "makespan", "step time", "peak activation bytes per device");
  const auto print_step = [](const hw::MeasuredStep& s, bool warmup) {
    std::vector<std::string> peaks;
    for (sched::Bytes b : s.peak_activation_bytes) peaks.push_back(viz::format_bytes_binary(b));
    fmt::print("{:>4}  {:>12}  {:>12}  {}{}\n", s.step, sim::format_duration(s.makespan_ns),
               sim::format_duration(s.step_ns), fmt::join(peaks, ", "), warmup ? "  (warm-up)" : "");
    std::fflush(stdout);
  };
  std::optional<hw::ScheduleReplay> replay;
  std::optional<hw::MeasuredRun> run;
  if (costs->profile && p.stage_replay) {
    auto both = hw::replay_and_measure(c, *schedule, *partition,
                                       hw::replay_rounds_for(p.replay_rounds, c.num_microbatches), p.warmup,
                                       print_step);
    if (!both) return fail(both.error().message);
    replay = std::move(both->replay);
    run = std::move(both->run);
    fmt::print("{}", replay_summary(*replay));
  } else {
    auto measured = hw::measure_run(c, *schedule, *partition, p.warmup, print_step);
    if (!measured) return fail(measured.error().message);
    run = std::move(measured).value();
  }
  fmt::print("workers: {}\n", hw::describe_worker_cpus(run->worker_cpus));
  if (c.device != "cpu") {
    costs->notes.push_back(fmt::format(
        "on {}: layer and activation bytes were profiled on the CPU (the same shapes and dtypes); stage times "
        "and temporaries are measured on the {} itself; dispatch overhead and hand-off are the host's",
        c.device, c.device));
  }
  if (std::set<int>(domains->begin(), domains->end()).size() != domains->size()) {
    costs->notes.push_back(
        "devices share a GPU: its measured peak is the GPU's, so each such device's predicted peak is the sum of "
        "the predicted peaks of the devices on that GPU (an upper bound)");
  }
  for (const std::string& note : costs->notes) fmt::print("note: {}\n", note);
  const hw::Profile* profile = costs->profile ? &*costs->profile : nullptr;
  auto prediction = hw::predict_run(c, *schedule, *partition, costs->spec, costs->cluster, profile,
                                    replay ? &*replay : nullptr);
  if (!prediction) return fail(prediction.error().message);
  const hw::MeasuredStep& median = run->steps[static_cast<std::size_t>(hw::median_step(run->steps))];

  viz::MeasuredSpreads spreads;
  spreads.steps = static_cast<int>(run->steps.size());
  std::vector<std::int64_t> makespans, peaks;
  for (const hw::MeasuredStep& s : run->steps) {
    makespans.push_back(s.makespan_ns);
    peaks.push_back(*std::max_element(s.peak_activation_bytes.begin(), s.peak_activation_bytes.end()));
  }
  spreads.step_ns = *viz::spread_of(makespans);
  spreads.peak_bytes = *viz::spread_of(peaks);
  viz::ComparisonOptions options;
  options.predicted_peak_bytes = hw::shared_peaks(prediction->peak_activation_bytes, *domains);
  options.measured_peak_bytes = median.peak_activation_bytes;
  const sched::Timeline& predicted = prediction->result.timeline;
  const sched::Timeline& measured = median.timeline;
  auto comparison = viz::compare_timelines(predicted, measured, options);
  if (!comparison) return fail(comparison.error().message);
  const sim::CostModel& cm = prediction->costs;
  fmt::print("\ncost model: dispatch {} per compute action, hand-off {}, device speed {:.3f}, contention slow-down "
             "where workers overlap {:.3f}x per device, {} comm\nstep time = pipeline makespan (first action start "
             "to last action end); measured = median step (step {})\n\n",
             sim::format_duration(cm.per_action_overhead_ns),
             cm.links.empty() ? std::string("none") : sim::format_duration(cm.links.front().latency_ns),
             replay ? 1.0 : costs->cluster.devices.front().relative_speed,
             fmt::join(prediction->device_slowdown, "x, "),
             sim::comm_mode_name(cm.comm_mode), median.step);
  fmt::print("{}", viz::comparison_table(*comparison, spreads));

  const std::vector<const sched::Timeline*> both{&predicted, &measured};
  if (!outputs.trace.empty()) {
    if (auto s = viz::write_chrome_trace(outputs.trace, both); !s) return fail(s.error().message);
  }
  if (!outputs.svg.empty()) {
    if (auto s = viz::write_svg(outputs.svg, both); !s) return fail(s.error().message);
  }
  if (!outputs.json.empty()) {
    nlohmann::json j = viz::comparison_json(*comparison, spreads);
    j["schema"] = "pipeworks.predict_report/1";  // layout: docs/accuracy.md
    j["model"] = model_name;
    j["device"] = c.device;
    j["schedule"] = schedule_name;
    j["stages"] = c.num_stages;
    j["microbatches"] = c.num_microbatches;
    j["batch"] = c.batch_size;
    j["recompute"] = c.recompute;
    j["partition"] = partition->boundaries;
    j["threads_per_worker"] = run->threads_per_worker;
    j["worker_cpus"] = run->worker_cpus;
    j["cost_model"] = {{"per_action_overhead_ns", cm.per_action_overhead_ns},
                       {"handoff_latency_ns", cm.links.empty() ? 0 : cm.links.front().latency_ns},
                       {"relative_speed", replay ? 1.0 : costs->cluster.devices.front().relative_speed},
                       {"device_slowdown", prediction->device_slowdown},
                       {"comm_mode", sim::comm_mode_name(cm.comm_mode)},
                       {"profiled", profile != nullptr},
                       {"stage_replay", replay ? replay_json(*replay) : nlohmann::json(nullptr)}};
    j["median_step"] = median.step;
    j["steps"] = steps_json(*run);
    j["predicted"] = viz::timeline_records(predicted);
    j["measured"] = viz::timeline_records(measured);
    if (auto s = write_text(outputs.json, j.dump(2) + "\n"); !s) return fail(s.error().message);
  }
  return comparison->same_actions() ? kExitOk : fail("the predicted and measured action sets differ");
}

}  // namespace pipeworks::cli
