// build_cost_model: stage sums, speed scaling, micro-batch rescaling, training state, links.
#include <catch2/catch.hpp>

#include "sim/plan/cost_model_builder.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/tensor_parallel.h"

namespace pipeworks::sim {
namespace {

ModelSpec three_layers() {
  ModelSpec spec;
  spec.name = "three";
  spec.input_bytes = ScaledBytes{0, 7};
  for (int i = 0; i < 3; ++i) {
    LayerSpec l;
    l.name = std::string(1, 'l') + static_cast<char>('0' + i);
    l.forward = ScaledDuration{100, 1000 * (i + 1)};
    l.backward_input = ScaledDuration{0, 1500 * (i + 1)};
    l.backward_weight = ScaledDuration{10, 500 * (i + 1)};
    l.backward_split = true;
    l.output_bytes = ScaledBytes{0, 100 * (i + 1)};
    l.stash_bytes = ScaledBytes{1, 50};
    l.param_bytes = 4000;
    spec.layers.push_back(l);
  }
  return spec;
}

ClusterSpec two_nodes_of_two() {
  ClusterSpec c;
  c.name = "2x2";
  c.devices.assign(4, DeviceSpec{1 << 30, 1.0, 0});
  c.devices[1].relative_speed = 2;
  c.devices_per_node = 2;
  c.intra_node = LinkSpec{100e9, 1000};
  c.inter_node = LinkSpec{10e9, 5000};
  c.comm_mode = CommMode::kBlocking;
  c.dispatch_overhead_ns = 42;
  return c;
}

TEST_CASE("a measured whole backward is B, the split parts stay I and W") {
  // Layer l1 states B = 3000/sample apart from its I + W = 10 + 4000/sample (split, the
  // backward walks the graph twice); l0 and l2 do not, so they count I + W in B.
  ModelSpec spec = three_layers();
  spec.layers[1].whole_backward = ScaledDuration{0, 3000};
  // Stage 1 holds l1 and l2, on device 2 (speed 1).
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto model = build_cost_model(spec, two_nodes_of_two(), partition, {0, 2}, 2, OptimizerKind::kSgd);
  REQUIRE(model.ok());
  const StageCost& s = model->stages[1];
  CHECK(s.backward_input_ns == (3000 + 4500) * 2);
  CHECK(s.backward_weight_ns == 20 + (1000 + 1500) * 2);
  CHECK(s.backward_ns == 3000 * 2 + (10 + 6000 * 2));
  CHECK(s.backward_ns < s.backward_input_ns + s.backward_weight_ns);
}

TEST_CASE("the first stage's split backward is all W: the model's input needs no gradient") {
  ModelSpec spec = three_layers();
  spec.layers[1].whole_backward = ScaledDuration{0, 3000};
  const Partition partition = *explicit_partition({0, 3}, 3);
  auto model = build_cost_model(spec, two_nodes_of_two(), partition, {0}, 2, OptimizerKind::kSgd);
  REQUIRE(model.ok());
  const StageCost& s = model->stages[0];
  CHECK(s.backward_ns == (10 + 2000 * 2) + 3000 * 2 + (10 + 6000 * 2));
  CHECK(s.backward_input_ns == 0);
  CHECK(s.backward_weight_ns == s.backward_ns);
}

TEST_CASE("stage costs are layer sums at the micro-batch size divided by device speed") {
  const ModelSpec spec = three_layers();
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  auto model = build_cost_model(spec, two_nodes_of_two(), partition, {0, 1}, 4, OptimizerKind::kMomentum);
  REQUIRE(model.ok());
  REQUIRE(model->stages.size() == 2);
  const StageCost& s0 = model->stages[0];
  CHECK(s0.forward_ns == 100 + 1000 * 4);
  CHECK(s0.backward_ns == 10 + (1500 + 500) * 4);  // I + W of l0
  CHECK(s0.backward_input_ns == 0);                 // the first stage: all W
  CHECK(s0.backward_weight_ns == s0.backward_ns);
  CHECK(s0.recompute_ns == s0.forward_ns);
  CHECK(s0.input_bytes == 7 * 4);
  CHECK(s0.output_bytes == 100 * 4);
  CHECK(s0.stash_bytes == 1 + 50 * 4);
  CHECK(s0.param_bytes == 4000);
  CHECK(s0.grad_bytes == 4000);
  CHECK(s0.optimizer_bytes == 4000);  // fp32 momentum: one fp32 value per parameter
  const StageCost& s1 = model->stages[1];  // device 1 runs twice as fast
  CHECK(s1.forward_ns == (200 + 5000 * 4) / 2);
  CHECK(s1.backward_input_ns == 7500 * 4 / 2);
  CHECK(s1.backward_weight_ns == (20 + 2500 * 4) / 2);
  CHECK(s1.input_bytes == 400);
  CHECK(s1.output_bytes == 1200);
  CHECK(s1.stash_bytes == 2 * (1 + 200));
  CHECK(model->microbatch_size == 4);
  CHECK(model->comm_mode == CommMode::kBlocking);
  CHECK(model->per_action_overhead_ns == 42);
  CHECK(model->num_devices == 2);
  CHECK(model->device_memory_bytes == std::vector<Bytes>{1 << 30, 1 << 30});
}

TEST_CASE("forwards without the graph sum per stage, the node's contention reaches each device") {
  ModelSpec spec = three_layers();
  spec.layers[2].forward_no_grad = ScaledDuration{0, 600};  // layer 1 states none: its forward counts
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  ClusterSpec cluster = two_nodes_of_two();
  cluster.contention_factor = 1.25;
  auto model = build_cost_model(spec, cluster, partition, {0, 1}, 4, OptimizerKind::kSgd);
  REQUIRE(model.ok());
  CHECK(model->stages[0].forward_no_grad_ns == 0);  // no layer of stage 0 has one
  CHECK(model->stages[1].forward_no_grad_ns == (100 + 2000 * 4 + 600 * 4) / 2);
  CHECK(model->contention_factor == std::vector<double>{1.25, 1.25});
  CHECK(model->contention_group == std::vector<int>{0, 0});
}

TEST_CASE("a CPU node's cores limit how many of its devices compute at once") {
  const ModelSpec spec = three_layers();
  const Partition partition = *explicit_partition({0, 1, 3}, 3);
  ClusterSpec cluster = two_nodes_of_two();
  auto unlimited = build_cost_model(spec, cluster, partition, {0, 2}, 4, OptimizerKind::kSgd);
  REQUIRE(unlimited.ok());
  CHECK(unlimited->compute_slots == 0);
  CHECK(unlimited->contention_group.empty());
  CHECK(unlimited->compute_slice_ns == 0);
  cluster.cores = 5;
  cluster.threads_per_device = 2;
  cluster.core_slice_ns = 3'000'000;
  auto limited = build_cost_model(spec, cluster, partition, {0, 2}, 4, OptimizerKind::kSgd);
  REQUIRE(limited.ok());
  CHECK(limited->compute_slots == 2);  // 5 cores / 2 threads
  CHECK(limited->compute_slice_ns == 3'000'000);
  CHECK(limited->contention_group == std::vector<int>{0, 0, 1});  // devices 0..2 on nodes of two
  CHECK(limited->contention_factor.empty());
  cluster.threads_per_device = 8;  // more threads than cores: still one at a time
  CHECK(cluster.compute_slots() == 1);
}

TEST_CASE("a CPU node's idle slowdown reaches the cost model") {
  ClusterSpec cluster = two_nodes_of_two();
  cluster.idle_slowdown = 1.25;
  cluster.idle_slowdown_after_ns = 5'000'000;
  auto model = build_cost_model(three_layers(), cluster, *explicit_partition({0, 1, 3}, 3), {0, 2}, 4,
                                OptimizerKind::kSgd);
  REQUIRE(model.ok());
  CHECK(model->idle_slowdown == 1.25);
  CHECK(model->idle_slowdown_after_ns == 5'000'000);
}

TEST_CASE("halving the micro-batch size rescales every per-sample cost") {
  const ModelSpec spec = *model_preset("gpt2-small");
  const ClusterSpec cluster = *cluster_preset("dgx-h100");
  const Partition partition = *uniform_partition(spec.num_layers(), 4);
  auto big = build_cost_model(spec, cluster, partition, {0, 1, 2, 3}, 8, OptimizerKind::kAdam);
  auto small = build_cost_model(spec, cluster, partition, {0, 1, 2, 3}, 4, OptimizerKind::kAdam);
  REQUIRE(big.ok());
  REQUIRE(small.ok());
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(big->stages[s].forward_ns == 2 * small->stages[s].forward_ns);  // GPT presets: no fixed part
    CHECK(big->stages[s].stash_bytes == 2 * small->stages[s].stash_bytes);
    CHECK(big->stages[s].output_bytes == 2 * small->stages[s].output_bytes);
    CHECK(big->stages[s].param_bytes == small->stages[s].param_bytes);
    CHECK(big->stages[s].optimizer_bytes == 6 * big->stages[s].param_bytes);  // bf16 Adam
  }
}

TEST_CASE("links: own link per intra-node pair, one shared egress per node") {
  const ModelSpec spec = three_layers();
  auto model = build_cost_model(spec, two_nodes_of_two(), *explicit_partition({0, 1, 2, 3}, 3), {0, 1, 3},
                                1, OptimizerKind::kSgd);
  REQUIRE(model.ok());
  CHECK(model->num_devices == 4);
  REQUIRE(model->link_of.size() == 16);
  const auto id = [&](int a, int b) { return model->link_of[static_cast<std::size_t>(a * 4 + b)]; };
  for (int d = 0; d < 4; ++d) CHECK(id(d, d) == -1);
  CHECK(id(0, 1) != id(1, 0));
  CHECK(id(2, 3) != id(3, 2));
  CHECK(id(0, 2) == id(0, 3));
  CHECK(id(0, 2) == id(1, 3));  // both leave node 0
  CHECK(id(2, 0) == id(3, 1));
  CHECK(id(2, 0) != id(0, 2));
  CHECK(model->links.size() == 4 + 2);
  CHECK(model->link(0, 1)->bandwidth_bytes_per_s == 100e9);
  CHECK(model->link(0, 1)->latency_ns == 1000);
  CHECK(model->link(1, 2)->bandwidth_bytes_per_s == 10e9);
  CHECK(model->link(1, 2)->latency_ns == 5000);
  CHECK(model->stages[2].optimizer_bytes == 0);
}

TEST_CASE("the cluster's overlapped-pass share reaches the cost model") {
  ClusterSpec cluster = two_nodes_of_two();
  cluster.overlapped_pass_share = 0.25;
  auto cost = build_cost_model(three_layers(), cluster, Partition{{0, 1, 3}}, {0, 1}, 1, OptimizerKind::kSgd);
  REQUIRE(cost.ok());
  CHECK(cost->overlapped_pass_share == 0.25);
}

TEST_CASE("builder input errors") {
  const ModelSpec spec = three_layers();
  const ClusterSpec cluster = two_nodes_of_two();
  const Partition two = *explicit_partition({0, 1, 3}, 3);
  CHECK_THAT(build_cost_model(spec, cluster, two, {0}, 1, OptimizerKind::kSgd).error().message,
             Catch::Contains("placement has 1 entries for 2 stages"));
  CHECK_THAT(build_cost_model(spec, cluster, two, {0, 4}, 1, OptimizerKind::kSgd).error().message,
             Catch::Contains("stage 1 is placed on device 4"));
  CHECK_THAT(build_cost_model(spec, cluster, two, {0, 1}, 0, OptimizerKind::kSgd).error().message,
             Catch::Contains("micro-batch size"));
  CHECK_THAT(build_cost_model(spec, cluster, Partition{{0, 1, 4}}, {0, 1}, 1, OptimizerKind::kSgd).error().message,
             Catch::Contains("partition does not fit model"));
  CHECK(*default_placement(3, cluster) == std::vector<int>{0, 1, 2});
  CHECK_THAT(default_placement(5, cluster).error().message, Catch::Contains("5 stages do not fit"));
}

TEST_CASE("optimizer state assumptions") {
  CHECK(optimizer_state_bytes(400, ParamDtype::kFp32, OptimizerKind::kAdam) == 800);
  CHECK(optimizer_state_bytes(400, ParamDtype::kFp32, OptimizerKind::kSgd) == 0);
  CHECK(optimizer_state_bytes(200, ParamDtype::kBf16, OptimizerKind::kAdam) == 1200);
  CHECK(optimizer_state_bytes(200, ParamDtype::kFp16, OptimizerKind::kSgd) == 400);
  CHECK(training_state_bytes(200, ParamDtype::kBf16, OptimizerKind::kAdam) == 1600);  // 16 bytes/param
  CHECK(*parse_optimizer("adam") == OptimizerKind::kAdam);
  CHECK_FALSE(parse_optimizer("lamb").ok());
}

TEST_CASE("tensor parallelism: each pass carries its layers' collectives on the node's link") {
  // Two layers split over tp 2: l0 all-reduces once forward, l1 twice forward and backward; each
  // buffer 1 MB per sample. On the 100 GB/s, 1 us intra link one all-reduce over 2 ranks is 2
  // ring steps of 500 KB: 2 x (1 us + 5 us) = 12 us per sample of buffer, here 2 samples: 2 x
  // (1 us + 10 us) = 22 us.
  ModelSpec whole = three_layers();
  whole.layers.pop_back();
  for (int i = 0; i < 2; ++i) {
    TensorParallelSplit split;
    split.forward_collectives = i + 1;
    split.backward_collectives = 2 * i;
    split.collective_bytes = ScaledBytes{0, 1'000'000};
    whole.layers[static_cast<std::size_t>(i)].tensor_parallel = split;
  }
  const ModelSpec rank = tensor_parallel_view(whole, 2, false).value();
  const ClusterSpec cluster = two_nodes_of_two();
  ParallelLayout layout;
  layout.tp = 2;
  layout.pp = 1;
  const Partition one_stage{{0, 2}};
  auto cost = build_cost_model(rank, cluster, one_stage, {0}, 2, OptimizerKind::kSgd, layout, {});
  REQUIRE(cost.ok());
  const StageCost& stage = cost->stages[0];
  constexpr Nanoseconds kOne = 2 * (1000 + 10'000);
  // Compute halves (fixed parts too), then 3 all-reduces forward and 2 backward.
  CHECK(stage.forward_ns == (100 + 2000) / 2 + (100 + 4000) / 2 + 3 * kOne);
  CHECK(stage.recompute_ns == stage.forward_ns);
  CHECK(stage.backward_ns == (10 + 1000 + 3000) / 2 + (10 + 2000 + 6000) / 2 + 2 * kOne);
  // The first stage computes no input gradient: the backward's collectives go to W with the rest.
  CHECK(stage.backward_input_ns == 0);
  CHECK(stage.backward_weight_ns == stage.backward_ns);
  // Overlapped with their layer's GEMMs, a pass pays max(compute, collectives) layer by layer:
  // l0 forward max(1050, 22 us), l1 max(2050, 44 us); l1's I max(3000, 44 us), l0 has none.
  const ModelSpec overlapped = tensor_parallel_view(whole, 2, false, true).value();
  auto hidden = build_cost_model(overlapped, cluster, one_stage, {0}, 2, OptimizerKind::kSgd, layout, {});
  REQUIRE(hidden.ok());
  CHECK(hidden->stages[0].forward_ns == kOne + 2 * kOne);
  CHECK(hidden->stages[0].backward_ns == (10 + 1000 + 3000) / 2 + (10 + 2000 + 6000) / 2 + (2 * kOne - 3000));
  // The layout and the model must agree on tp.
  CHECK_THAT(build_cost_model(whole, cluster, one_stage, {0}, 2, OptimizerKind::kSgd, layout, {}).error().message,
             Catch::Contains("costed for tensor parallelism 1, the layout has tp 2"));
  // A tensor-parallel link of its own (a measured all-reduce) carries the collectives instead of
  // the node's: 10 GB/s, 3 us: 2 x (3 us + 100 us) per all-reduce. The one-pipeline builder takes
  // tp from the model.
  ClusterSpec own = cluster;
  own.tensor_parallel_link = LinkSpec{1e10, 3000};
  auto linked = build_cost_model(rank, own, one_stage, {0}, 2, OptimizerKind::kSgd);
  REQUIRE(linked.ok());
  constexpr Nanoseconds kOwn = 2 * (3000 + 100'000);
  CHECK(linked->stages[0].forward_ns == (100 + 2000) / 2 + (100 + 4000) / 2 + 3 * kOwn);
  CHECK(linked->stages[0].backward_ns == (10 + 1000 + 3000) / 2 + (10 + 2000 + 6000) / 2 + 2 * kOwn);
}

}  // namespace
}  // namespace pipeworks::sim
