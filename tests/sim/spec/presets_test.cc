// Model and cluster presets: published sizes, the formulas' exact values, and option handling.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/spec/cluster_presets.h"
#include "sim/spec/gpt_kernels.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/tensor_parallel.h"

namespace pipeworks::sim {
namespace {

TEST_CASE("GPT-3 175B has about 175e9 parameters") {
  const double count = static_cast<double>(gpt_parameter_count(kGpt3_175b));
  CHECK(std::fabs(count - 175e9) / 175e9 < 0.01);
  auto spec = model_preset("gpt3-175b");
  REQUIRE(spec.ok());
  CHECK(spec->num_layers() == 98);  // embedding + 96 blocks + head
  // The spec's bf16 bytes hold one more V*h copy (the head's) than the tied model.
  const double spec_params = static_cast<double>(spec->total_param_bytes()) / 2;
  CHECK(spec_params == count + 50257.0 * 12288);
  CHECK(std::fabs(spec_params - 175e9) / 175e9 < 0.01);
}

TEST_CASE("GPT-2 small has about 124e6 parameters") {
  const double count = static_cast<double>(gpt_parameter_count(kGpt2Small));
  CHECK(std::fabs(count - 124.4e6) / 124.4e6 < 0.01);
}

TEST_CASE("GPT block costs follow the closed forms") {
  PresetOptions options;
  options.flops_per_s = 1e12;  // 1 TFLOP/s: 1 ns per 1000 FLOPs
  options.layers = 2;
  auto spec = model_preset("gpt", options);
  REQUIRE(spec.ok());
  const double s = 1024, h = 768, a = 12, v = 50257;
  const LayerSpec& block = spec->layers[1];
  CHECK(block.name == "block0");
  CHECK(block.forward.per_sample_ns == std::llround((24 * s * h * h + 4 * s * s * h) / 1000));
  CHECK(block.backward_input.per_sample_ns == std::llround((24 * s * h * h + 8 * s * s * h) / 1000));
  CHECK(block.backward_weight.per_sample_ns == std::llround(24 * s * h * h / 1000));
  CHECK(block.param_bytes == 2 * (12 * 768 * 768 + 13 * 768));
  CHECK(block.stash_bytes.per_sample_bytes == std::llround(s * h * (34 + 5 * a * s / h)));
  CHECK(block.output_bytes.per_sample_bytes == 2 * 1024 * 768);
  CHECK(block.forward.fixed_ns == 0);
  const LayerSpec& head = spec->layers.back();
  CHECK(head.name == "lm_head");
  CHECK(head.forward.per_sample_ns == std::llround(2 * s * h * v / 1000));
  CHECK(spec->layers.front().param_bytes == 2 * (50257 + 1024) * 768);
  CHECK(spec->param_dtype == ParamDtype::kBf16);
}

TEST_CASE("a GPT block keeps, re-computes or fuses its attention core as asked") {
  PresetOptions options;
  options.flops_per_s = 1e12;  // 1 ns per 1000 FLOPs
  options.layers = 1;
  const double s = 1024, h = 768, a = 12;
  const LayerSpec stored = model_preset("gpt", options)->layers[1];
  options.attention = AttentionActivations::kSelectiveRecompute;
  const LayerSpec selective = model_preset("gpt", options)->layers[1];
  options.attention = AttentionActivations::kFlash;
  const LayerSpec flash = model_preset("gpt", options)->layers[1];
  // The forward and the weight gradients are the same; the core's s^2 bytes go, its FLOPs come back in I.
  CHECK(selective.forward == stored.forward);
  CHECK(flash.backward_weight == stored.backward_weight);
  CHECK(selective.stash_bytes.per_sample_bytes == std::llround(34 * s * h));
  CHECK(flash.stash_bytes.per_sample_bytes == std::llround(34 * s * h + 4 * a * s));
  CHECK(selective.backward_input.per_sample_ns == std::llround((24 * s * h * h + 12 * s * s * h) / 1000));
  CHECK(flash.backward_input.per_sample_ns == std::llround((24 * s * h * h + 10 * s * s * h) / 1000));
  // Tensor parallelism keeps 10 s h of whatever the block stashes on every rank.
  CHECK(selective.tensor_parallel->replicated_stash_fraction == 10.0 / 34);
  CHECK(parse_attention("flash").value() == AttentionActivations::kFlash);
  CHECK_THAT(parse_attention("fused").error().message, Catch::Contains("expected stored, selective-recompute or flash"));
  PresetOptions uniform;
  uniform.attention = AttentionActivations::kFlash;
  CHECK_THAT(model_preset("uniform", uniform).error().message, Catch::Contains("option 'attention' does not apply"));
}

TEST_CASE("amoeba is deterministic and strongly uneven") {
  auto a = model_preset("amoeba");
  auto b = model_preset("amoeba");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK(a->num_layers() == 18 + 4);
  Nanoseconds lo = a->layers[1].forward.per_sample_ns, hi = lo;
  for (const LayerSpec& l : a->layers) {
    if (l.name.rfind("normal", 0) != 0 && l.name.rfind("reduction", 0) != 0) continue;
    lo = std::min(lo, l.forward.per_sample_ns);
    hi = std::max(hi, l.forward.per_sample_ns);
  }
  CHECK(hi >= 4 * lo);
  CHECK(a->layers[7].name == "reduction0");
}

TEST_CASE("uniform preset takes its options") {
  PresetOptions options;
  options.layers = 3;
  options.forward_ns = 10;
  options.backward_ns = 20;
  auto spec = model_preset("uniform", options);
  REQUIRE(spec.ok());
  REQUIRE(spec->num_layers() == 3);
  CHECK(spec->layers[2].forward == ScaledDuration{0, 10});
  CHECK(spec->layers[2].backward() == ScaledDuration{0, 20});
}

TEST_CASE("preset errors name the problem") {
  CHECK_THAT(model_preset("gpt5").error().message, Catch::Contains("unknown model preset 'gpt5'"));
  PresetOptions options;
  options.hidden = 100;
  CHECK(model_preset("uniform", options).error().message == "option 'hidden' does not apply to model preset 'uniform'");
  options.heads = 3;
  CHECK_THAT(model_preset("gpt", options).error().message, Catch::Contains("heads (3) must divide hidden (100)"));
  PresetOptions zero;
  zero.layers = 0;
  CHECK_FALSE(model_preset("amoeba", zero).ok());
  CHECK_THAT(cluster_preset("tpu").error().message, Catch::Contains("unknown cluster preset 'tpu'"));
  ClusterPresetOptions nodes;
  nodes.nodes = 2;
  CHECK_FALSE(cluster_preset("cpu2", nodes).ok());
}

TEST_CASE("a preset runs on the cluster's GPU cost model, else at its rate, unless told otherwise") {
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  PresetOptions on_a100;
  on_a100.gpu = gpu_kernel_model("a100-sxm-80gb").value();
  CHECK(model_preset_on("gpt3-1.3b", {}, a100).value() == model_preset("gpt3-1.3b", on_a100).value());
  PresetOptions rate;
  rate.flops_per_s = 312e12 * 0.4;
  CHECK(model_preset_on("amoeba", {}, a100).value() == model_preset("amoeba", rate).value());
  ClusterSpec flops_only = a100;
  for (DeviceSpec& d : flops_only.devices) d.gpu.reset();
  CHECK(model_preset_on("gpt3-1.3b", {}, flops_only).value() == model_preset("gpt3-1.3b", rate).value());
  // An explicit rate wins; a cluster that states none leaves the preset's default.
  rate.flops_per_s = 1e14;
  CHECK(model_preset_on("gpt3-1.3b", rate, a100).value() == model_preset("gpt3-1.3b", rate).value());
  ClusterSpec silent = flops_only;
  for (DeviceSpec& d : silent.devices) d.flops_per_s = 0;
  CHECK(model_preset_on("gpt3-1.3b", {}, silent).value() == model_preset("gpt3-1.3b").value());
  // A GPU given wins over the cluster's, and over its FLOP rate.
  PresetOptions on_h200;
  on_h200.gpu = gpu_kernel_model("h200-sxm").value();
  CHECK(model_preset_on("gpt3-1.3b", on_h200, a100).value() == model_preset("gpt3-1.3b", on_h200).value());
  CHECK(model_preset_on("gpt3-1.3b", on_h200, flops_only).value() == model_preset("gpt3-1.3b", on_h200).value());
  on_a100.flops_per_s = 1e14;
  CHECK(model_preset("gpt3-1.3b", on_a100).error().message ==
        "option 'gpu' excludes option 'flops_per_s': a GPU cost model times kernels itself");
  // The uniform preset has no FLOPs: nothing to apply.
  CHECK(model_preset_on("uniform", {}, a100).value() == model_preset("uniform").value());
}

TEST_CASE("a GPT on a GPU cost model: tables of micro-batch sizes, a rank's own for each tp dividing the heads") {
  PresetOptions options;
  options.gpu = gpu_kernel_model("a100-sxm-80gb").value();
  const ModelSpec gpt = model_preset("gpt3-1.3b", options).value();  // 16 heads
  REQUIRE(check_model_spec(gpt).ok());
  const LayerSpec& block = gpt.layers[1];
  std::vector<int> sizes;
  for (const SizePoint& p : block.forward.measured) sizes.push_back(p.size);
  CHECK(sizes == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024});
  const PassKernelNs at_4 = gpt_block_kernel_ns(kGpt3Xl, 4, 1, AttentionActivations::kStored, *options.gpu);
  CHECK(block.forward.at(4).value() == std::llround(at_4.forward));
  CHECK(block.backward_input.at(4).value() == std::llround(at_4.input_grad));
  // Beyond the table: the last two sizes' slope.
  CHECK(block.forward.at(1025).value() == block.forward.measured.back().value + block.forward.per_sample_ns);
  std::vector<int> tps;
  for (const auto& r : block.tensor_parallel->rank_times) tps.push_back(r.tp);
  CHECK(tps == std::vector<int>{2, 4, 8, 16});
  CHECK(gpt.layers[2].forward == block.forward);
  CHECK(gpt.layers[2].name == "block1");
  // A rank of 8 runs narrower GEMMs at lower efficiency: more than an eighth of the whole.
  const auto rank = tensor_parallel_view(gpt, 8, false).value();
  CHECK(rank.layers[1].forward == block.tensor_parallel->rank_times_for(8)->forward);
  CHECK(rank.layers[1].forward.at(1).value() > block.forward.at(1).value() / 8);
  // Memory is the FLOP preset's: the GPU model times kernels only.
  const ModelSpec flops = model_preset("gpt3-1.3b").value();
  CHECK(block.stash_bytes == flops.layers[1].stash_bytes);
  CHECK(gpt.flops_per_sample == flops.flops_per_sample);
}

TEST_CASE("cluster presets carry the datasheet numbers") {
  auto dgx = cluster_preset("dgx-h100");
  REQUIRE(dgx.ok());
  CHECK(dgx->num_devices() == 8);
  CHECK(dgx->num_nodes() == 1);
  CHECK(dgx->devices[0].memory_bytes == 80LL << 30);
  CHECK(dgx->intra_node.bandwidth_bytes_per_s == 450e9);
  CHECK(dgx->devices[0].flops_per_s == 989e12 * 0.4);
  ClusterPresetOptions options;
  options.nodes = 2;
  auto multi = cluster_preset("multinode", options);
  REQUIRE(multi.ok());
  CHECK(multi->num_devices() == 16);
  CHECK(multi->inter_node.bandwidth_bytes_per_s == 50e9);
  CHECK(cluster_preset("multinode")->num_devices() == 32);
  // dgx-h100 takes a node count too: the same nodes as multinode.
  auto two_h100 = cluster_preset("dgx-h100", options);
  REQUIRE(two_h100.ok());
  CHECK(two_h100->devices == multi->devices);
  CHECK(two_h100->inter_node == multi->inter_node);
  CHECK(two_h100->inter_node_links == 8);
  // Selene's DGX A100: 312 TFLOP/s dense BF16, NVLink 3 at 300 GB/s a direction, 200 Gb/s HDR a GPU.
  auto a100 = cluster_preset("dgx-a100", options);
  REQUIRE(a100.ok());
  CHECK(a100->num_devices() == 16);
  CHECK(a100->devices[0].peak_flops_per_s == 312e12);
  CHECK(a100->devices[0].flops_per_s == 312e12 * 0.4);
  CHECK(a100->devices[0].memory_bandwidth_bytes_per_s == 2.039e12);
  CHECK(a100->intra_node.bandwidth_bytes_per_s == 300e9);
  CHECK(a100->inter_node.bandwidth_bytes_per_s == 25e9);
  CHECK(cluster_preset("dgx-a100")->num_nodes() == 1);
  auto h200 = cluster_preset("dgx-h200").value();
  CHECK(h200.devices[0].memory_bytes == 141'000'000'000);
  CHECK(h200.devices[0].memory_bandwidth_bytes_per_s == 4.8e12);
  CHECK(h200.devices[0].peak_flops_per_s == 989e12);
  options.nodes = 0;
  CHECK_THAT(cluster_preset("dgx-a100", options).error().message, Catch::Contains("nodes must be from 1 to 1024"));
  auto cpu = cluster_preset("cpu2");
  REQUIRE(cpu.ok());
  CHECK(cpu->num_devices() == 2);
  CHECK_THAT(cpu->description, Catch::Contains("ESTIMATES"));
}

}  // namespace
}  // namespace pipeworks::sim
