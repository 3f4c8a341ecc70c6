// The cluster presets; every number either cites its datasheet or says it is an estimate.
#include "sim/spec/cluster_presets.h"

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

constexpr Bytes kGiB = 1024LL * 1024 * 1024;
constexpr int kGpusPerDgx = 8;

constexpr std::string_view kCpu2 =
    "this 2-core machine: 2 worker threads sharing 24 GiB (12 GiB each), in-process tensor "
    "hand-off. ESTIMATES to be replaced by `pipeworks profile`: 50 GFLOP/s per worker (one AVX2 "
    "core, ~half of peak), hand-off 8 GB/s (single-core memcpy) + 30 us (queue wake-up), 20 us "
    "per action dispatch";
constexpr std::string_view kDgx =
    "N DGX H100 nodes (default 1): 8x H100 SXM 80 GB, NVLink 4 900 GB/s bidirectional = 450 GB/s per direction "
    "(NVIDIA H100 Tensor Core GPU datasheet); 395.6 TFLOP/s = 40% of the 989 TFLOP/s dense BF16 "
    "peak (assumed sustained fraction); HBM3 3.35 TB/s (same datasheet); 3 us link latency, 10 us "
    "dispatch (estimates); between nodes as multinode";
constexpr std::string_view kMultinode =
    "N DGX H100 nodes (default 4): intra-node as dgx-h100; between nodes 8x ConnectX-7 400 Gb/s "
    "NDR InfiniBand per node, one per GPU = 50 GB/s per direction (NVIDIA ConnectX-7 and DGX H100 "
    "datasheets), 5 us latency (estimate): each GPU sends off the node on its own 50 GB/s link";

constexpr std::string_view kDgxA100 =
    "N DGX A100 nodes as Selene's (default 1): 8x A100 SXM4 80 GB, NVLink 3 600 GB/s bidirectional = "
    "300 GB/s per direction, HBM2e 2.039 TB/s (NVIDIA A100 datasheet); 124.8 TFLOP/s = 40% of the 312 "
    "TFLOP/s dense BF16 peak (assumed sustained fraction); between nodes one 200 Gb/s HDR InfiniBand "
    "HCA per GPU = 25 GB/s per direction (Narayanan et al. 2021, sec. 5); 3 us NVLink and 5 us "
    "InfiniBand latency, 10 us dispatch (estimates)";

// One DGX generation: the GPU and the node's links.
struct DgxNode {
  DeviceSpec gpu;
  std::string_view kernels;   // the GPU's cost model (sim/spec/gpu_kernels/<kernels>.json)
  double nvlink_bytes_per_s;  // per direction, per GPU
  double nic_bytes_per_s;     // per direction, one NIC per GPU
};

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

sched::Result<ClusterSpec> dgx_nodes(std::string name, std::string_view description, const DgxNode& node, int nodes) {
  ClusterSpec spec;
  spec.name = std::move(name);
  spec.description = fmt::format("{}; GPT presets timed kernel by kernel on sim/spec/gpu_kernels/{}.json", description,
                                 node.kernels);
  DeviceSpec gpu = node.gpu;
  auto kernels = gpu_kernel_model(node.kernels);
  if (!kernels) return kernels.error();
  gpu.gpu = *kernels;
  spec.devices.assign(static_cast<std::size_t>(nodes * kGpusPerDgx), gpu);
  spec.devices_per_node = kGpusPerDgx;
  spec.intra_node = LinkSpec{node.nvlink_bytes_per_s, 3'000};
  if (nodes > 1) {
    spec.inter_node = LinkSpec{node.nic_bytes_per_s, 5'000};
    spec.inter_node_links = kGpusPerDgx;  // one NIC per GPU
  }
  spec.comm_mode = CommMode::kOverlap;
  spec.dispatch_overhead_ns = 10'000;
  return spec;
}

const DgxNode kDgxH100Node{DeviceSpec{80 * kGiB, 1.0, kH100SustainedFlopsPerS, kH100PeakBf16FlopsPerS, kH100MemoryBytesPerS},
                           "h100-sxm", kNvlink4BytesPerSPerDirection, kNdrBytesPerSPerPort};
constexpr std::string_view kDgxH200 =
    "N DGX H200 nodes (default 1): 8x H200 SXM 141 GB HBM3e at 4.8 TB/s, dense BF16 and NVLink 4 as the "
    "H100's (NVIDIA H200 Tensor Core GPU datasheet); 395.6 TFLOP/s sustained (40%, assumed); between nodes "
    "one 400 Gb/s NDR ConnectX-7 per GPU as multinode; latencies and dispatch as dgx-h100 (estimates)";
const DgxNode kDgxH200Node{DeviceSpec{kH200MemoryBytes, 1.0, kH100SustainedFlopsPerS, kH100PeakBf16FlopsPerS, kH200MemoryBytesPerS},
                           "h200-sxm", kNvlink4BytesPerSPerDirection, kNdrBytesPerSPerPort};
const DgxNode kDgxA100Node{DeviceSpec{80 * kGiB, 1.0, kA100SustainedFlopsPerS, kA100PeakBf16FlopsPerS, kA100MemoryBytesPerS},
                           "a100-sxm-80gb", kNvlink3BytesPerSPerDirection, kHdrBytesPerSPerPort};

}  // namespace

std::vector<PresetInfo> cluster_presets() {
  return {{"cpu2", std::string(kCpu2)},
          {"dgx-a100", std::string(kDgxA100)},
          {"dgx-h100", std::string(kDgx)},
          {"dgx-h200", std::string(kDgxH200)},
          {"multinode", std::string(kMultinode)}};
}

sched::Result<ClusterSpec> cluster_preset(std::string_view name, const ClusterPresetOptions& options) {
  if (options.nodes && name == "cpu2") {
    return error(fmt::format("option 'nodes' does not apply to cluster preset '{}'", name));
  }
  if (options.nodes && (*options.nodes < 1 || *options.nodes > kMaxPresetNodes)) {
    return error(fmt::format("nodes must be from 1 to {}, got {}", kMaxPresetNodes, *options.nodes));
  }
  if (name == "cpu2") {
    ClusterSpec spec;
    spec.name = "cpu2";
    spec.description = std::string(kCpu2);
    spec.devices.assign(2, DeviceSpec{12 * kGiB, 1.0, 50e9});
    spec.devices_per_node = 2;
    spec.intra_node = LinkSpec{8e9, 30'000};
    spec.comm_mode = CommMode::kOverlap;
    spec.dispatch_overhead_ns = 20'000;
    return spec;
  }
  if (name == "dgx-a100") return dgx_nodes("dgx-a100", kDgxA100, kDgxA100Node, options.nodes.value_or(1));
  if (name == "dgx-h100") return dgx_nodes("dgx-h100", kDgx, kDgxH100Node, options.nodes.value_or(1));
  if (name == "dgx-h200") return dgx_nodes("dgx-h200", kDgxH200, kDgxH200Node, options.nodes.value_or(1));
  if (name == "multinode") return dgx_nodes("multinode", kMultinode, kDgxH100Node, options.nodes.value_or(4));
  return error(fmt::format("unknown cluster preset '{}' (available: cpu2, dgx-a100, dgx-h100, dgx-h200, multinode)", name));
}

}  // namespace pipeworks::sim
