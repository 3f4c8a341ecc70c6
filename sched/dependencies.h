// The data dependencies of an action: what must have finished (anywhere) before it may start,
// besides its predecessor in its own device's program. One definition, used by validation,
// the comm-lowering pass, the simulator and the executor.
//
//   F(s,m)       <- RECV_F(s,m) if present, else F(s-1,m)            (s > 0)
//   R(s,m)       <- F(s,m)
//   B/I(s,m)     <- R(s,m) if present, else F(s,m)
//                   and RECV_B(s,m) if present, else B/I(s+1,m)       (s < K-1)
//   W(s,m)       <- I(s,m)
//   SEND_F(s,m)  <- F(s,m)             RECV_F(s,m) <- SEND_F(s-1,m)   (its pair)
//   SEND_B(s,m)  <- B/I(s,m)           RECV_B(s,m) <- SEND_B(s+1,m)   (its pair)
//   UNSHARD(s), RESHARD(s), REDUCE_GRAD(s): none; they run on their stage's device, whose program
//                order places them among the stage's computes (sched/stage_actions.h)
//
// A composite's sub-actions (sched/composite.h) have these dependencies each.
#pragma once

#include <array>
#include <optional>

#include "sched/action_index.h"

namespace pipeworks::sched {

struct Dependencies {
  std::array<Action, 2> actions{};
  int count = 0;
  const Action* begin() const { return actions.data(); }
  const Action* end() const { return actions.data() + count; }
};

// Dependencies of `action`, resolved against what the schedule contains (for example B
// depends on R only when the schedule re-materializes that micro-batch). Dependencies that
// fall outside the schedule's range (stage -1, stage K) are omitted.
Dependencies data_dependencies(const Action& action, const ActionIndex& index, int num_stages);

// The other half of a SEND/RECV pair: SEND_F(s,m) <-> RECV_F(s+1,m), SEND_B(s,m) <-> RECV_B(s-1,m).
// nullopt for compute actions and for pairs that would leave the stage range.
std::optional<Action> comm_peer(const Action& action, int num_stages);

}  // namespace pipeworks::sched
