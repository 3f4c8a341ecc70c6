// The discrete-event simulator: predicts when every action of a Schedule runs under a CostModel,
// in integer nanoseconds, deterministically. The result is the "predicted" Timeline that viz
// draws and hw runs are compared with, plus the numbers people ask for (makespan, bubble,
// throughput, memory peak per device and whether it fits).
//
// A schedule without SEND/RECV runs with ideal communication (data is available on another
// device the moment it is produced). A lowered schedule (sched::lower_comm) pays for every
// transfer on its link, in CostModel::comm_mode (see engine.h for the exact rules). Devices with
// a contention factor are slowed where they compute at the same time (contention.h).
//
// torch's stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) run on each device's collective lane
// at the costs the cost model gives them (engine.h), 0 without data parallelism; the simulated
// pipeline is one of the replicas, each alike. A composite `(0F3;3B1)OVERLAP_F_B` runs as its two
// sub-actions back to back on its device, or, with CostModel::overlapped_pass_share below 1,
// overlapped (overlapped_pairs.h's overlap_composites). The result counts both, and the report says so
// where they appear.
//
//   GPipe K=2 M=2, F=1 B=2, ideal comm:      t: 0  1  2  3  4  5  6  7  8
//                                           d0: F0 F1 .  .  .  B0 B0 B1 B1
//                                           d1: .  F0 F1 B0 B0 B1 B1 .  .
//   makespan (M+K-1)(F+B) = 9, bubble (K-1)/(M+K-1) = 1/3 on each device.
#pragma once

#include <vector>

#include "sched/schedule.h"
#include "sched/timeline.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/memory_model.h"

namespace pipeworks::sim {

struct SimOptions {
  // Build SimResult::timeline (spans, flows, memory samples). Sweeps that only need the numbers
  // turn it off; the figures are the same either way.
  bool build_timeline = true;
};

struct DeviceResult {
  int device = 0;
  std::vector<int> stages;  // stages placed on the device, ascending
  Nanoseconds busy_ns = 0;  // compute lane only; time held by blocking SEND/RECV counts as idle
  Nanoseconds idle_ns = 0;  // makespan - busy
  double bubble_fraction = 0;
  double contention_slowdown = 1;  // its compute ran this much slower for sharing (contention.h)
  Nanoseconds collective_ns = 0;   // its collectives' own time (UNSHARD, REDUCE_GRAD; not waits for buckets)
  Nanoseconds optimizer_ns = 0;    // its optimizer step and parameter all-gather, after its program
  MemoryReport memory;
};

struct SimResult {
  sched::Timeline timeline;  // name "predicted"; empty spans when SimOptions::build_timeline is off
  Nanoseconds makespan_ns = 0;  // the latest end of an action (compute, transfer or collective)
  // The training step: each device's optimizer tail after its program and collectives end; the
  // makespan when no stage has an optimizer cost.
  Nanoseconds step_ns = 0;
  Nanoseconds compute_end_ns = 0;  // the latest end of a compute action (step - this: the data-parallel tail)
  double bubble_fraction = 0;  // idle compute time over devices x makespan
  double throughput_samples_per_s = 0;  // M * microbatch_size / step
  std::vector<DeviceResult> devices;
  bool fits = true;  // every device's peak <= its capacity
  std::int64_t num_actions = 0;
  std::int64_t num_transfers = 0;
  std::int64_t num_stage_level_actions = 0;  // UNSHARD, RESHARD, REDUCE_GRAD
  std::int64_t num_composites = 0;           // OVERLAP_F_B pairs of the schedule
  double overlapped_pass_share = 1;          // the cost model's: 1, back to back; below, overlapped
  int num_microbatches = 0;
  int microbatch_size = 1;
  CommMode comm_mode = CommMode::kOverlap;
};

// Fails, with a message, on an invalid cost model (check_cost_model), a schedule that does not
// match it (stage counts, placement, missing partners or links, duplicate or out-of-range
// actions, missing dependencies) and a schedule that cannot progress (each device's blocked
// action and what it waits for). Succeeds only when every action of the schedule ran.
sched::Result<SimResult> simulate(const sched::Schedule& schedule, const CostModel& model,
                                  const SimOptions& options = {});

}  // namespace pipeworks::sim
