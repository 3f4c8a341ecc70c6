// The simulator's only input besides the Schedule: what each stage's actions cost on its device
// at the chosen micro-batch size, what each transfer costs, and how much memory a device has.
// Built from a model spec + cluster spec + partition (cost_model_builder.h); consumed by the
// discrete-event simulator. Keeping it a plain value lets tests construct exact costs by hand.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"
#include "sim/spec/comm_mode.h"

namespace pipeworks::sim {

using sched::Bytes;
using sched::Nanoseconds;

// What the executor holds of a stage beyond the simulator's stashes (hw/exec/stage_compute.h),
// bytes per micro-batch: temporaries above what the stage holds when an action ends, at the
// action's peak, and what a split backward keeps from I to W. Measured per stage by `profile`
// or composed from the model spec (sim/plan/stage_extra_bytes.h); executor_peak.h adds them to a
// simulated timeline. All 0: the simulator's stashes alone.
struct StageExtraBytes {
  Bytes first = 0;            // the step's first backward of the stage (gradients made in it)
  Bytes later = 0;            // every later backward (gradients exist and accumulate)
  Bytes forward = 0;          // a forward that keeps the graph (F; R under re-materialization)
  Bytes forward_no_grad = 0;  // a forward without the graph (F under re-materialization)
  // Held from a split backward's I to its W: the gradients flowing into the stage's operations
  // with parameters (the first stage: its output's).
  Bytes split_held = 0;
  friend bool operator==(const StageExtraBytes&, const StageExtraBytes&) = default;
};

// Costs of one stage for one micro-batch, on the device that runs it.
struct StageCost {
  Nanoseconds forward_ns = 0;          // F
  Nanoseconds backward_ns = 0;         // B (input + weight gradients)
  Nanoseconds backward_input_ns = 0;   // I
  Nanoseconds backward_weight_ns = 0;  // W
  Nanoseconds recompute_ns = 0;        // R (a forward that keeps the graph; usually == forward_ns)
  // F of a micro-batch the stage re-materializes (R of it is in the schedule): a forward that
  // keeps no graph. 0: forward_ns.
  Nanoseconds forward_no_grad_ns = 0;
  // Added to an action of the kind that starts after its device idled since its previous compute
  // action (waited for data): a worker resuming from a blocking wait finds its caches and TLB
  // cold. 0: no such cost. B's also applies to I and W.
  Nanoseconds resume_forward_ns = 0;
  Nanoseconds resume_recompute_ns = 0;
  Nanoseconds resume_backward_ns = 0;
  // What the stage's first F / R / B of a step (in its program) costs instead of the above; 0:
  // the usual cost. The first finds caches cold after the step boundary, and the first backward
  // allocates the stage's parameter gradients.
  // No resume cost is added to a first action (its measurement already woke from the step start).
  Nanoseconds first_forward_ns = 0;
  Nanoseconds first_recompute_ns = 0;
  Nanoseconds first_backward_ns = 0;
  Bytes input_bytes = 0;   // the stage input kept per micro-batch when re-materializing
  Bytes output_bytes = 0;  // the activation sent to the next stage (its gradient comes back, same size)
  Bytes stash_bytes = 0;   // activations held between F and B per micro-batch without re-materialization
  Bytes param_bytes = 0;
  Bytes grad_bytes = 0;       // parameter gradients (accumulated over micro-batches)
  Bytes optimizer_bytes = 0;  // optimizer state (0 for SGD, 2x params for Adam, ...)
  StageExtraBytes extra;      // read by executor_peak.h only; the simulator's own rule ignores it
  // Data parallelism (0 without it; docs/data_parallel.md). On the device's collective lane:
  Nanoseconds reduce_grad_ns = 0;  // REDUCE_GRAD: the gradients' all-reduce or reduce-scatter
  int reduce_grad_buckets = 1;     // split into this many buckets, each sent once its grads are
  // The cost model's link REDUCE_GRAD's collective also drives (the device's NIC, when the
  // pipeline sends off its node on it too), and for how long from its start: the two then take
  // turns on it. -1: the collective shares no link with the pipeline.
  int reduce_grad_link = -1;
  Nanoseconds reduce_grad_link_ns = 0;
  Nanoseconds unshard_ns = 0;      // UNSHARD: all-gather of the sharded parameters (ZeRO-3)
  Bytes unshard_bytes = 0;         // held from UNSHARD to RESHARD: the gathered parameters
  // After the device's program and its last collective, once a step:
  Nanoseconds optimizer_step_ns = 0;  // the update of its (shard of the) parameters
  Nanoseconds param_gather_ns = 0;    // all-gather of the updated shards (ZeRO-1 and -2)
};

// A point-to-point path; transfers on the same Link queue behind each other.
struct Link {
  Nanoseconds latency_ns = 0;
  double bandwidth_bytes_per_s = 0;  // must be > 0
  Nanoseconds send_overhead_ns = 0;  // LinkSpec::send_overhead_ns: the sender's stream held at SEND
};

struct CostModel {
  std::vector<StageCost> stages;           // one per stage, indexed by stage
  int num_devices = 0;
  std::vector<Bytes> device_memory_bytes;  // capacity per device (0 = unknown / unlimited)
  std::vector<Link> links;                 // distinct links
  // link_of[src * num_devices + dst] = index into links; -1 on the diagonal.
  std::vector<int> link_of;
  CommMode comm_mode = CommMode::kOverlap;
  // Fixed cost added to every compute action (kernel launch / dispatch), already included
  // nowhere else.
  Nanoseconds per_action_overhead_ns = 0;
  int microbatch_size = 1;  // samples per micro-batch, for throughput
  // REDUCE_GRAD runs on the device's collective lane beside its compute, its buckets sent as
  // the stage's last backward produces them (DDP, Megatron's --overlap-grad-reduce); false: it
  // holds the device's stream, after that backward, like a synchronous all-reduce.
  bool overlap_grad_reduce = true;
  // Devices that compute at the same time slow each other down (shared cores, caches, memory
  // bandwidth: pipeline workers on one CPU). Per device: its compute runs this factor slower
  // while a device of the same contention group computes too (1: never slowed); empty: 1 for
  // all. The simulator applies it per device as 1 + (factor - 1) x the share of the device's
  // compute time that overlaps the group's other devices (contention.h).
  std::vector<double> contention_factor;
  std::vector<int> contention_group;  // per device (empty: all devices in one group)
  // Devices of one contention group that may compute at once (workers sharing a CPU node's
  // cores: cores / threads per worker); the others wait for one of them to finish (core_slots.h).
  // 0: no limit (GPUs, or as many cores as workers need).
  int compute_slots = 0;
  // With compute slots: a device whose next compute action is ready when its last one ends keeps
  // its slot for up to this long from when it took it, however many wait (core_slots.h); 0: it
  // passes the slot to the longest waiter at each action's end.
  Nanoseconds compute_slice_ns = 0;
  // A compute action that starts after its device idled for g takes
  // (idle_slowdown - 1) x min(1, g / idle_slowdown_after_ns) more of its duration
  // (ClusterSpec::idle_slowdown, idle_extra_ns in op_costs.h); 1: never.
  double idle_slowdown = 1;
  Nanoseconds idle_slowdown_after_ns = 0;
  // An OVERLAP_F_B pair of the schedule (sched/composite.h) takes max(F, B) + this x min(F, B),
  // its two passes ending together; 1: back to back (ClusterSpec::overlapped_pass_share).
  double overlapped_pass_share = 1;

  const Link* link(int src, int dst) const {
    if (src < 0 || dst < 0 || src >= num_devices || dst >= num_devices) return nullptr;
    const int id = link_of[static_cast<std::size_t>(src) * static_cast<std::size_t>(num_devices) + static_cast<std::size_t>(dst)];
    return id < 0 ? nullptr : &links[static_cast<std::size_t>(id)];
  }
};

// The most devices a cost model holds: its link table has num_devices^2 entries (4 bytes each,
// 16,777,216 at this limit), so 65,536 devices would need 17 GB before a single action ran.
inline constexpr int kMaxCostModelDevices = 4096;

// Ok for 0..kMaxCostModelDevices devices; else an error naming the devices, the table's entries
// and bytes, and the limit.
sched::Status check_cost_model_devices(std::int64_t num_devices);

// Checks sizes agree and every cost is finite and non-negative, every bandwidth positive.
sched::Status check_cost_model(const CostModel& model);

// Uniform costs for tests and the `uniform` preset: every stage F = forward_ns, B = backward_ns
// (I = W = B/2, R = F), every cross-device transfer on its own link with the given latency and
// infinite-ish bandwidth, one device per stage.
CostModel uniform_cost_model(int num_stages, Nanoseconds forward_ns, Nanoseconds backward_ns,
                             Nanoseconds transfer_ns = 0, CommMode mode = CommMode::kOverlap);

}  // namespace pipeworks::sim
