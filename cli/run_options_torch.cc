// Reading `pipeworks run`'s options into a RunConfig (see run_options.h).
#include "cli/run_options.h"

#include <chrono>
#include <cstdint>

#include "cli/simulate_schedule.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/model/optimizer_config.h"
#include "hw/run/device_support.h"
#include "hw/run/layer_partition.h"
#include "sched/generators.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::cli {

sched::Status take_schedule_file(RunOptions& options, bool& usage_error) {
  usage_error = false;
  if (options.schedule_file.empty()) return sched::Ok{};
  hw::RunConfig& c = options.config;
  ScheduleRequest request;
  request.file = options.schedule_file;
  request.kind_given = options.schedule_given;
  request.stages = c.num_stages;
  request.stages_given = options.stages_given;
  request.microbatches = c.num_microbatches;
  request.microbatches_given = options.microbatches_given;
  request.placement = c.placement;
  auto schedule = read_schedule_file(request, usage_error);
  if (!schedule) return schedule.error();
  c.num_stages = schedule->num_stages;
  c.num_microbatches = schedule->num_microbatches;
  c.given_schedule = std::move(schedule).value();
  c.schedule_file = options.schedule_file;
  return sched::Ok{};
}

hw::DistributedOptions distributed_options(const RunOptions& options) {
  hw::DistributedOptions distributed;
  distributed.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  distributed.backend = hw::backend_for(options.config.device);
  return distributed;
}

sched::Status resolve_options(RunOptions& options) {
  auto device = hw::parse_device_kind(options.device);
  if (!device) return device.error();
  hw::RunConfig& c = options.config;
  c.device = *device;
  auto pinning = hw::parse_worker_pinning(options.pin_workers);
  if (!pinning) return sched::Error{"--pin-workers: " + pinning.error().message};
  c.pin_workers = *pinning;
  c.recv_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  if (auto model = resolve_model_options(options.model, c.model); !model) return model;
  auto kind = sched::parse_schedule_kind(options.schedule);
  if (!kind) return kind.error();
  auto optimizer = sim::parse_optimizer(options.optimizer);
  if (!optimizer) return optimizer.error();
  c.schedule = *kind;
  c.optimizer.kind = *optimizer;
  c.optimizer.learning_rate = options.learning_rate.value_or(hw::default_learning_rate(*optimizer));
  auto layout = layout_from(options.layout, 1, 1);
  if (!layout) return layout.error();
  c.data_parallel = layout->dp;
  c.tensor_parallel = layout->tp;
  c.zero = layout->zero;
  c.rank_order = layout->order;
  c.batch_size = options.batch.value_or(c.num_microbatches * c.data_parallel * kDefaultSamplesPerMicrobatch);
  if (options.predict.enabled && c.check) {
    return sched::Error{"--check and --predict: run them separately (--predict times the steps, --check runs the "
                        "non-pipelined reference beside each one)"};
  }
  auto partition = sim::parse_partition_choice(options.partition);
  if (!partition) return sched::Error{"--" + partition.error().message};
  c.partition = std::move(partition).value();
  if (c.partition.balanced() && options.predict.model_spec.empty()) {
    return sched::Error{"--partition balanced needs --model-spec FILE"};
  }
  return sched::Ok{};
}

sched::Status resolve_balanced_partition(RunOptions& options) {
  if (!options.config.partition.balanced()) return sched::Ok{};
  auto spec = sim::load_model_spec(options.predict.model_spec);
  if (!spec) return spec.error();
  auto counts = hw::balanced_layer_counts(options.config, *spec);
  if (!counts) return counts.error();
  options.config.partition = *counts;
  return sched::Ok{};
}

}  // namespace pipeworks::cli
