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
#include "sim/spec/optimizer.h"

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
// Devices: num_devices = max(placement) + 1 (the schedule's devices are cluster devices
// 0..D-1), with their memory capacities. Links, per ordered pair (a, b), a != b:
//   same node        its own link with the intra-node bandwidth and latency
//   different nodes  the sending node's egress link (one per node, inter-node bandwidth and
//                    latency), shared by every transfer leaving that node
// comm_mode and per_action_overhead_ns come from the cluster; a contention factor above 1 goes to
// every device, one contention group per node.
sched::Result<CostModel> build_cost_model(const ModelSpec& model, const ClusterSpec& cluster,
                                          const Partition& partition,
                                          const std::vector<int>& placement, int microbatch_size,
                                          OptimizerKind optimizer);

// Stage i on device i; an error when there are more stages than devices.
sched::Result<std::vector<int>> default_placement(int num_stages, const ClusterSpec& cluster);

}  // namespace pipeworks::sim
