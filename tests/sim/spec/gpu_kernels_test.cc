// The GPU cost model (sim/spec/gpu_kernels.h, gpt_kernels.h): tile and wave quantization, the
// host floor, the data files, and a GPT block's kernels against Megatron's FLOP formula.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/spec/gpt_kernels.h"
#include "sim/spec/gpu_kernels.h"

namespace pipeworks::sim {
namespace {

// 100 TFLOP/s, 1 TB/s, 4 SMs of 64 x 64 tiles, nothing lost, no host time.
GpuKernelModel ideal_gpu() {
  GpuKernelModel gpu;
  gpu.name = "ideal";
  gpu.peak_flops_per_s = 1e14;
  gpu.memory_bytes_per_s = 1e12;
  gpu.multiprocessors = 4;
  gpu.tile_rows = 64;
  gpu.tile_cols = 64;
  return gpu;
}

TEST_CASE("gpu kernels: a GEMM's efficiency counts its tiles, its waves and its inner size", "[gpu_kernels]") {
  GpuKernelModel gpu = ideal_gpu();
  CHECK(gemm_efficiency(gpu, GemmShape{128, 128, 4096}) == 1.0);  // 4 tiles, one full wave
  CHECK(gemm_efficiency(gpu, GemmShape{128, 192, 4096}) == 0.75);  // 6 tiles in 2 waves of 4
  CHECK(gemm_efficiency(gpu, GemmShape{64, 64, 4096, 3}) == 0.75);  // a batch of 3 tiles in one wave of 4
  gpu.gemm_efficiency = 0.8;
  gpu.gemm_k_half = 4096;
  CHECK(gemm_efficiency(gpu, GemmShape{128, 128, 4096}) == Approx(0.4));
  // 2 x 128 x 128 x 4096 FLOPs at 40% of 1e14: 3355.4432 ns; its 2.19 MB at 1 TB/s take less.
  CHECK(gemm_ns(gpu, GemmShape{128, 128, 4096}) == Approx(3355.4432));
}

TEST_CASE("gpu kernels: memory-bound kernels stream at the memory's pace", "[gpu_kernels]") {
  GpuKernelModel gpu = ideal_gpu();
  gpu.memory_efficiency = 0.5;
  CHECK(streaming_ns(gpu, 1e6) == Approx(2000));  // 1 MB at half of 1 TB/s
  // A GEMM that reads more than it computes runs at the memory's pace: 64 x 64 x 8 reads 2 x
  // (512 + 512 + 4096) bytes, 20.48 ns at 0.5 TB/s; its 65536 FLOPs take 0.655 ns.
  CHECK(gemm_ns(gpu, GemmShape{64, 64, 8}) == Approx(20.48));
  CHECK(flash_attention_ns(gpu, 1e9, false) == Approx(10000));  // 1 GFLOP at 100% of 1e14
}

TEST_CASE("gpu kernels: the GPU waits for the host to issue short kernels, long ones hide it", "[gpu_kernels]") {
  // host  |h1|h2|h3|                 |h1|h2|h3|
  // GPU      |====k1====|=k2=|k3|        |k1|  |k2|  |k3|
  KernelStream gpu_bound(20);
  for (const double ns : {100.0, 40.0, 10.0}) gpu_bound.run(ns);
  CHECK(gpu_bound.elapsed_ns() == 170);  // 20 + 100 + 40 + 10
  KernelStream host_bound(20);
  for (int i = 0; i < 3; ++i) host_bound.run(5);
  CHECK(host_bound.elapsed_ns() == 65);  // the third issued at 60, done at 65
  KernelStream free_host(0);
  free_host.run(7);
  free_host.run(3);
  CHECK(free_host.elapsed_ns() == 10);
}

TEST_CASE("gpu kernels: a GPT block's kernels do Megatron's FLOPs, 1/t of them on a rank of t", "[gpu_kernels]") {
  GpuKernelModel gpu = ideal_gpu();
  gpu.memory_bytes_per_s = 1e30;  // streaming free: only the GEMMs' FLOPs are left
  gpu.multiprocessors = 1;
  gpu.tile_rows = gpu.tile_cols = 1;  // every GEMM fills its waves
  const GptConfig c{2, 1024, 16, 512, 1000};
  const double b = 2, s = 512, h = 1024;
  for (const int tp : {1, 4}) {
    const PassKernelNs ns = gpt_block_kernel_ns(c, 2, tp, AttentionActivations::kStored, gpu);
    // Narayanan et al. 2021 sec. 5.1: forward 24 b s h^2 + 4 b s^2 h; input gradient 24 b s h^2
    // + 8 b s^2 h; weight gradient 24 b s h^2.
    CHECK(ns.forward == Approx((24 * b * s * h * h + 4 * b * s * s * h) / tp / 1e14 * 1e9));
    CHECK(ns.input_grad == Approx((24 * b * s * h * h + 8 * b * s * s * h) / tp / 1e14 * 1e9));
    CHECK(ns.weight_grad == Approx(24 * b * s * h * h / tp / 1e14 * 1e9));
  }
  const PassKernelNs flash = gpt_block_kernel_ns(c, 2, 1, AttentionActivations::kFlash, gpu);
  CHECK(flash.input_grad == Approx((24 * b * s * h * h + 10 * b * s * s * h) / 1e14 * 1e9));
  const PassKernelNs selective = gpt_block_kernel_ns(c, 2, 1, AttentionActivations::kSelectiveRecompute, gpu);
  CHECK(selective.input_grad == Approx((24 * b * s * h * h + 12 * b * s * s * h) / 1e14 * 1e9));
  const PassKernelNs head = gpt_head_kernel_ns(c, 2, 1, gpu);
  CHECK(head.forward == Approx(2 * b * s * h * 1000 / 1e14 * 1e9));
  CHECK(head.weight_grad == Approx(2 * b * s * h * 1000 / 1e14 * 1e9));
}

TEST_CASE("gpu kernels: the built-in data files load, and a model written reads back equal", "[gpu_kernels]") {
  const auto names = gpu_kernel_model_names();
  CHECK(names == std::vector<std::string>{"a100-sxm-80gb", "h100-sxm", "h200-sxm"});
  for (const std::string& name : names) {
    const auto gpu = gpu_kernel_model(name);
    REQUIRE(gpu.ok());
    CHECK(gpu->name == name);
    CHECK_FALSE(gpu->source.empty());
    const auto again = parse_gpu_kernel_model(gpu_kernel_model_to_json(*gpu), "again");
    REQUIRE(again.ok());
    CHECK(*again == *gpu);
  }
  const auto a100 = gpu_kernel_model("a100-sxm-80gb").value();
  CHECK(a100.peak_flops_per_s == 312e12);
  CHECK(a100.memory_bytes_per_s == 2.039e12);
  CHECK(a100.multiprocessors == 108);
  CHECK(gpu_kernel_model("h200-sxm")->memory_bytes_per_s == 4.8e12);
}

TEST_CASE("gpu kernels: a bad name or file says what is wrong", "[gpu_kernels]") {
  const auto unknown = gpu_kernel_model("a100");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "unknown GPU 'a100' (built-in GPU cost models: a100-sxm-80gb, h100-sxm, h200-sxm)");
  CHECK_FALSE(gpu_kernel_model_named_or_file("/no/such/gpu.json").ok());
  std::string text = gpu_kernel_model_to_json(ideal_gpu());
  const auto over = text.find("\"gemm_efficiency\": 1.0");
  REQUIRE(over != std::string::npos);
  text.replace(over, 22, "\"gemm_efficiency\": 1.5");
  const auto bad = parse_gpu_kernel_model(text, "mine.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "mine.json: /gemm_efficiency: 1.5: must be at most 1");
  std::string slow_host = gpu_kernel_model_to_json(ideal_gpu());
  slow_host.replace(slow_host.find("\"host_per_kernel_ns\": 0"), 23, "\"host_per_kernel_ns\": 2000000000");
  CHECK(parse_gpu_kernel_model(slow_host, "slow.json").error().message == "slow.json: /host_per_kernel: must be at most 1s");
  const auto typo = parse_gpu_kernel_model(R"({"name": "x", "peak_flops": 1})", "typo.json");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message.find("peak_flops") != std::string::npos);
}

}  // namespace
}  // namespace pipeworks::sim
