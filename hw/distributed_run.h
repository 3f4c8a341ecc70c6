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
// Every blocking operation (rendezvous, barrier, send, recv, gather) waits at most `timeout`;
// a dead peer makes every survivor return an error naming the peer and the action it waited
// on. Test hooks (environment): PIPEWORKS_TEST_DIE_AT (die_at.h) and PIPEWORKS_TEST_DUMP_DIR
// (each rank saves its cells' parameters then gradients after the last step to
// <dir>/rank<r>.pt, a torch::save'd list of tensors).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "hw/run.h"

namespace pipeworks::hw {

struct DistributedOptions {
  std::chrono::milliseconds timeout = std::chrono::minutes(3);
  std::string backend = "gloo";  // CPU: gloo (nccl: hw/cuda, LibTorch with CUDA)
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
