// A whole training run (see run.h): model -> cells -> schedule -> executor, plus the check, on the
// CPU or on GPUs (compute_devices.h).
#include "hw/run/run.h"

#include <algorithm>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/executor.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/run/device_choice.h"
#include "hw/run/reference_check.h"
#include "hw/run/run_setup.h"
#include "hw/run/step_inputs.h"
#include "sched/passes.h"
#include "sim/plan/data_parallel.h"

namespace pipeworks::hw {
namespace {

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : parameters) out.push_back(p.grad());
  return out;
}

}  // namespace

std::string schedule_name(const RunConfig& config) {
  return config.given_schedule ? config.schedule_file : std::string(sched::schedule_kind_name(config.schedule));
}

sched::Result<sched::Schedule> build_schedule(const RunConfig& config) {
  sched::Result<sched::Schedule> schedule = sched::Error{""};
  if (config.given_schedule) {
    schedule = *config.given_schedule;
  } else {
    schedule = sched::generate(config.schedule, {config.num_stages, config.num_microbatches, config.placement},
                               config.virtual_stages);
  }
  if (!schedule) return schedule.error();
  if (config.recompute && !schedule->has_recompute()) {
    schedule = sched::add_recompute(*schedule);
    if (!schedule) return schedule.error();
  }
  if (config.data_parallel > 1 && !schedule->has_stage_level()) {
    if (schedule->has_comm()) {
      return sched::Error{"a schedule file with SEND/RECV but no REDUCE_GRAD cannot be replicated: give it compute "
                          "actions only, or its REDUCE_GRAD actions"};
    }
    schedule = sim::add_data_parallel_actions(*schedule, run_layout(config, *schedule));
    if (!schedule) return schedule.error();
  }
  if (schedule->has_comm()) return schedule;  // a file's SEND/RECV, as written
  return sched::lower_comm(*schedule);
}

sim::ParallelLayout run_layout(const RunConfig& config, const sched::Schedule& schedule) {
  sim::ParallelLayout layout = sim::with_pipeline({}, schedule.num_devices(), schedule.num_stages);
  layout.dp = config.data_parallel;
  layout.tp = config.tensor_parallel;
  layout.zero = config.zero;
  layout.order = config.rank_order;
  return layout;
}

sched::Status check_one_process(const RunConfig& config) {
  if (config.tensor_parallel > 1) {
    return sched::Error{fmt::format("--tp {}: tensor-parallel ranks run one process per rank; start them with "
                                    "`pipeworks launch -n <tp x pp x dp> -- pipeworks run --distributed ...`",
                                    config.tensor_parallel)};
  }
  if (config.data_parallel == 1) return sched::Ok{};
  return sched::Error{fmt::format("--dp {}: data-parallel replicas run one process per rank; start them with "
                                  "`pipeworks launch -n <replicas x devices> -- pipeworks run --distributed ...`",
                                  config.data_parallel)};
}

sched::Result<RunReport> run_training(const RunConfig& config, const std::function<void(const StepStats&)>& on_step) {
  if (auto one = check_one_process(config); !one) return one.error();
  auto devices = make_compute_devices(config.device);
  if (!devices) return devices.error();
  const ComputeDevices& where = **devices;
  auto setup = set_up_run(config);
  if (!setup) return setup.error();
  RunReport& report = setup->report;
  std::optional<Reference>& reference = setup->reference;  // on the CPU
  auto executor = make_executor_on(where, report.schedule, std::move(setup->cells), executor_options(config));
  if (!executor) return executor.error();
  Executor& ex = **executor;
  report.threads_per_worker = ex.threads_per_worker();
  report.worker_cpus = ex.worker_cpus();
  if (reference) {
    report.check = GradientCheck{};
    set_worker_threads(ex.threads_per_worker());  // the reference runs here, as one worker would
    where.use_exact_arithmetic();                 // compared at rtol/atol with the CPU's arithmetic
  }
  StepMeter meter(where, report.schedule.num_devices());

  for (int step = 0; step < config.steps; ++step) {
    auto in = step_inputs(config, where, report.schedule, step);
    if (!in) return in.error();
    meter.start();
    auto result = ex.step(in->placed, in->seed);
    if (!result) return sched::Error{fmt::format("step {}: {}", step, result.error().message)};
    StepStats stats;
    stats.step = step;
    stats.step_ns = meter.finish(*result);
    stats.samples_per_s = stats.step_ns > 0 ? config.batch_size * 1e9 / static_cast<double>(stats.step_ns) : 0;
    stats.bubble_fraction = sched::compute_stats(result->timeline).bubble_fraction;
    stats.loss = result->loss;
    stats.peak_activation_bytes = result->peak_activation_bytes;
    if (reference) {
      auto loss = reference->step(in->microbatches, in->seed, ReferenceMode::kMicrobatches);
      if (!loss) return loss.error();
      check_tensors(*report.check, gradients_of(cell_parameters(ex.cells())), reference->gradients());
    }
    report.steps.push_back(stats);
    report.last_timeline = std::move(result->timeline);
    if (on_step) on_step(stats);
  }
  if (reference) {
    check_tensors(*report.check, cell_parameters(ex.cells()), reference->parameters());
  }
  return std::move(report);
}

}  // namespace pipeworks::hw
