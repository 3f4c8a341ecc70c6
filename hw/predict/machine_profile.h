// What the executor adds on this machine beyond layer costs, measured rather than assumed on the
// devices a run computes on (the CPU's workers, or GPUs): the hand-off between workers (on the
// CPU the in-process transport: a waiting receiver woken by a send; on GPUs their copy streams,
// device_handoff.h),
// the per-action dispatch overhead of the executor, and how much slower a layer runs when K
// workers compute at once (shared cores and caches). Turned into a sim::ClusterSpec.
//
//   hand-off      sender: t0 = now; send(x)      receiver (already waiting): recv returns at t1
//                 latency(bytes) = t1 - t0, fitted as latency + bytes / bandwidth
//   dispatch      (executor makespan - sum of profiled layer costs) / compute actions, on a tiny
//                 one-stage model where the layers cost almost nothing
//   contention    the model cut into K uniform stages of disjoint layers, one per worker, as a
//                 pipeline shares the machine (one model's working set, not K copies of it);
//                 median over 5 alternating rounds of
//                 sum over stages of median(F+B, all K at once) / sum of median(F+B, each alone),
//                 each F+B on its device's clock (GPUs sharing one contend on it)
//   idle slowdown CPU: the first stage's F+B (the whole model with one worker), median over 5
//                 rounds of median(F+B, each after a sleep of kIdleSlowdownAfter) / median(F+B,
//                 back to back), the two alternating in each round, the second stage's F+B
//                 running meanwhile on a thread of its own (a pipeline's other worker)
#pragma once

#include <chrono>

#include <string>
#include <vector>

#include "hw/exec/device_kind.h"
#include "hw/model/model_config.h"
#include "hw/predict/cost_fit.h"
#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {

class ComputeDevices;  // hw/exec/compute_devices.h

struct HandoffSample {
  sched::Bytes bytes = 0;
  Timing latency;
};

struct MachineProfile {
  std::vector<HandoffSample> handoff;
  sched::Nanoseconds handoff_latency_ns = 0;  // fitted intercept
  double handoff_bandwidth_bytes_per_s = 0;   // fitted 1 / slope (kUnboundedBandwidth when flat)
  sched::Nanoseconds dispatch_overhead_ns = 0;
  Timing dispatch_samples;        // per-action overhead over the measured steps
  double contention_factor = 1;   // >= 1
  Timing contention_alone;        // per round: the stages' F+B medians summed, each stage alone
  Timing contention_concurrent;   // the same with every stage at once
  double idle_slowdown = 1;       // >= 1; CPU only (1 on GPUs, not measured)
  Timing idle_hot;                // per round: the stage's F+B median, back to back
  Timing idle_after;              // the same, each after kIdleSlowdownAfter asleep
  int workers = 1;
  int threads = 1;
  int cores = 0;  // CPU: the cores this process may run on (its affinity mask); 0 on GPUs
  DeviceKind device = DeviceKind::kCpu;  // ComputeDevices::kind() of what was measured
};

// How long the idle-slowdown measurement leaves its worker asleep before each F+B: the plateau's
// start in the cluster spec (ClusterSpec::idle_slowdown_after_ns), of the order of the waits of a
// pipeline's fill and drain.
inline constexpr std::chrono::milliseconds kIdleSlowdownAfter{5};

// Tensors move by reference in process, so latency does not grow with size; the fit then says
// "unbounded" (sim::kUnboundedBandwidth, 1 PB/s).
using sim::kUnboundedBandwidth;

// `model` is the workload of the contention measurement (at `microbatch_size` samples); every
// figure is measured on `where`'s devices. `worker_cpus` (per worker; empty: not pinned) pins the
// contention's workers as the run pins its own, so the factor is the one its placement sees.
sched::Result<MachineProfile> profile_machine(const ModelConfig& model, int microbatch_size, int workers,
                                              int threads, int repetitions, std::vector<std::string>& notes,
                                              const ComputeDevices& where,
                                              const std::vector<std::vector<int>>& worker_cpus);

// `workers` devices (memory unknown, speed 1) on one node with the measured contention and, on
// the CPU, the node's cores and the workers' threads (so that workers beyond the cores wait for
// one, ClusterSpec::cores), the fitted
// hand-off as the link, eager mode (a send never blocks; a receive holds its worker until the data
// has arrived, as the executor's in-process transport does), and
// the dispatch overhead.
sim::ClusterSpec cluster_from_machine(const MachineProfile& machine);

}  // namespace pipeworks::hw
