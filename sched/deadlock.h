// Deadlock search: the cross-device wait graph of a schedule, searched for a cycle with
// Boost.Graph. Nodes are actions; edges are program order on each device and the data
// dependencies of sched/dependencies.h. A SEND and its RECV are one node: sends block until
// the receive is posted (rendezvous), so both halves happen together. K = 2, 1F1B with the
// naive comm order deadlocks:
//
//   d0: F0 SEND_F0 F1 [SEND_F1] RECV_B0 ...      d0 blocks in SEND_F1 until d1 posts RECV_F1
//   d1: RECV_F0 F0 B0 [SEND_B0] RECV_F1 ...      d1 blocks in SEND_B0 until d0 posts RECV_B0
//
//   cycle: 0SEND_F1=1RECV_F1 -> 1SEND_B0=0RECV_B0 -> back
#pragma once

#include <optional>
#include <vector>

#include "sched/action_index.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

// One node of a cycle: an action, and for a SEND/RECV pair the location of the other half.
struct CycleStep {
  Location at;
  std::optional<Location> peer;
};

// The actions on one cycle, in wait order (each waits for the one before it; the first waits
// for the last), or empty when the schedule cannot deadlock. Expects a schedule whose actions
// are all in range for `index` (validate runs it only on otherwise valid schedules).
std::vector<CycleStep> deadlock_cycle(const Schedule& schedule, const ActionIndex& index);

}  // namespace pipeworks::sched
