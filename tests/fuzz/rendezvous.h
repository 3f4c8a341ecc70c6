// A second opinion on deadlock freedom, written independently of sched/deadlock.cc: executes a
// schedule step by step with blocking (rendezvous) sends. A compute action runs once its data
// dependencies have run (a stage-level action at once); a SEND and its RECV run together, once
// both devices have reached them.
//
//   d0: F0 [SEND_F0] ...      both devices stand at the two halves of the pair: they run
//   d1: [RECV_F0] F0 ...      together and both move on
#pragma once

#include "sched/result.h"
#include "sched/schedule.h"

namespace pipeworks::fuzz {

// Ok when every action ran; otherwise an error naming each device's blocked action.
sched::Status run_rendezvous(const sched::Schedule& schedule);

}  // namespace pipeworks::fuzz
