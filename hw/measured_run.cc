// Warm-up plus measured steps on one schedule, every timeline kept (see measured_run.h).
#include "hw/measured_run.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/compute_devices.h"
#include "hw/executor.h"
#include "hw/model_zoo.h"
#include "hw/run_setup.h"
#include "hw/stage_cell.h"

namespace pipeworks::hw {

sched::Result<MeasuredRun> measure_run(const RunConfig& config, const sched::Schedule& schedule,
                                       const sim::Partition& partition, int warmup,
                                       const std::function<void(const MeasuredStep&, bool warmup)>& on_step) {
  if (config.steps < 1 || warmup < 0) return sched::Error{"steps must be >= 1 and warm-up steps >= 0"};
  if (config.batch_size < 1 || config.num_microbatches < 1 || config.batch_size % config.num_microbatches != 0) {
    return sched::Error{fmt::format("batch size {} must be a positive multiple of the {} micro-batches",
                                    config.batch_size, config.num_microbatches)};
  }
  auto devices = make_compute_devices(config.device);
  if (!devices) return devices.error();
  const ComputeDevices& where = **devices;
  auto model = build_model(config.model);
  if (!model) return model.error();
  auto cells = make_cells(*model, partition, schedule.placement, config.fail_at);
  if (!cells) return cells.error();
  auto executor = make_executor_on(where, schedule, std::move(cells).value(), executor_options(config));
  if (!executor) return executor.error();
  MeasuredRun run;
  run.threads_per_worker = (*executor)->threads_per_worker();
  StepMeter meter(where, schedule.num_devices());
  for (int step = 0; step < warmup + config.steps; ++step) {
    const std::uint64_t seed = config.model.seed + 1000003ULL * static_cast<std::uint64_t>(step + 1);
    const Batch batch = make_batch(config.model, config.batch_size, seed);
    auto microbatches = split_batch(batch, config.num_microbatches);
    if (!microbatches) return microbatches.error();
    const MicroBatches placed = place_batch(where, *microbatches, schedule);
    meter.start();
    auto result = (*executor)->step(placed, seed);
    if (!result) return sched::Error{fmt::format("step {}: {}", step, result.error().message)};
    MeasuredStep measured;
    measured.step = step;
    measured.step_ns = meter.finish(*result);
    measured.makespan_ns = sched::compute_stats(result->timeline).makespan_ns;
    measured.loss = result->loss;
    measured.peak_activation_bytes = result->peak_activation_bytes;
    measured.timeline = std::move(result->timeline);
    const bool is_warmup = step < warmup;
    if (on_step) on_step(measured, is_warmup);
    (is_warmup ? run.warmup : run.steps).push_back(std::move(measured));
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
