// The simulator's oracle: the longest chain of compute through a schedule, under the costs of a
// CostModel, worked out here independently of sim/engine/op_table.cc and sim/engine/engine.cc.
//
// Nodes are the compute actions; edges are each device's program order of compute and the data
// dependencies of sched/dependencies.h between compute actions (a SEND/RECV pair only carries
// such a dependency across devices). A node costs its stage's cost for its kind (the first F, R
// or B of a stage in its program costs first_*_ns instead, when that is set) plus the per-action
// overhead; a stage-level action (UNSHARD, RESHARD, REDUCE_GRAD) costs nothing. Transfers and resume costs only add time, so
//
//   makespan >= critical path, with equality when the schedule has no SEND/RECV and no stage
//   has a resume cost (then the simulator's start rule is exactly this longest path).
#pragma once

#include <cstdint>
#include <optional>

#include "sched/schedule.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::fuzz {

// nullopt when the compute actions cannot all run (a cycle or a missing dependency) or a stage
// is missing from the cost model.
std::optional<std::int64_t> critical_path_ns(const sched::Schedule& schedule, const sim::CostModel& costs);

}  // namespace pipeworks::fuzz
