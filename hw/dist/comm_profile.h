// What a multi-process run's communication costs on this machine, measured by the run's own ranks
// over its own groups before the first step (`run --distributed --predict`), so the prediction
// uses the transport the run uses (Gloo between processes) rather than the in-process hand-off:
//
//   hand-off     replica 0's ranks of devices 0 and 1 bounce a message back and forth over the
//                run's group, R round trips at 4 bytes and at the largest hand-off; one way =
//                median round trip / 2, fitted as o + latency + bytes / bandwidth (cost_fit.h's
//                rule), o the send overhead: the median time device 0's send call held it at the
//                largest hand-off (Gloo writes to the socket in the caller: the SEND's span)
//   collectives  each stage's reduction over its replicas (all-reduce, or ZeRO-1's reduce-scatter)
//                and ZeRO-1's all-gather of its parameters, R times each; medians
//                (C10dReplicaSync::time_collectives)
//   optimizer    each stage's optimizer step on a scratch copy of its parameters, R times, each
//                after a sweep of the caches (cache_sweep.h); median
//   core slice   with more threads than cores and pp >= 2, how long a woken rank waits for a
//                core while the others compute (core_slice_probe.h)
//   tensor       with tp > 1, replica 0's tensor-parallel group of device 0 all-reduces R times at
//                4 bytes and at the largest buffer its layers all-reduce (tensor_parallel_profile.h);
//                the means (a step runs dozens, so it spends their mean on each) fitted to the
//                simulator's ring (sim::ring_all_reduce_link)
//
// Replica 0's rank of each device reports its stages (the replicas are alike); rank 0 gets the
// whole profile.
#pragma once

#include <optional>
#include <vector>

#include "hw/dist/rank_run.h"
#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {

struct StageCommCosts {
  sched::Nanoseconds reduce_ns = 0;     // REDUCE_GRAD's collective (0 without replicas)
  sched::Nanoseconds gather_ns = 0;     // ZeRO-1's all-gather of the updated parameters
  sched::Nanoseconds optimizer_ns = 0;  // the stage's optimizer step
};

struct CommProfile {
  sched::Nanoseconds handoff_latency_ns = 0;
  double handoff_bandwidth_bytes_per_s = 0;  // 0: not measured (one pipeline rank)
  sched::Nanoseconds send_overhead_ns = 0;   // the sender's time in a send call (LinkSpec)
  sched::Bytes largest_handoff_bytes = 0;
  std::vector<StageCommCosts> stages;  // per stage of the schedule
  // With tp > 1: the ring link the tensor-parallel all-reduces were fitted to, and what was timed.
  std::optional<sim::LinkSpec> tensor_link;
  sched::Bytes tensor_bytes = 0;  // the largest buffer
  sched::Nanoseconds tensor_small_ns = 0;  // all-reduce of 4 bytes: the median round's mean
  sched::Nanoseconds tensor_large_ns = 0;  // and of tensor_bytes
  // With more threads than cores and pp >= 2: the OS time slice the ranks saw (core_slice_probe.h).
  std::optional<sched::Nanoseconds> core_slice_ns;
};

// Every rank calls it at the same point of the run, after set_up_rank; rank 0 gets the whole
// profile, the others an empty one. Every wait has the run's deadline. Each timing takes
// `repetitions` samples; the hand-off's two sizes, and the tensor-parallel all-reduce's, are
// timed in `rounds` rounds in turn.
sched::Result<CommProfile> profile_comm(RankRun& run, int repetitions, int rounds);

}  // namespace pipeworks::hw
