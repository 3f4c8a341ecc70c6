// The shared start of a training run (see run_setup.h).
#include "hw/run/run_setup.h"

#include <fmt/format.h>

#include "hw/run/describe_model.h"
#include "hw/run/device_choice.h"
#include "hw/run/layer_partition.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {

sched::Result<RunSetup> set_up_run(const RunConfig& config, const ScheduleCheck& check_schedule,
                                   const ModelTransform& cells_from) {
  if (config.steps < 1) return sched::Error{"steps must be >= 1"};
  if (auto size = sim::microbatch_size(config.batch_size, config.num_microbatches); !size) return size.error();
  auto model = build_model(config.model);
  if (!model) return model.error();
  RunSetup setup;
  auto schedule = build_schedule(config);
  if (!schedule) return schedule.error();
  setup.report.schedule = std::move(schedule).value();
  if (check_schedule) {
    if (auto s = check_schedule(setup.report.schedule); !s) return s.error();
  }
  auto partition = sim::fixed_partition(config.partition, static_cast<int>(model->layers.size()), config.num_stages);
  if (!partition) return partition.error();
  setup.report.partition = std::move(partition).value();
  auto spec = describe_model(*model);
  if (!spec) return spec.error();
  setup.report.spec = std::move(spec).value();
  if (config.check) setup.reference.emplace(*model, config.optimizer);
  if (cells_from) {
    auto transformed = cells_from(*model);
    if (!transformed) return transformed.error();
    model = std::move(transformed).value();
  }
  auto cells = make_cells(*model, setup.report.partition, setup.report.schedule.placement, config.fail_at);
  if (!cells) return cells.error();
  setup.cells = std::move(cells).value();
  return setup;
}

sched::Result<ScheduleOnDevices> schedule_on_devices(const RunConfig& config, const sched::Schedule& schedule) {
  auto where = make_compute_devices(config.device);
  if (!where) return where.error();
  return ScheduleOnDevices{config, schedule, std::move(where).value()};
}

ExecutorOptions executor_options(const RunConfig& config) {
  ExecutorOptions options;
  options.optimizer = config.optimizer;
  options.check_finite = config.check_finite;
  options.recv_timeout = config.recv_timeout;
  options.threads_per_worker = config.threads_per_worker;
  options.pin_workers = config.pin_workers;
  return options;
}

}  // namespace pipeworks::hw
