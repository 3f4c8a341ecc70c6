// What an in-process training run does before its first step, whichever device it runs on
// (run.cc, on the CPU or on GPUs): check the sizes, build the model and the
// lowered schedule, parse the partition, describe the model in the simulator's shape, build the
// non-pipelined reference (with --check) and cut the model into stage cells.
#pragma once

#include <optional>
#include <vector>

#include "hw/executor.h"
#include "hw/model_zoo.h"
#include "hw/reference.h"
#include "hw/run.h"
#include "hw/stage_cell.h"

namespace pipeworks::hw {

struct RunSetup {
  RunReport report;  // schedule (lowered), partition and spec filled in; no steps yet
  std::vector<StageCell> cells;       // on the CPU, in the schedule's placement
  std::optional<Reference> reference;  // when config.check
};

// Errors name the bad setting (steps, batch size, model, schedule or partition).
sched::Result<RunSetup> set_up_run(const RunConfig& config);

// The executor options a config asks for: optimizer, check_finite, recv_timeout, threads.
ExecutorOptions executor_options(const RunConfig& config);

}  // namespace pipeworks::hw
