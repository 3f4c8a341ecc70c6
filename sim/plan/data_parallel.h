// What data parallelism adds to one pipeline replica: the stage-level actions in its schedule
// (REDUCE_GRAD; UNSHARD/RESHARD under ZeRO-3) and what they, the optimizer step and ZeRO's
// parameter all-gather cost on the cluster, with the training state sharded per ZeRO stage.
// The simulator runs one replica; the dp replicas are alike (docs/data_parallel.md).
//
// Stage s on pipeline rank p reduces over dp_group(layout, p), which lies on the cluster as
// group_span says; its links are
//   intra   the cluster's intra-node link
//   inter   one device's share of its node's egress: the inter-node link divided among
//           ceil(devices_per_node / inter_node_links) devices sending at once (shared_link)
// and, per ZeRO stage, for the stage's parameters P and gradients G (bytes of one replica):
//   REDUCE_GRAD   zero 0: all_reduce_ns(G)           zero >= 1: reduce-scatter of G (ring)
//   UNSHARD       zero 3: all-gather of P (ring); holds P - shard(P) until RESHARD
//   param gather  zero 1, 2: all-gather of P (ring) after the optimizer step
//   optimizer     optimizer_step_bytes of the device's shard / its memory bandwidth (0 unknown)
// A ring over a group on several nodes runs at the inter link (its slowest hop). REDUCE_GRAD is
// cut into ceil(G / bucket_bytes) buckets (DDP's bucket_cap_mb, 25 MiB by default).
#pragma once

#include <vector>

#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::sim {

// torch.nn.parallel.DistributedDataParallel's bucket_cap_mb default: 25 MiB.
inline constexpr Bytes kDefaultBucketBytes = 25LL * 1024 * 1024;

struct DataParallelOptions {
  Bytes bucket_bytes = kDefaultBucketBytes;
  bool overlap_grad_reduce = true;  // CostModel::overlap_grad_reduce
};

// The data-parallel actions a layout's schedule carries: none when dp is 1; else REDUCE_GRAD after
// each stage's last backward, and under ZeRO-3 first UNSHARD/RESHARD (sched/stage_level_passes.h,
// torch's order).
enum class DataParallelActions { kNone, kReduceGrad, kUnshardReshardReduceGrad };
DataParallelActions data_parallel_actions(const ParallelLayout& layout);

// `schedule` (compute actions only) with data_parallel_actions(layout) added.
sched::Result<sched::Schedule> add_data_parallel_actions(const sched::Schedule& schedule, const ParallelLayout& layout);

// The cluster device of each pipeline rank of replica 0 (tp rank 0): rank_of(layout, {0, 0, p}).
std::vector<int> replica_devices(const ParallelLayout& layout);

// Fills every stage's data-parallel costs and shards its state (rules above); `placement` maps
// stages to pipeline ranks. Nothing changes when dp is 1 but the optimizer step's time.
sched::Status add_data_parallel_costs(CostModel& cost, const std::vector<int>& placement, const ModelSpec& model,
                                      const ClusterSpec& cluster, const ParallelLayout& layout, OptimizerKind optimizer,
                                      const DataParallelOptions& options);

}  // namespace pipeworks::sim
