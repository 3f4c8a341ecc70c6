// run_with_prediction (see run_prediction.h): plan, costs, measurement, prediction, in that order.
#include "hw/predict/run_prediction.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/threads.h"
#include "hw/predict/machine_profile.h"
#include "hw/predict/replay_and_measure.h"
#include "hw/predict/stage_memory.h"
#include "hw/run/step_modes.h"
#include "sim/report/sim_report.h"
#include "hw/run/device_choice.h"
#include "hw/run/device_support.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {
namespace {


// A given model spec must describe the model about to run: its layer count (the partition cuts
// both alike) and its parameters (the spec's bytes in its dtype, against the model's count, which
// is within a few percent for the zoo: estimated_parameters). Checked before any step runs.
constexpr double kParameterTolerance = 0.05;

sched::Status check_spec_matches(const RunConfig& c, const sim::ModelSpec& spec) {
  const std::string model = model_display_name(c.model);
  if (spec.num_layers() != num_model_layers(c.model)) {
    return sched::Error{fmt::format("--model-spec describes '{}' with {} layers; the model to run ({}) has {}: give "
                                    "the spec `pipeworks profile` wrote for this model",
                                    spec.name, spec.num_layers(), model, num_model_layers(c.model))};
  }
  const double spec_params =
      static_cast<double>(spec.total_param_bytes()) / sim::dtype_bytes(spec.param_dtype);
  const double params = estimated_parameters(c.model);
  if (std::abs(spec_params - params) > kParameterTolerance * std::max(params, 1.0)) {
    return sched::Error{fmt::format("--model-spec describes '{}' with {:.4g} parameters; the model to run ({}) has "
                                    "{:.4g}: give the spec `pipeworks profile` wrote for this model",
                                    spec.name, spec_params, model, params)};
  }
  return sched::Ok{};
}

sched::Status check_settings(const RunConfig& c, const PredictionSettings& s) {
  if (auto size = sim::microbatch_size(c.batch_size, c.num_microbatches); !size) return size.error();
  if (s.warmup < 0 || s.repetitions < 1 || s.replay_rounds < 1) {
    return sched::Error{"--warmup must be >= 0, --profile-repetitions and --replay-rounds >= 1"};
  }
  if (auto status = check_model_config(c.model); !status) return status;
  return s.model_spec ? check_spec_matches(c, *s.model_spec) : sched::Ok{};
}

sched::Result<PredictionPlan> make_plan(const RunConfig& c) {
  PredictionPlan plan;
  auto schedule = build_schedule(c);
  if (!schedule) return schedule.error();
  plan.schedule = std::move(schedule).value();
  auto partition = sim::fixed_partition(c.partition, num_model_layers(c.model), c.num_stages);
  if (!partition) return partition.error();
  plan.partition = std::move(partition).value();
  const int devices = plan.schedule.num_devices();
  auto domains = memory_domains(c.device, devices);
  if (!domains) return domains.error();
  plan.memory_domains = std::move(domains).value();
  plan.threads_per_worker = resolve_threads_per_worker(c.threads_per_worker, devices);
  return plan;
}

// The model profiled at exactly the run's micro-batch size (the one-point fit is all per-sample
// cost, so it reproduces the measured median there), with the machine measured by the run's
// workers and threads unless a cluster spec is given, and each stage's temporaries.
sched::Result<Profile> profile_for_run(const RunConfig& c, const PredictionSettings& s, const PredictionPlan& plan,
                                       const PredictionObserver& observer) {
  ProfileOptions po;
  po.model = c.model;
  po.device = c.device;
  po.microbatch_sizes = {c.batch_size / c.num_microbatches};
  // Off the CPU with the stage replay, the replay times the stages and the layer times go unused;
  // the bytes need one pass.
  po.repetitions = c.device != DeviceKind::kCpu && s.stage_replay ? 1 : s.repetitions;
  po.threads = plan.threads_per_worker;
  po.workers = plan.schedule.num_devices();
  po.measure_machine = !s.cluster_spec;
  po.measure_stage_temporaries = false;  // this partition's stages are measured below
  auto profile = profile_model(po, observer.on_profile_line);
  if (!profile) return profile.error();
  auto extra = measure_stage_extra_bytes(c.model, plan.partition, c.batch_size / c.num_microbatches,
                                         kStageMemoryRepetitions, c.device);
  if (!extra) return extra.error();
  profile->stage_boundaries = plan.partition.boundaries;
  profile->stage_extra_bytes = std::move(extra).value();
  return profile;
}

sched::Status obtain_costs(const RunConfig& c, const PredictionSettings& s, PredictionReport& report,
                           const PredictionObserver& observer) {
  if (s.model_spec) {
    report.spec = *s.model_spec;
  } else {
    auto profile = profile_for_run(c, s, report.plan, observer);
    if (!profile) return profile.error();
    report.spec = profile->spec;
    report.cluster = profile->cluster;
    report.profile = std::move(profile).value();
    if (observer.on_profile) observer.on_profile(*report.profile);
  }
  if (s.cluster_spec) {
    report.cluster = *s.cluster_spec;
  } else if (!report.profile) {
    auto where = make_compute_devices(c.device);
    if (!where) return where.error();
    auto machine = profile_machine(c.model, c.batch_size / c.num_microbatches, report.plan.schedule.num_devices(),
                                   report.plan.threads_per_worker, s.repetitions, report.notes, **where, {});
    if (!machine) return machine.error();
    report.cluster = cluster_from_machine(*machine);
  }
  return sched::Ok{};
}

// The measured run; with a stage replay its rounds and the run's steps take turns, so both see
// the same machine (replay_and_measure.h).
sched::Status measure(const RunConfig& c, const PredictionSettings& s, PredictionReport& report,
                      const PredictionObserver& observer) {
  const PredictionPlan& plan = report.plan;
  if (s.stage_replay) {
    auto both = replay_and_measure(c, plan.schedule, plan.partition, replay_rounds_for(s.replay_rounds, c.num_microbatches),
                                   s.warmup, observer.on_step);
    if (!both) return both.error();
    report.replay = std::move(both->replay);
    report.run = std::move(both->run);
    if (observer.on_replay) observer.on_replay(*report.replay);
    return sched::Ok{};
  }
  auto run = measure_run(c, plan.schedule, plan.partition, s.warmup, observer.on_step);
  if (!run) return run.error();
  report.run = std::move(run).value();
  return sched::Ok{};
}

void add_device_notes(const RunConfig& c, PredictionReport& report) {
  if (c.device != DeviceKind::kCpu) {
    report.notes.push_back(fmt::format(
        "on {}: layer and activation bytes were profiled on the CPU (the same shapes and dtypes); the calibrated "
        "prediction's stage times and temporaries are measured on the {} itself (without --model-spec the "
        "headline's times are the CPU profile's); dispatch overhead and hand-off are the host's",
        device_kind_name(c.device), device_kind_name(c.device)));
  }
  const std::vector<int>& domains = report.plan.memory_domains;
  if (std::set<int>(domains.begin(), domains.end()).size() != domains.size()) {
    static const std::string kSharedGpu =
        "devices share a GPU: its measured peak is the GPU's, so each such device's predicted peak is the sum of "
        "the predicted peaks of the devices on that GPU (an upper bound)";
    report.notes.push_back(kSharedGpu);
  }
}

}  // namespace

sched::Result<PredictionReport> run_with_prediction(const RunConfig& config, const PredictionSettings& settings,
                                                    const PredictionObserver& observer) {
  if (auto status = check_settings(config, settings); !status) return status.error();
  PredictionReport report;
  report.config = config;
  auto plan = make_plan(config);
  if (!plan) return plan.error();
  report.plan = std::move(plan).value();
  if (observer.on_plan) observer.on_plan(report.plan);
  if (auto status = obtain_costs(config, settings, report, observer); !status) return status.error();
  if (auto status = measure(config, settings, report, observer); !status) return status.error();
  add_device_notes(config, report);
  report.warnings = sim::input_warnings(
      report.spec, config.batch_size / config.num_microbatches,
      config.given_schedule ? std::nullopt : std::optional(config.schedule), config.virtual_stages);
  std::vector<sched::Nanoseconds> measured;  // the warm-up steps are apart already
  for (const MeasuredStep& s : report.run.steps) measured.push_back(s.step_ns);
  if (const auto modes = two_modes(std::move(measured))) {
    report.warnings.push_back(describe(*modes) + ": the machine or the workers' placement changed during the run, "
                                                 "and the median measured step depends on which mode it fell in");
  }
  const Profile* profile = report.profile ? &*report.profile : nullptr;
  auto prediction = predict_run(config, report.plan.schedule, report.plan.partition, report.spec, report.cluster,
                                profile);
  if (!prediction) return prediction.error();
  report.prediction = std::move(prediction).value();
  report.predicted_peak_bytes = shared_peaks(report.prediction.peak_activation_bytes, report.plan.memory_domains);
  if (report.replay) {
    auto calibrated = predict_run(config, report.plan.schedule, report.plan.partition, report.spec, report.cluster,
                                  profile, &*report.replay);
    if (!calibrated) return calibrated.error();
    report.calibrated = std::move(calibrated).value();
    report.calibrated_peak_bytes = shared_peaks(report.calibrated->peak_activation_bytes, report.plan.memory_domains);
  }
  report.median_step = median_step(report.run.steps);
  if (report.median_step < 0) return sched::Error{"run --predict: no measured step"};
  return report;
}

}  // namespace pipeworks::hw
