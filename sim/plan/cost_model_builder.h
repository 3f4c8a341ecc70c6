// Turns a model spec + cluster spec + partition + placement into the simulator's CostModel:
// the one place that decides how layer costs add up into stage costs and how the topology
// becomes links.
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/partition.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/plan/data_parallel.h"
#include "sim/spec/optimizer.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::sim {

// Stage s (layers [b, e) of `partition`) on device d = placement[s], micro-batch size m:
//   forward_ns          round(sum forward(m) / speed_d)
//   backward_input_ns   round(sum backward_input(m) / speed_d), likewise backward_weight_ns
//   backward_ns         backward_input_ns + backward_weight_ns
//   recompute_ns        forward_ns
//   forward_no_grad_ns  round(sum forward_no_grad(m) / speed_d) (forward where a layer has none);
//                       0 when no layer of the stage has one
//   input_bytes         output of layer b-1 (the model's input_bytes for stage 0)
//   output_bytes        output of layer e-1
//   stash_bytes         sum stash(m); param_bytes sum params
//   grad_bytes, optimizer_bytes   from optimizer.h (grads in param precision; fp32 states,
//                                 plus an fp32 master copy when params are fp16/bf16)
// Devices: the layout's pp pipeline ranks of replica 0; rank p is cluster device
// rank_of(layout, {0, 0, p}) (replica_devices), with its memory capacity. Links, per ordered
// pair (a, b), a != b:
//   same node        its own link with the intra-node bandwidth and latency
//   different nodes  the sender's egress link: its node has inter_node_links of them (inter-node
//                    bandwidth and latency), device d sending on link d % inter_node_links,
//                    shared by every transfer leaving the node on it
// Then each stage's data-parallel costs and sharded state, and the optimizer step's time
// (data_parallel.h).
// comm_mode and per_action_overhead_ns come from the cluster; a contention factor above 1 goes to
// every device, one contention group per node.
sched::Result<CostModel> build_cost_model(const ModelSpec& model, const ClusterSpec& cluster,
                                          const Partition& partition, const std::vector<int>& placement,
                                          int microbatch_size, OptimizerKind optimizer, const ParallelLayout& layout,
                                          const DataParallelOptions& options = {});
// The same for a model and cluster the caller has checked (check_model_spec, check_cluster_spec)
// and builds many cost models from: the sweep checks them once, not once per configuration.
sched::Result<CostModel> build_cost_model_of_checked(const ModelSpec& model, const ClusterSpec& cluster,
                                                     const Partition& partition, const std::vector<int>& placement,
                                                     int microbatch_size, OptimizerKind optimizer,
                                                     const ParallelLayout& layout, const DataParallelOptions& options);
// One pipeline of D = max(placement) + 1 pipeline ranks: the layout pp D, dp 1, tp the model's
// (model.tensor_parallel devices to a pipeline rank).
sched::Result<CostModel> build_cost_model(const ModelSpec& model, const ClusterSpec& cluster,
                                          const Partition& partition, const std::vector<int>& placement,
                                          int microbatch_size, OptimizerKind optimizer);

// Stage i on device i; an error when there are more stages than devices.
sched::Result<std::vector<int>> default_placement(int num_stages, const ClusterSpec& cluster);

}  // namespace pipeworks::sim
