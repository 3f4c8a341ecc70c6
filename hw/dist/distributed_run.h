// hw/dist/ -- the multi-process room: one rank per device over c10d (Gloo on CPUs, NCCL on
// GPUs). The rank's environment (distributed_env.h), its process group and transport
// (c10d_group.h, c10d_transport.h, rank_backend.h), the run of one rank (this file, with the
// in-process run's set-up and devices), the reports merged on rank 0 (rank_report.h,
// rank_tensors.h), the launcher (launcher.h) and the fault hooks tests use (die_at.h). It
// builds on hw/run/ and below.
//
// One rank of a multi-process training run (LibTorch-free header, for the CLI). Every rank
// builds the same model, cells and lowered schedule from the same config and seed, then runs
// only its own device's program (rank = device), exchanging activations and gradients with
// the other ranks through c10d (c10d_transport.h). At each step's start the ranks meet at a
// barrier; after it, every rank's measured spans go to rank 0, which merges them into one
// Timeline and one row of statistics (rank_report.h):
//
//   rank 0: barrier | d0 program ........ | report --> merge, print, trace
//   rank 1: barrier | d1 program ........ | report -/
//
// A rank computes where its backend says (rank_backend.h: gloo the CPU, nccl its GPU) through
// the ComputeDevices path the in-process run takes. With config.check each rank compares its own
// cells' gradients and parameters with the reference every step (rank_tensors.h).
//
// Every blocking operation (rendezvous, barrier, send, recv, gather) waits at most `timeout`;
// a dead peer makes every survivor return an error naming the peer and the action it waited
// on. Test hooks (environment): PIPEWORKS_TEST_DIE_AT (die_at.h) and PIPEWORKS_TEST_DUMP_DIR
// (each rank saves its cells' parameters then gradients after the last step to
// <dir>/rank<r>.pt, a torch::save'd list of tensors).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "hw/dist/backend.h"
#include "hw/run/run.h"

namespace pipeworks::hw {

struct DistributedOptions {
  std::chrono::milliseconds timeout = std::chrono::minutes(3);
  Backend backend = Backend::kGloo;  // backend_for(RunConfig::device)
};

struct DistributedReport {
  int rank = 0;
  int world_size = 1;
  // Rank 0: the merged report (steps, last_timeline over every device, check over every
  // rank). Other ranks: their own device only.
  RunReport report;
};

// Reads RANK/WORLD_SIZE/... (distributed_env.h); WORLD_SIZE must equal the schedule's number of
// devices. on_step runs on rank 0 only, with the merged statistics.
sched::Result<DistributedReport> run_distributed(const RunConfig& config, const DistributedOptions& options,
                                                 const std::function<void(const StepStats&)>& on_step = {});

}  // namespace pipeworks::hw
