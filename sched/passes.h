// Passes over a Schedule: each takes a schedule and returns a new one.
//
// add_recompute: GPipe re-materialization. Every backward (B or I) of a micro-batch is preceded
// on its device by R, the forward re-run with the graph kept:
//
//   d0: F0 F1 B0 B1   ->   d0: F0 F1 R0 B0 R1 B1
//
// lower_comm: inserts SEND_*/RECV_* between stages on different devices. Stages that share a
// device exchange data in memory and get none. Each pair gets one time key -- the unit-time step
// at which its data is produced -- and every device's actions are ordered by (time, comm before
// compute, pair id). A SEND therefore follows its producer, a RECV precedes its consumer, and
// both halves of a pair sit at the same place in one global order, so even blocking
// (rendezvous) sends and receives cannot deadlock. K = 2, M = 2, 1F1B:
//
//   d0: F0 SEND_F0 F1 SEND_F1 RECV_B0 B0 RECV_B1 B1          (stage 0)
//   d1: RECV_F0 F0 RECV_F1 B0 SEND_B0 F1 B1 SEND_B1          (stage 1)
//
// (the naive order "d1: ... B0 SEND_B0 RECV_F1 ..." deadlocks with blocking sends: d0 blocks in
// SEND_F1 while d1 blocks in SEND_B0.)
//
// Stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) keep their place among their device's
// compute actions. A composite (composite.h) stays one cell through every pass: add_recompute puts
// its R before it; lower_comm keys it as one item of its unit-time start, so the receives it needs
// come before it and the sends of what it produced after it, as torch's _add_send_recv writes them
// (torch's DualPipeV, 2 devices, M = 4, d0 holding stages 0 and 3):
//
//   d0: ... (0F3;3B1)OVERLAP_F_B 3RECV_F2 0SEND_F3 0RECV_B0 3SEND_B1 (3F2;0B0)OVERLAP_F_B ...
#pragma once

#include "sched/schedule.h"

namespace pipeworks::sched {

// Inserts R(s,m) before each B(s,m)/I(s,m) that has none yet. Idempotent.
Result<Schedule> add_recompute(const Schedule& schedule);

// Requires a schedule without SEND/RECV whose compute actions can run (see unit_timing).
Result<Schedule> lower_comm(const Schedule& schedule);

// Drops every SEND/RECV action (the inverse of lower_comm).
Schedule strip_comm(const Schedule& schedule);

}  // namespace pipeworks::sched
