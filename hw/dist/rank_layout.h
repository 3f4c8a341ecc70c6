// Where a rank of a multi-process run sits when its pipeline is split and replicated: its place
// in the run's layout (sim/spec/parallel_layout.h: Megatron-LM's rank order unless --rank-order
// says otherwise), the schedule's device whose program it runs, and the ranks its stages' peers
// are: the ranks of its replica with its tensor-parallel rank.
//
//   pp 2 x dp 2, order tp-dp-pp:  rank 0 = (replica 0, device 0)   rank 1 = (replica 1, device 0)
//                                 rank 2 = (replica 0, device 1)   rank 3 = (replica 1, device 1)
//   pipelines [0,2] [1,3]; data-parallel groups [0,1] (device 0) and [2,3] (device 1)
//
//   tp 2 x pp 2, order tp-dp-pp:  rank 0 = (tp 0, device 0)   rank 1 = (tp 1, device 0)
//                                 rank 2 = (tp 0, device 1)   rank 3 = (tp 1, device 1)
//   pipelines [0,2] [1,3]; tensor-parallel groups [0,1] (device 0) and [2,3] (device 1)
//
// LibTorch-free: tested without processes.
#pragma once

#include <vector>

#include "hw/run/run.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::hw {

struct RankPlace {
  sim::ParallelLayout layout;
  int rank = 0;
  int device = 0;   // its pipeline rank: the schedule's device whose program it runs
  int replica = 0;  // its data-parallel rank
  int tensor_rank = 0;  // its tensor-parallel rank: the shard of the split layers it holds
  // Per stage of the schedule, the rank that runs it in this rank's replica, with its tensor rank.
  std::vector<int> stage_ranks;
  std::vector<int> replica_group;  // the ranks of this rank's data-parallel group, by replica
  std::vector<int> tensor_group;   // the ranks of its tensor-parallel group, by tensor rank
};

// An error when `world_size` is not config.tensor_parallel x the schedule's devices x
// config.data_parallel.
sched::Result<RankPlace> rank_place(const RunConfig& config, const sched::Schedule& schedule, int rank,
                                    int world_size);

}  // namespace pipeworks::hw
