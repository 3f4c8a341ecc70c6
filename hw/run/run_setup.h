// What a training run does before its first step, whichever device it runs on and whether it
// runs in one process (run.cc) or as one rank of several (hw/dist/distributed_run.cc): check the
// sizes, build the model and the lowered schedule, parse the partition, describe the model in the
// simulator's shape, build the non-pipelined reference (with --check) and cut the model into
// stage cells.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hw/exec/compute_devices.h"
#include "hw/exec/executor.h"
#include "hw/model/model_zoo.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/run/run.h"

namespace pipeworks::hw {

struct RunSetup {
  RunReport report;  // schedule (lowered), partition and spec filled in; no steps yet
  std::vector<StageCell> cells;       // on the CPU, in the schedule's placement
  std::optional<Reference> reference;  // when config.check
};

// A config, the lowered schedule it runs and the devices it runs on: what the run's and the
// replay's steppers keep beside their executors.
struct ScheduleOnDevices {
  RunConfig config;
  sched::Schedule schedule;
  std::unique_ptr<ComputeDevices> where;
};
// An error for a device this build cannot drive (make_compute_devices).
sched::Result<ScheduleOnDevices> schedule_on_devices(const RunConfig& config, const sched::Schedule& schedule);

// A run's own check of the lowered schedule, made before the partition and the cells are built
// (a multi-process run: one process per device).
using ScheduleCheck = std::function<sched::Status(const sched::Schedule&)>;

// A run's own form of the model its cells are cut from (a tensor-parallel rank: its shard of the
// split layers, hw/model/tensor_parallel_model.h); the reference keeps the model as built.
using ModelTransform = std::function<sched::Result<Model>(const Model&)>;

// Errors name the bad setting (steps, batch size, model, schedule or partition), or are
// `check_schedule`'s or `cells_from`'s.
sched::Result<RunSetup> set_up_run(const RunConfig& config, const ScheduleCheck& check_schedule = {},
                                   const ModelTransform& cells_from = {});

// The executor options a config asks for: optimizer, check_finite, recv_timeout, threads,
// pinning. A multi-process run adds its device (only_device) and its timeout.
ExecutorOptions executor_options(const RunConfig& config);

}  // namespace pipeworks::hw
