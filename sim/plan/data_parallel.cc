// The data-parallel actions and costs of one pipeline replica (rules in data_parallel.h).
#include "sim/plan/data_parallel.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/stage_level_passes.h"
#include "sim/engine/collectives.h"
#include "sim/engine/op_costs.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::sim {
namespace {

// The links a data-parallel group of pipeline rank `p` reduces over.
struct GroupLinks {
  GroupSpan span;
  int ranks = 1;
  Link intra;
  Link inter;
  // A ring over the whole group: its slowest hop.
  const Link& ring() const { return span.nodes > 1 ? inter : intra; }
};

GroupLinks group_links(const ParallelLayout& layout, int p, const ClusterSpec& cluster) {
  GroupLinks g;
  const std::vector<int> group = dp_group(layout, p);
  g.ranks = static_cast<int>(group.size());
  g.span = group_span(group, cluster.devices_per_node);
  g.intra = Link{cluster.intra_node.latency_ns, cluster.intra_node.bandwidth_bytes_per_s};
  const int sharers = (cluster.devices_per_node + cluster.inter_node_links - 1) / cluster.inter_node_links;
  g.inter = shared_link(Link{cluster.inter_node.latency_ns, cluster.inter_node.bandwidth_bytes_per_s}, sharers);
  return g;
}

// The gradients' reduction: all-reduce without sharding, reduce-scatter with it.
sched::Result<Nanoseconds> reduce_grad_ns(const GroupLinks& g, Bytes grad_bytes, ZeroStage zero) {
  if (zero != ZeroStage::kNone) return ring_reduce_scatter_ns(grad_bytes, g.ranks, g.ring());
  if (!g.span.even) return ring_all_reduce_ns(grad_bytes, g.ranks, g.ring());
  return all_reduce_ns(grad_bytes, g.span.ranks_per_node, g.span.nodes, g.intra, g.inter);
}

// How long the reduction drives the inter-node links: all of a ring that crosses nodes, the
// middle ring of the hierarchical all-reduce, nothing inside one node.
sched::Result<Nanoseconds> reduce_grad_inter_node_ns(const GroupLinks& g, Bytes grad_bytes, ZeroStage zero) {
  if (g.span.nodes <= 1) return Nanoseconds{0};
  if (zero != ZeroStage::kNone || !g.span.even) return reduce_grad_ns(g, grad_bytes, zero);
  return all_reduce_inter_node_ns(grad_bytes, g.span.ranks_per_node, g.span.nodes, g.inter);
}

// The link pipeline rank p sends off its node on (its NIC), when its pipeline ever does: -1 when
// every other rank of the replica is on its node.
int egress_link(const CostModel& cost, const std::vector<int>& devices, int p, const ClusterSpec& cluster) {
  const auto d = static_cast<std::size_t>(cost.num_devices);
  for (std::size_t q = 0; q < d && q < devices.size(); ++q) {
    if (cluster.node_of(devices[q]) == cluster.node_of(devices[static_cast<std::size_t>(p)])) continue;
    return cost.link_of[static_cast<std::size_t>(p) * d + q];
  }
  return -1;
}

int bucket_count(Bytes grad_bytes, Bytes bucket_bytes) {
  const Bytes buckets = grad_bytes / bucket_bytes + (grad_bytes % bucket_bytes != 0 ? 1 : 0);
  return static_cast<int>(std::clamp<Bytes>(buckets, 1, 1 << 30));
}

// One stage's collectives on group `g` (dp > 1).
sched::Status add_collectives(StageCost& c, const GroupLinks& g, ZeroStage zero, const DataParallelOptions& options) {
  auto reduce = reduce_grad_ns(g, c.grad_bytes, zero);
  if (!reduce) return reduce.error();
  c.reduce_grad_ns = *reduce;
  c.reduce_grad_buckets = bucket_count(c.grad_bytes, options.bucket_bytes);
  if (zero == ZeroStage::kNone) return sched::Ok{};
  auto gather = ring_all_gather_ns(c.param_bytes, g.ranks, g.ring());
  if (!gather) return gather.error();
  if (zero == ZeroStage::kParameters) {
    c.unshard_ns = *gather;
    c.unshard_bytes = c.param_bytes - shard_bytes(c.param_bytes, g.ranks);
  } else {
    c.param_gather_ns = *gather;
  }
  return sched::Ok{};
}

// The optimizer step of the stage's shard on a device of `bandwidth` (0: not timed).
sched::Result<Nanoseconds> optimizer_ns(Bytes param_bytes, const ModelSpec& model, OptimizerKind optimizer,
                                        const ParallelLayout& layout, double bandwidth) {
  if (bandwidth <= 0) return Nanoseconds{0};
  const Bytes whole = optimizer_step_bytes(param_bytes, model.param_dtype, optimizer);
  const Bytes moved = layout.zero == ZeroStage::kNone ? whole : shard_bytes(whole, layout.dp);
  return transfer_ns(Link{0, bandwidth}, moved);
}

}  // namespace

DataParallelActions data_parallel_actions(const ParallelLayout& layout) {
  if (layout.dp <= 1) return DataParallelActions::kNone;
  return layout.zero == ZeroStage::kParameters ? DataParallelActions::kUnshardReshardReduceGrad
                                               : DataParallelActions::kReduceGrad;
}

sched::Result<sched::Schedule> add_data_parallel_actions(const sched::Schedule& schedule, const ParallelLayout& layout) {
  switch (data_parallel_actions(layout)) {
    case DataParallelActions::kNone: return schedule;
    case DataParallelActions::kReduceGrad: return sched::add_reduce_grad(schedule);
    case DataParallelActions::kUnshardReshardReduceGrad: break;
  }
  auto unsharded = sched::add_unshard_reshard(schedule);
  if (!unsharded) return unsharded;
  return sched::add_reduce_grad(*unsharded);
}

std::vector<int> replica_devices(const ParallelLayout& layout) {
  std::vector<int> devices;
  for (int p = 0; p < layout.pp; ++p) devices.push_back(rank_of(layout, RankCoord{0, 0, p}));
  return devices;
}

sched::Status add_data_parallel_costs(CostModel& cost, const std::vector<int>& placement, const ModelSpec& model,
                                      const ClusterSpec& cluster, const ParallelLayout& layout, OptimizerKind optimizer,
                                      const DataParallelOptions& options) {
  if (options.bucket_bytes < 1) {
    return sched::Error{fmt::format("the gradient bucket must hold at least 1 byte, got {}", options.bucket_bytes)};
  }
  cost.overlap_grad_reduce = options.overlap_grad_reduce;
  const std::vector<int> devices = replica_devices(layout);
  for (std::size_t s = 0; s < cost.stages.size(); ++s) {
    StageCost& c = cost.stages[s];
    const int p = placement[s];
    const double bandwidth = cluster.devices[static_cast<std::size_t>(devices[static_cast<std::size_t>(p)])]
                                 .memory_bandwidth_bytes_per_s;
    auto step = optimizer_ns(c.param_bytes, model, optimizer, layout, bandwidth);
    if (!step) return sched::Error{fmt::format("stage {}: the optimizer step: {}", s, step.error().message)};
    c.optimizer_step_ns = *step;
    if (layout.dp <= 1) continue;
    const GroupLinks group = group_links(layout, p, cluster);
    if (auto st = add_collectives(c, group, layout.zero, options); !st) {
      return sched::Error{fmt::format("stage {}: its data-parallel collectives: {}", s, st.error().message)};
    }
    auto on_nic = reduce_grad_inter_node_ns(group, c.grad_bytes, layout.zero);
    if (!on_nic) return sched::Error{fmt::format("stage {}: its reduction across nodes: {}", s, on_nic.error().message)};
    if (*on_nic > 0) c.reduce_grad_link = egress_link(cost, devices, p, cluster);
    if (c.reduce_grad_link >= 0) c.reduce_grad_link_ns = *on_nic;
    const ShardedState state = sharded_state(c.param_bytes, model.param_dtype, optimizer, layout.zero, layout.dp);
    c.param_bytes = state.param_bytes;
    c.grad_bytes = state.grad_bytes;
    c.optimizer_bytes = state.optimizer_bytes;
  }
  return sched::Ok{};
}

}  // namespace pipeworks::sim
