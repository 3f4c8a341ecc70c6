// What data parallelism adds to a replica's cost model and schedule (sim/plan/data_parallel.h):
// the collectives per ZeRO stage on the group's links, the rank order deciding which links those
// are, buckets, the optimizer step, the sharded state; exact values on a 2 x 2 cluster.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sched/generators.h"
#include "sim/plan/cost_model_builder.h"

namespace pipeworks::sim {
namespace {

// Stage 0: 4000 parameter bytes, stage 1: 8000 (fp32, SGD: no optimizer state).
ModelSpec three_layers() {
  ModelSpec spec;
  spec.name = "three";
  spec.input_bytes = ScaledBytes{0, 8};
  for (int i = 0; i < 3; ++i) {
    LayerSpec l;
    l.name = std::string(1, 'l') + static_cast<char>('0' + i);
    l.forward = ScaledDuration{0, 1000};
    l.backward_input = ScaledDuration{0, 1000};
    l.backward_weight = ScaledDuration{0, 1000};
    l.output_bytes = ScaledBytes{0, 100};
    l.param_bytes = 4000;
    spec.layers.push_back(l);
  }
  return spec;
}

// Two nodes of two devices: NVLink-like 100 GB/s + 1 us inside, 10 GB/s + 5 us between, one
// egress link a node (so a device's share is 5 GB/s), memory at 1 GB/s.
ClusterSpec two_by_two() {
  ClusterSpec c;
  c.name = "2x2";
  c.devices.assign(4, DeviceSpec{1 << 30, 1.0, 0, 0, 1e9});
  c.devices_per_node = 2;
  c.intra_node = LinkSpec{100e9, 1000};
  c.inter_node = LinkSpec{10e9, 5000};
  return c;
}

CostModel built(const ParallelLayout& layout, const DataParallelOptions& options = {}) {
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto model = build_cost_model(three_layers(), two_by_two(), partition, {0, 1}, 1, OptimizerKind::kSgd, layout, options);
  if (!model) FAIL(model.error().message);
  return *model;
}

ParallelLayout pp2_dp2(ZeroStage zero, RankOrder order = RankOrder::kTpDpPp) {
  ParallelLayout l;
  l.pp = 2;
  l.dp = 2;
  l.zero = zero;
  l.order = order;
  return l;
}

}  // namespace

TEST_CASE("dp 1: no collectives, the optimizer step from memory bandwidth", "[data-parallel]") {
  ParallelLayout one;
  one.pp = 2;
  const CostModel c = built(one);
  for (const StageCost& s : c.stages) {
    CHECK((s.reduce_grad_ns == 0 && s.unshard_ns == 0 && s.param_gather_ns == 0));
  }
  // SGD fp32: 2 x params + grads = 12000 bytes at 1 GB/s.
  CHECK(c.stages[0].optimizer_step_ns == 12000);
  CHECK(c.stages[1].optimizer_step_ns == 24000);
  CHECK(c.link(0, 1)->bandwidth_bytes_per_s == 100e9);  // pipeline ranks 0, 1 on node 0
}

TEST_CASE("Megatron's order keeps a data-parallel group on one node: ring all-reduce over NVLink",
          "[data-parallel]") {
  const CostModel c = built(pp2_dp2(ZeroStage::kNone));
  // Pipeline ranks of replica 0 are devices 0 and 2 (rank = dp + 2 pp): the hand-off crosses nodes.
  CHECK(replica_devices(pp2_dp2(ZeroStage::kNone)) == std::vector<int>{0, 2});
  CHECK(c.link(0, 1)->bandwidth_bytes_per_s == 10e9);
  // Group [0, 1]: 2 (n - 1) (a + ceil(S / n) / B) = 2 (1000 + 2000 B / 100 GB/s) = 2040.
  CHECK(c.stages[0].reduce_grad_ns == 2040);
  CHECK(c.stages[1].reduce_grad_ns == 2 * (1000 + 40));
  CHECK(c.stages[0].grad_bytes == 4000);  // not sharded without ZeRO
}

TEST_CASE("pp-before-dp order spreads a group over nodes: the ring runs at a device's share of the egress",
          "[data-parallel]") {
  const CostModel c = built(pp2_dp2(ZeroStage::kNone, RankOrder::kTpPpDp));
  CHECK(c.link(0, 1)->bandwidth_bytes_per_s == 100e9);  // devices 0 and 1
  // Group [0, 2], one rank a node: 2 (5000 + 2000 B / 5 GB/s) = 10800.
  CHECK(c.stages[0].reduce_grad_ns == 10800);
}

TEST_CASE("a reduction across nodes shares a NIC with the pipeline only where the pipeline sends off the node",
          "[data-parallel]") {
  // On the 2 x 2 cluster neither order puts both on a NIC: Megatron's keeps the group on a node,
  // pp-before-dp the pipeline.
  for (const RankOrder order : {RankOrder::kTpDpPp, RankOrder::kTpPpDp}) {
    for (const StageCost& s : built(pp2_dp2(ZeroStage::kNone, order)).stages) CHECK(s.reduce_grad_link == -1);
  }
  // One device a node: every hand-off and every reduction crosses nodes on the device's NIC.
  ClusterSpec singles = two_by_two();
  singles.devices_per_node = 1;
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto c = build_cost_model(three_layers(), singles, partition, {0, 1}, 1, OptimizerKind::kSgd,
                            pp2_dp2(ZeroStage::kNone));
  REQUIRE(c.ok());
  // Group [0, 1] of pipeline rank 0, a ring of two nodes at the whole 10 GB/s egress:
  // 2 (5000 + 2000 B / 10 GB/s) = 10400, all of it on the NIC rank 0 sends activations on.
  CHECK(c->stages[0].reduce_grad_ns == 10400);
  CHECK(c->stages[0].reduce_grad_link == c->link_of[0 * 2 + 1]);
  CHECK(c->stages[0].reduce_grad_link_ns == 10400);
  CHECK(c->stages[1].reduce_grad_link == c->link_of[1 * 2 + 0]);
  CHECK(c->stages[1].reduce_grad_link_ns == c->stages[1].reduce_grad_ns);
}

TEST_CASE("ZeRO-1 and -2 reduce-scatter the gradients and all-gather the updated parameters", "[data-parallel]") {
  const CostModel one = built(pp2_dp2(ZeroStage::kOptimizer));
  CHECK(one.stages[0].reduce_grad_ns == 1020);  // (n - 1) (1000 + 20)
  CHECK(one.stages[0].param_gather_ns == 1020);
  CHECK(one.stages[0].unshard_ns == 0);
  CHECK(one.stages[0].optimizer_step_ns == 6000);  // half of the 12000 bytes
  CHECK(one.stages[0].grad_bytes == 4000);
  const CostModel two = built(pp2_dp2(ZeroStage::kGradients));
  CHECK(two.stages[0].grad_bytes == 2000);
  CHECK(two.stages[0].param_bytes == 4000);
}

TEST_CASE("ZeRO-3 gathers the parameters at UNSHARD and holds the other shards until RESHARD", "[data-parallel]") {
  const CostModel c = built(pp2_dp2(ZeroStage::kParameters));
  CHECK(c.stages[1].unshard_ns == 1000 + 40);
  CHECK(c.stages[1].unshard_bytes == 4000);
  CHECK(c.stages[1].param_bytes == 4000);
  CHECK(c.stages[1].param_gather_ns == 0);
}

TEST_CASE("gradients are reduced in buckets of the configured size", "[data-parallel]") {
  DataParallelOptions options;
  options.bucket_bytes = 3000;
  options.overlap_grad_reduce = false;
  const CostModel c = built(pp2_dp2(ZeroStage::kNone), options);
  CHECK(c.stages[0].reduce_grad_buckets == 2);
  CHECK(c.stages[1].reduce_grad_buckets == 3);
  CHECK_FALSE(c.overlap_grad_reduce);
  CHECK(built(pp2_dp2(ZeroStage::kNone)).stages[1].reduce_grad_buckets == 1);  // 25 MiB holds all
  options.bucket_bytes = 0;
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto refused = build_cost_model(three_layers(), two_by_two(), partition, {0, 1}, 1, OptimizerKind::kSgd,
                                  pp2_dp2(ZeroStage::kNone), options);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "the gradient bucket must hold at least 1 byte, got 0");
}

TEST_CASE("a layout larger than the cluster is refused", "[data-parallel]") {
  ParallelLayout big = pp2_dp2(ZeroStage::kNone);
  big.dp = 4;
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto refused = build_cost_model(three_layers(), two_by_two(), partition, {0, 1}, 1, OptimizerKind::kSgd, big);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "layout: tp 1 x pp 2 x dp 4 needs 8 devices, the cluster has 4");
}

TEST_CASE("the replica's schedule gains REDUCE_GRAD with dp > 1, and UNSHARD/RESHARD under ZeRO-3", "[data-parallel]") {
  const sched::Schedule plain = *sched::one_f_one_b(sched::ScheduleShape{2, 4, {}});
  auto count = [](const sched::Schedule& s, sched::ActionKind kind) {
    std::int64_t n = 0;
    for (const sched::Program& p : s.programs) n += std::count_if(p.begin(), p.end(), [&](const auto& a) { return a.kind == kind; });
    return n;
  };
  ParallelLayout one;
  one.pp = 2;
  CHECK(*add_data_parallel_actions(plain, one) == plain);
  const sched::Schedule reduced = *add_data_parallel_actions(plain, pp2_dp2(ZeroStage::kOptimizer));
  CHECK(count(reduced, sched::ActionKind::kReduceGrad) == 2);
  CHECK(count(reduced, sched::ActionKind::kUnshard) == 0);
  const sched::Schedule sharded = *add_data_parallel_actions(plain, pp2_dp2(ZeroStage::kParameters));
  CHECK(count(sharded, sched::ActionKind::kReduceGrad) == 2);
  CHECK(count(sharded, sched::ActionKind::kUnshard) == 2);
  CHECK(count(sharded, sched::ActionKind::kReshard) == 2);
}

}  // namespace pipeworks::sim
