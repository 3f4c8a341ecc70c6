// What each rank of a multi-process run reports after a step, as text for the store, and how
// rank 0 merges the reports into one measured Timeline and one row of step statistics.
//
//   rank 0: spans of device 0 --+
//   rank 1: spans of device 1 --+--> Timeline (all devices, flows SEND -> RECV) + StepStats
//   rank 2: spans of device 2 --+
//
// Each rank's times are relative to its own clock origin, taken right after the barrier that
// opens the step, so the ranks' timelines line up to within that barrier's skew.
// LibTorch-free: the format is tested without processes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/run/gradient_check.h"
#include "hw/run/run.h"
#include "sched/schedule.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

struct RankStep {
  int rank = 0;
  int device = 0;   // the schedule's device this rank runs (its rank without data parallelism)
  int replica = 0;  // its data-parallel replica
  double loss_sum = 0;  // sum of the micro-batch losses this rank computed (last stage only)
  sched::Bytes peak_activation_bytes = 0;
  sched::Nanoseconds step_ns = 0;
  std::vector<sched::Span> spans;  // this rank's device only (span.device: `device`)
  std::vector<sched::MemorySample> memory;
  std::optional<GradientCheck> check;  // this rank's cells against the reference
};

std::string encode_rank_step(const RankStep& step);
// Strict: every field present and of the right type; the spans get the rank's device.
sched::Result<RankStep> decode_rank_step(const std::string& text);

// With data parallelism the timeline is replica 0's pipeline (the replicas run alike; the
// simulator predicts one), the step is the slowest rank's, the loss the whole mini-batch's and a
// device's peak the largest over its replicas. With tensor parallelism the timeline and the loss
// are tensor rank 0's (every tensor rank of the last stage computes the same loss; a rank's
// tensor rank is rank mod tp in either rank order), the peak the largest over the tensor ranks.
struct MergedStep {
  sched::Timeline timeline;  // "measured"
  StepStats stats;           // step_ns: the slowest rank; loss: sum of loss_sum / (M x replicas)
  std::optional<GradientCheck> check;  // maxima over ranks; passed/exactly_equal: all ranks
};

// `steps` holds one report per rank (`tensor_ranks` x devices of `schedule` x `replicas`), in rank
// order.
sched::Result<MergedStep> merge_rank_steps(const std::vector<RankStep>& steps, const sched::Schedule& schedule,
                                           int step, int batch_size, int replicas = 1, int tensor_ranks = 1);

}  // namespace pipeworks::hw
