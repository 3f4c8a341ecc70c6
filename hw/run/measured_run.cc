// Warm-up plus measured steps on one schedule, every timeline kept (see measured_run.h).
#include "hw/run/measured_run.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/executor.h"
#include "hw/model/model_zoo.h"
#include "hw/model/stage_cell.h"
#include "hw/run/run_setup.h"
#include "hw/run/step_inputs.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {

struct RunStepper::State : ScheduleOnDevices {
  std::unique_ptr<Executor> executor;
  std::unique_ptr<StepMeter> meter;
  int steps = 0;
};

RunStepper::RunStepper(std::unique_ptr<State> state) : state_(std::move(state)) {}
RunStepper::~RunStepper() = default;

sched::Result<std::unique_ptr<RunStepper>> RunStepper::create(const RunConfig& config,
                                                              const sched::Schedule& schedule,
                                                              const sim::Partition& partition) {
  if (auto size = sim::microbatch_size(config.batch_size, config.num_microbatches); !size) return size.error();
  auto base = schedule_on_devices(config, schedule);
  if (!base) return base.error();
  auto state = std::make_unique<State>();
  static_cast<ScheduleOnDevices&>(*state) = std::move(base).value();
  auto model = build_model(config.model);
  if (!model) return model.error();
  auto cells = make_cells(*model, partition, schedule.placement, config.fail_at);
  if (!cells) return cells.error();
  auto executor = make_executor_on(*state->where, schedule, std::move(cells).value(), executor_options(config));
  if (!executor) return executor.error();
  state->executor = std::move(executor).value();
  state->meter = std::make_unique<StepMeter>(*state->where, schedule.num_devices());
  return std::unique_ptr<RunStepper>(new RunStepper(std::move(state)));
}

int RunStepper::threads_per_worker() const { return state_->executor->threads_per_worker(); }
const std::vector<std::vector<int>>& RunStepper::worker_cpus() const { return state_->executor->worker_cpus(); }

const std::vector<StageCell>& RunStepper::cells() const { return state_->executor->cells(); }

sched::Result<MeasuredStep> RunStepper::step() {
  State& st = *state_;
  const int step = st.steps++;
  auto in = step_inputs(st.config, *st.where, st.schedule, step);
  if (!in) return in.error();
  st.meter->start();
  auto result = st.executor->step(in->placed, in->seed);
  if (!result) return sched::Error{fmt::format("step {}: {}", step, result.error().message)};
  MeasuredStep measured;
  measured.step = step;
  measured.step_ns = st.meter->finish(*result);
  measured.makespan_ns = sched::compute_stats(result->timeline).makespan_ns;
  measured.loss = result->loss;
  measured.peak_activation_bytes = result->peak_activation_bytes;
  measured.timeline = std::move(result->timeline);
  return measured;
}

sched::Result<MeasuredRun> measure_run(const RunConfig& config, const sched::Schedule& schedule,
                                       const sim::Partition& partition, int warmup, const OnMeasuredStep& on_step) {
  if (config.steps < 1 || warmup < 0) return sched::Error{"steps must be >= 1 and warm-up steps >= 0"};
  auto stepper = RunStepper::create(config, schedule, partition);
  if (!stepper) return stepper.error();
  MeasuredRun run;
  run.threads_per_worker = (*stepper)->threads_per_worker();
  run.worker_cpus = (*stepper)->worker_cpus();
  for (int step = 0; step < warmup + config.steps; ++step) {
    auto measured = (*stepper)->step();
    if (!measured) return measured.error();
    const bool is_warmup = step < warmup;
    if (on_step) on_step(*measured, is_warmup);
    (is_warmup ? run.warmup : run.steps).push_back(std::move(measured).value());
  }
  return run;
}

int median_step(const std::vector<MeasuredStep>& steps) {
  if (steps.empty()) return -1;
  std::vector<int> order(steps.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return steps[static_cast<std::size_t>(a)].makespan_ns < steps[static_cast<std::size_t>(b)].makespan_ns;
  });
  return order[(order.size() - 1) / 2];
}

}  // namespace pipeworks::hw
