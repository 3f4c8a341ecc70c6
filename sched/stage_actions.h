// Where torch.distributed.pipelining's stage-level actions may stand, as its runtime
// (_PipelineScheduleRuntime) requires and its lowering (_add_unshard_reshard, _add_reduce_grad)
// writes them. Per stage, in its device's program:
//
//   UNSHARD gathers the stage's sharded parameters, RESHARD frees them: they alternate, UNSHARD
//   first, each pair around at least one compute of the stage, none left gathered at the end;
//   once a stage has any, each of its computes (F, B, I, W, R) lies inside a pair. torch evicts a
//   stage and gathers it again when a rank holds more than 3 (max_active_stages), so a stage may
//   have several pairs (LoopedBFS, 2 ranks, 4 stages each, M = 8):
//
//     d0: 0UNSHARD 2UNSHARD 4UNSHARD ... 0F7 ... 0RESHARD 6UNSHARD ... 0UNSHARD ... 0B0 0REDUCE_GRAD 0RESHARD
//
//   REDUCE_GRAD reduces the stage's gradients: at most once, after its every B and W (torch
//   places it right after the M-th).
//
// Which device a stage-level action belongs on is validate's placement rule, as for any action.
#pragma once

#include <vector>

#include "sched/diagnostic.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

// Appends the diagnostics of the rules above (kShardOrder, kShardedCompute, kDuplicate for a
// second REDUCE_GRAD, kReduceGradOrder), device by device in program order. Actions out of range
// or off their stage's device are skipped (validate reports them).
void check_stage_actions(const Schedule& schedule, std::vector<Diagnostic>& out);

}  // namespace pipeworks::sched
