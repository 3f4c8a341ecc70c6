// Built-in cluster specs with their sources: this development machine (`cpu2`), DGX A100 nodes as
// Selene's (`dgx-a100`), DGX H100 and H200 nodes (`dgx-h100`, `dgx-h200`), and `multinode` (4 DGX
// H100 nodes by default); the DGX presets take a node count.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_presets.h"

namespace pipeworks::sim {

// NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): dense BF16 989 TFLOP/s (1,979 with
// sparsity), 80 GB HBM3, NVLink 900 GB/s total = 450 GB/s per direction.
inline constexpr double kH100PeakBf16FlopsPerS = 989e12;
// Assumption: large transformer training sustains ~40% of peak (model FLOPs utilization of the
// order reported for Megatron-LM); replace with a profiled number where one exists.
inline constexpr double kSustainedFraction = 0.4;
inline constexpr double kH100SustainedFlopsPerS = kH100PeakBf16FlopsPerS * kSustainedFraction;
inline constexpr double kNvlink4BytesPerSPerDirection = 450e9;
// Same datasheet: HBM3 3.35 TB/s (H100 SXM).
inline constexpr double kH100MemoryBytesPerS = 3.35e12;
// NVIDIA ConnectX-7 datasheet: 400 Gb/s NDR InfiniBand per port; a DGX H100 has 8 of them,
// one per GPU: 400e9 / 8 = 50 GB/s per direction.
inline constexpr double kNdrBytesPerSPerPort = 400e9 / 8;

// NVIDIA A100 datasheet (A100 SXM4 80GB; figures in published-runs/gpu_datasheets.csv): dense
// BF16/FP16 312 TFLOP/s, HBM2e 2.039 TB/s, NVLink 3 600 GB/s total = 300 GB/s per direction. Selene's
// DGX A100 nodes (Narayanan et al. 2021, sec. 5): one 200 Gb/s HDR InfiniBand HCA per GPU.
inline constexpr double kA100PeakBf16FlopsPerS = 312e12;
inline constexpr double kA100SustainedFlopsPerS = kA100PeakBf16FlopsPerS * kSustainedFraction;
inline constexpr double kA100MemoryBytesPerS = 2.039e12;
inline constexpr double kNvlink3BytesPerSPerDirection = 300e9;
inline constexpr double kHdrBytesPerSPerPort = 200e9 / 8;

// NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): the H100's dense BF16 989 TFLOP/s and NVLink 4,
// 141 GB HBM3e at 4.8 TB/s. (Not in published-runs/gpu_datasheets.csv, which covers A100 and H100.)
inline constexpr double kH200MemoryBytesPerS = 4.8e12;
inline constexpr std::int64_t kH200MemoryBytes = 141'000'000'000;

inline constexpr int kMaxPresetNodes = 1024;

struct ClusterPresetOptions {
  std::optional<int> nodes;  // dgx-a100, dgx-h100, dgx-h200 (default 1), multinode (default 4); at most kMaxPresetNodes
};

// Every cluster preset, in a stable order, with descriptions citing sources.
std::vector<PresetInfo> cluster_presets();

sched::Result<ClusterSpec> cluster_preset(std::string_view name,
                                          const ClusterPresetOptions& options = {});

}  // namespace pipeworks::sim
