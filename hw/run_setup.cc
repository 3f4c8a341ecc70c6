// The shared start of an in-process run (see run_setup.h).
#include "hw/run_setup.h"

#include <fmt/format.h>

#include "hw/layer_partition.h"

namespace pipeworks::hw {

sched::Result<RunSetup> set_up_run(const RunConfig& config) {
  if (config.steps < 1) return sched::Error{"steps must be >= 1"};
  if (config.batch_size < 1 || config.num_microbatches < 1 || config.batch_size % config.num_microbatches != 0) {
    return sched::Error{fmt::format("batch size {} must be a positive multiple of the {} micro-batches",
                                    config.batch_size, config.num_microbatches)};
  }
  auto model = build_model(config.model);
  if (!model) return model.error();
  RunSetup setup;
  auto schedule = build_schedule(config);
  if (!schedule) return schedule.error();
  setup.report.schedule = std::move(schedule).value();
  auto partition = parse_partition(config.partition, static_cast<int>(model->layers.size()), config.num_stages);
  if (!partition) return partition.error();
  setup.report.partition = std::move(partition).value();
  auto spec = describe_model(*model);
  if (!spec) return spec.error();
  setup.report.spec = std::move(spec).value();
  if (config.check) setup.reference.emplace(*model, config.optimizer);
  auto cells = make_cells(*model, setup.report.partition, setup.report.schedule.placement, config.fail_at);
  if (!cells) return cells.error();
  setup.cells = std::move(cells).value();
  return setup;
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
