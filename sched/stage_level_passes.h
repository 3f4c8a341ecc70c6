// The passes that write torch.distributed.pipelining's stage-level actions into a compute-only
// schedule, where torch's own lowering puts them (schedules.py: _add_unshard_reshard, then
// _add_reduce_grad, before the sends and receives): the data-parallel side of a pipeline.
//
// add_reduce_grad: REDUCE_GRAD(s) right after the M-th B or W of stage s on its device (after
// the composite that holds it), where the stage's gradients are complete:
//
//   d0 (1F1B, K = 2, M = 2, stage 0):  0F0 0F1 0B0 0B1            ->  ... 0B1 0REDUCE_GRAD
//
// add_unshard_reshard: before each action (a composite counts once), the next `max_active`
// distinct stages the device's program computes from there on are kept gathered: UNSHARD for
// those not yet gathered, RESHARD first for gathered ones no longer among them (lowest stage
// first, as torch's set of small integers iterates), and RESHARD of every stage still gathered
// at the end:
//
//   d0 (LoopedBFS, 2 devices, stages 0 2 4 6, max 3):
//     0UNSHARD 2UNSHARD 4UNSHARD 0F0 ... 0F7 0RESHARD 6UNSHARD 2F0 ...
//
// Both want a schedule without SEND/RECV (lower_comm comes after them and keeps their places);
// add_unshard_reshard one of compute actions only, add_reduce_grad one without REDUCE_GRAD (it
// comes second, as in torch). sched/stage_actions.h states the rules their output meets.
#pragma once

#include "sched/schedule.h"

namespace pipeworks::sched {

// torch's max_active_stages default.
inline constexpr int kDefaultMaxActiveStages = 3;

Result<Schedule> add_reduce_grad(const Schedule& schedule);
Result<Schedule> add_unshard_reshard(const Schedule& schedule, int max_active = kDefaultMaxActiveStages);

}  // namespace pipeworks::sched
