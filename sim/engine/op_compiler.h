// Pass 2 of building an op table (op_table.h), kept apart from the table's frame: the records and
// classes of every op, and the structural errors, in program order. Internal to sim/engine/.
#pragma once

#include <string>

#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/op_index.h"
#include "sim/engine/op_table.h"

namespace pipeworks::sim::detail {

// Appends every op of `schedule` (located by pass 1) to `table`, whose device_begin, static
// memory, link_shared and slot fields build_op_table set; returns the first error in program
// order, or an empty string. The table is left incomplete after an error.
std::string compile_ops(const sched::Schedule& schedule, const CostModel& model, const Located& located,
                        OpTable& table);

}  // namespace pipeworks::sim::detail
