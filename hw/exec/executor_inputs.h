// The executor's preconditions on what it is given, checked before it starts a worker: a
// schedule it can run (schedule_checks.h), one cell per stage placed as the schedule places it,
// and options that fit the schedule.
#pragma once

#include <vector>

#include "hw/exec/executor.h"
#include "hw/model/stage_cell.h"
#include "sched/schedule.h"

namespace pipeworks::hw {

sched::Status check_executor_inputs(const sched::Schedule& schedule, const std::vector<StageCell>& cells,
                                    const ExecutorOptions& options);

}  // namespace pipeworks::hw
