// The OVERLAP_F_B pairs of a schedule (sched/composite.h) run overlapped when the cost model's
// overlapped_pass_share is below 1: a pass over a compiled OpTable that shortens each pair's B.
#pragma once

#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/op_table.h"

namespace pipeworks::sim {

// Each OVERLAP_F_B pair runs overlapped (CostModel::overlapped_pass_share below 1): the part of
// the shorter pass the longer hides, (1 - share) x min(F, B), comes off its B, so the pair takes
// max(F, B) + share x min(F, B). Its F ends (and sends) as it would alone; a B that waits for
// its input after the F still gets the overlap's credit. One new class per pair of classes.
//
//   F = 2, B = 4, share 0.5   back to back   d0: F F B B B B     overlapped   d0: F F B B B
void overlap_composites(const sched::Schedule& schedule, const CostModel& model, OpTable& table);

}  // namespace pipeworks::sim
