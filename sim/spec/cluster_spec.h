// The hardware a plan runs on: devices (memory, relative speed, FLOP/s), a two-level topology
// (devices grouped into nodes; one link kind inside a node, one between nodes), the comm mode
// and a per-action dispatch overhead. JSON form documented in docs/model_spec.md.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sim/spec/comm_mode.h"
#include "sim/spec/gpu_kernels.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {

struct DeviceSpec {
  Bytes memory_bytes = 0;     // capacity; 0 = unknown / unlimited
  double relative_speed = 1;  // > 0; stage times from the model spec are divided by it
  double flops_per_s = 0;     // sustained FLOP/s (for presets computed from FLOPs); 0 = unknown
  double peak_flops_per_s = 0;  // the datasheet's peak, for model FLOPs utilization; 0 = unknown
  // Memory bandwidth, for memory-bound work (the optimizer step); 0 = unknown: not timed.
  double memory_bandwidth_bytes_per_s = 0;
  // The GPU's kernel cost model (gpu_kernels.h), by which model presets time a GPT op by op; none:
  // they use flops_per_s. JSON "gpu": a built-in name ("a100-sxm-80gb") or a data file's object.
  std::optional<GpuKernelModel> gpu{};
  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // one direction, > 0
  Nanoseconds latency_ns = 0;
  // What a send costs its sender before the data leaves (LogP's o): the sender's stream is held
  // that long, and the transfer's latency counts from its end. 0: posting a send is free.
  Nanoseconds send_overhead_ns = 0;
  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

// The most cores (and threads per device) a cluster spec may name.
inline constexpr int kMaxCores = 65536;

struct ClusterSpec {
  std::string name;
  std::string description;
  std::vector<DeviceSpec> devices;
  int devices_per_node = 1;  // divides devices.size(); device d is on node d / devices_per_node
  LinkSpec intra_node;       // between two devices of one node (each ordered pair its own link)
  LinkSpec inter_node;       // leaving a node: each of its inter_node_links egress links
  // Egress links a node has (NICs); device d of a node sends on link d % inter_node_links, shared
  // with the node's other devices on that link. DGX H100: 8, one per GPU.
  int inter_node_links = 1;
  // The link a tensor-parallel group's collectives run on (sim/engine/collectives.h's rings);
  // none: intra_node, as on a GPU node where the group shares the node's NVLink. A run whose
  // all-reduce was measured apart from its hand-off (`run --distributed --predict --tp`) states it.
  std::optional<LinkSpec> tensor_parallel_link;
  CommMode comm_mode = CommMode::kOverlap;
  Nanoseconds dispatch_overhead_ns = 0;  // added to every compute action
  // Devices of one node that compute at the same time each run up to this factor slower (CPU
  // workers sharing cores, caches and memory bandwidth); 1: independent devices (GPUs). The
  // simulator applies it to the overlapping share only (contention.h).
  double contention_factor = 1;
  // A CPU node's cores, and the cores each device's worker computes on (its intra-op threads):
  // at most cores / threads_per_device (at least 1) devices of a node compute at once, the
  // others wait for one of them (CostModel::compute_slots). 0 cores: no limit (GPUs).
  int cores = 0;
  int threads_per_device = 1;
  // With more devices than compute slots: how long a device that computes back to back keeps
  // its core while another waits for one (the OS scheduler's time slice; CostModel::
  // compute_slice_ns). 0: a freed core goes at once to the device that waited longest.
  Nanoseconds core_slice_ns = 0;
  // A compute action that starts after its device idled runs slower: while a CPU worker waits,
  // its working set leaves the caches (on a VM, the halted vCPU's). After an idle of g it takes
  // (idle_slowdown - 1) x min(1, g / idle_slowdown_after) more of its time (sim::idle_extra_ns).
  // 1: no slowdown (GPUs, whose queued kernels do not idle so).
  double idle_slowdown = 1;
  Nanoseconds idle_slowdown_after_ns = 0;
  // A schedule's overlapped F and B pairs (OVERLAP_F_B: DualPipeV's forward of one stage beside the
  // backward of another on one GPU) take the longer pass plus this share of the shorter, both
  // ending together: how much the two slow each other. 1: back to back, as a CPU runs them.
  double overlapped_pass_share = 1;

  int compute_slots() const { return cores > 0 ? std::max(1, cores / std::max(1, threads_per_device)) : 0; }
  int num_devices() const { return static_cast<int>(devices.size()); }
  int num_nodes() const {
    return devices_per_node > 0 ? num_devices() / devices_per_node : 0;
  }
  int node_of(int device) const { return device / devices_per_node; }
  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

// An idle slowdown from 1 (none) to 1000, above 1 with a positive idle time to reach it
// (ClusterSpec::idle_slowdown; the cost model's copy obeys the same rule).
inline bool valid_idle_slowdown(double factor, Nanoseconds after_ns) {
  return factor >= 1.0 && factor <= 1000.0 && after_ns >= 0 && (factor == 1.0 || after_ns > 0);
}

// Checks >= 1 device, devices_per_node >= 1 dividing the count, positive speeds and
// bandwidths (inter-node only when there are several nodes), non-negative sizes and times, a
// contention factor in [1, 1000], 1 <= inter_node_links <= devices_per_node.
sched::Status check_cluster_spec(const ClusterSpec& spec);

// JSON in, errors with JSON pointers: "cluster.json: /intra_node/latency: \"3 parsecs\": ...".
sched::Result<ClusterSpec> parse_cluster_spec(std::string_view json_text,
                                              std::string_view source = "<cluster spec>");
sched::Result<ClusterSpec> load_cluster_spec(const std::string& path);
// JSON out; parse_cluster_spec reads it back unchanged.
std::string cluster_spec_to_json(const ClusterSpec& spec);

}  // namespace pipeworks::sim
