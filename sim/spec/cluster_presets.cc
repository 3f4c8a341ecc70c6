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
    "one DGX H100: 8x H100 SXM 80 GB, NVLink 4 900 GB/s bidirectional = 450 GB/s per direction "
    "(NVIDIA H100 Tensor Core GPU datasheet); 395.6 TFLOP/s = 40% of the 989 TFLOP/s dense BF16 "
    "peak (assumed sustained fraction); HBM3 3.35 TB/s (same datasheet); 3 us link latency, 10 us "
    "dispatch (estimates)";
constexpr std::string_view kMultinode =
    "N DGX H100 nodes (default 4): intra-node as dgx-h100; between nodes 8x ConnectX-7 400 Gb/s "
    "NDR InfiniBand per node, one per GPU = 50 GB/s per direction (NVIDIA ConnectX-7 and DGX H100 "
    "datasheets), 5 us latency (estimate): each GPU sends off the node on its own 50 GB/s link";

ClusterSpec h100_nodes(std::string name, std::string_view description, int nodes) {
  ClusterSpec spec;
  spec.name = std::move(name);
  spec.description = std::string(description);
  spec.devices.assign(static_cast<std::size_t>(nodes * kGpusPerDgx),
                      DeviceSpec{80 * kGiB, 1.0, kH100SustainedFlopsPerS, kH100PeakBf16FlopsPerS, kH100MemoryBytesPerS});
  spec.devices_per_node = kGpusPerDgx;
  spec.intra_node = LinkSpec{kNvlink4BytesPerSPerDirection, 3'000};
  if (nodes > 1) {
    spec.inter_node = LinkSpec{kNdrBytesPerSPerPort, 5'000};
    spec.inter_node_links = kGpusPerDgx;  // one ConnectX-7 per GPU
  }
  spec.comm_mode = CommMode::kOverlap;
  spec.dispatch_overhead_ns = 10'000;
  return spec;
}

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

}  // namespace

std::vector<PresetInfo> cluster_presets() {
  return {{"cpu2", std::string(kCpu2)},
          {"dgx-h100", std::string(kDgx)},
          {"multinode", std::string(kMultinode)}};
}

sched::Result<ClusterSpec> cluster_preset(std::string_view name, const ClusterPresetOptions& options) {
  if (options.nodes && name != "multinode") {
    return error(fmt::format("option 'nodes' does not apply to cluster preset '{}'", name));
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
  if (name == "dgx-h100") return h100_nodes("dgx-h100", kDgx, 1);
  if (name == "multinode") {
    const int nodes = options.nodes.value_or(4);
    if (nodes < 1 || nodes > kMaxPresetNodes) {
      return error(fmt::format("nodes must be from 1 to {}, got {}", kMaxPresetNodes, nodes));
    }
    return h100_nodes("multinode", kMultinode, nodes);
  }
  return error(fmt::format("unknown cluster preset '{}' (available: cpu2, dgx-h100, multinode)", name));
}

}  // namespace pipeworks::sim
