// What a data-parallel run checks each step with --check (docs/data_parallel.md): that the
// replicas of a pipeline rank hold bit-identical parameters (a digest of their bytes, compared
// over the store), and that its stages' reduced gradients equal the non-pipelined reference's on
// the whole mini-batch within the bound of the different summation order
// (reference_check.h: check_summation_bound), its parameters within the usual tolerance.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/dist/c10d_group.h"
#include "hw/dist/c10d_replica_sync.h"
#include "hw/dist/rank_layout.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/run/gradient_check.h"

namespace pipeworks::hw {

// The trainable parameters of each of `device`'s cells, by stage: what its ReplicaSync reduces.
std::map<int, std::vector<at::Tensor>> replicated_parameters(const std::vector<StageCell>& cells, int device);

// FNV-1a (64 bits) over the bytes of `tensors`, in order, as hex: equal bytes, equal digests.
std::string bytes_digest(const std::vector<at::Tensor>& tensors);

// Every rank's digest of its parameters after step `step`, exchanged; an error names the first
// rank whose digest differs from another replica's of the same pipeline rank.
sched::Status check_replicas_agree(C10dGroup& group, const RankPlace& place, const std::string& digest, int step);

// The first rank of `group` whose digest (indexed by rank) differs from the group's first rank's;
// -1 when they all agree.
int first_disagreeing_rank(const std::vector<std::string>& digests, const std::vector<int>& group);

// This rank's stages' reduced gradients after a step against the reference's on the whole
// mini-batch (its accumulate() half, kMicrobatchMagnitudes), within the summation bound of
// n = M x dp micro-batches summed M a replica, then over the replicas.
sched::Result<GradientCheck> check_replica_gradients(C10dReplicaSync& sync, const std::vector<StageCell>& cells,
                                                     const Reference& reference, const RankPlace& place,
                                                     int num_microbatches);

// Every stage's reduced gradients, in the model's parameter order (undefined for a parameter
// that is not trained), sent over the store by replica 0's rank of each device: what the
// reference's optimizer then applies, so that it steps as the replicas did and the next step
// starts both from the same parameters (Adam would otherwise magnify the rounding of the
// different summation order step after step).
sched::Result<std::vector<at::Tensor>> pipeline_gradients(C10dGroup& group, C10dReplicaSync& sync,
                                                          const std::vector<StageCell>& cells, const RankPlace& place,
                                                          int step);

}  // namespace pipeworks::hw
