// The GPU cost model: a kernel's time from its FLOPs and bytes with an efficiency that depends on
// its shape, as the GPT presets time a block op by op (gpt_kernels.h). Each GPU's constants live
// in a data file, sim/spec/gpu_kernels/<name>.json, with the origin of every figure written there;
// the build compiles the files into the binary, and a user's own file loads the same way.
//
// A GEMM of an m x n output with inner size k (batch of them) on a GPU of S multiprocessors:
//
//   tiles   = ceil(m / tile_rows) ceil(n / tile_cols) batch     one thread block each
//   waves   = ceil(tiles / S)                                   the last wave may run part-full
//   eff     = gemm_efficiency x tiles / (waves S) x k / (k + gemm_k_half)
//   time    = max(2 m n k batch / (peak eff), bytes moved / (HBM bandwidth memory_efficiency))
//
// (the tile and wave quantization of NVIDIA's "Matrix Multiplication Background" guide; the k term
// is a tile's prologue and epilogue against its main loop). A streaming kernel (layer norm,
// softmax, dropout, GeLU, adds) takes bytes / (HBM bandwidth memory_efficiency). A fused
// attention kernel (FlashAttention) runs its FLOPs at the efficiency its authors measured.
//
// The framework's CPU issues the kernels of a pass one after another, host_ns_per_kernel each
// (Python, autograd, the launch); the GPU runs each once it is issued and the one before it has
// ended (KernelStream). Long kernels hide the host; a run of short ones waits for it, which is why
// a small micro-batch costs about what one twice its size does:
//
//   host  |h1|h2|h3|h4|             |h1|h2|h3|h4|
//   GPU      |==k1==|==k2==|k3|k4|      |k1|   |k2|k3|k4|     (left: GPU-bound, right: host-bound)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"

namespace pipeworks::sim {

struct GpuKernelModel {
  std::string name;    // "a100-sxm-80gb"
  std::string source;  // the origin of the figures, one paragraph
  double peak_flops_per_s = 0;     // dense bf16/fp16 tensor-core peak
  double memory_bytes_per_s = 0;   // HBM bandwidth
  int multiprocessors = 1;         // SMs: one GEMM tile each per wave
  int tile_rows = 128;             // a thread block's output tile
  int tile_cols = 128;
  double gemm_efficiency = 1;      // of peak: a full wave of tiles with a long k, in (0, 1]
  double gemm_k_half = 0;          // k at which the k term halves the efficiency, >= 0
  double memory_efficiency = 1;    // of HBM bandwidth reached by streaming kernels, in (0, 1]
  double flash_forward_efficiency = 1;   // of peak, a fused attention forward, in (0, 1]
  double flash_backward_efficiency = 1;  // and its backward
  double host_ns_per_kernel = 0;   // the framework's CPU time to issue one kernel, >= 0
  friend bool operator==(const GpuKernelModel&, const GpuKernelModel&) = default;
};

// An m x n output with inner size k, `batch` times (a batched GEMM); bf16 operands.
struct GemmShape {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  std::int64_t batch = 1;
};

// Each kernel's time on the GPU in ns (see the drawing above).
double gemm_ns(const GpuKernelModel& gpu, const GemmShape& shape);
double streaming_ns(const GpuKernelModel& gpu, double bytes);
double flash_attention_ns(const GpuKernelModel& gpu, double flops, bool backward);

// One pass's kernels in the order the host issues them; elapsed_ns() is when the GPU ends the
// last (host and GPU start together).
class KernelStream {
 public:
  explicit KernelStream(double host_ns_per_kernel) : host_ns_per_kernel_(host_ns_per_kernel) {}
  void run(double gpu_ns) {
    host_ns_ += host_ns_per_kernel_;
    gpu_ns_ = (gpu_ns_ > host_ns_ ? gpu_ns_ : host_ns_) + gpu_ns;
  }
  double elapsed_ns() const { return gpu_ns_; }

 private:
  double host_ns_per_kernel_;
  double host_ns_ = 0;  // when the host has issued the kernels so far
  double gpu_ns_ = 0;   // when the GPU ends them
};

// The GEMM's efficiency (fraction of peak) before the memory bound and the host floor.
double gemm_efficiency(const GpuKernelModel& gpu, const GemmShape& shape);

// The GPUs with a built-in data file, in a stable order, and one of them by name (an error lists
// the names).
std::vector<std::string> gpu_kernel_model_names();
sched::Result<GpuKernelModel> gpu_kernel_model(std::string_view name);

// A built-in name, else the path of a data file (a user's own GPU).
sched::Result<GpuKernelModel> gpu_kernel_model_named_or_file(const std::string& name_or_path);

// A data file's text (the format of sim/spec/gpu_kernels/*.json; docs/gpu_cost_model.md);
// errors name `source` and the field.
sched::Result<GpuKernelModel> parse_gpu_kernel_model(std::string_view json_text, std::string_view source);
// The model as such a file (without per-field sources), which parse_gpu_kernel_model reads back equal.
std::string gpu_kernel_model_to_json(const GpuKernelModel& gpu);

}  // namespace pipeworks::sim
