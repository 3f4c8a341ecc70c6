// `run --distributed --predict`: a multi-process run measured and predicted from costs taken on
// this machine for exactly what it does (LibTorch-free header, for the CLI):
//
//   all ranks   set up (rank_run.h); time the hand-off over the run's group and each stage's
//               collectives and optimizer step (comm_profile.h)
//   rank 0      profile the model's layers at the replica's micro-batch size, with the contention
//               of as many workers as the run has processes (its ranks share this machine's cores
//               as in-process workers would); the others wait at a barrier
//   all ranks   warm-up steps, then the measured steps (rank 0 merges them, rank_report.h)
//   rank 0      simulate one replica's schedule on those costs: the profile's layers and
//               contention, the measured hand-off (its send overhead held on the sender's
//               stream, LinkSpec::send_overhead_ns) as every link, each stage's measured
//               REDUCE_GRAD, ZeRO-1 gather and optimizer step (hw/predict/prediction.h); with
//               tp > 1 the layers are tensor rank 0's shard and their all-reduces run on the
//               link fitted to the measured tensor-parallel all-reduce
//
// The headline is the predicted step against the median measured step.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/dist/distributed_run.h"
#include "hw/predict/prediction.h"
#include "hw/predict/profiler.h"
#include "hw/run/run.h"

namespace pipeworks::hw {

struct DistributedPredictionSettings {
  int warmup = 2;              // steps before the measured ones
  int repetitions = 15;        // per profiled layer
  // The layers timed in this many rounds, this far apart, the median round kept
  // (ProfileOptions::rounds): one round of 15 passes lasts tens of milliseconds, short enough for
  // one slow spell of a shared machine to bend it (bench/README.md, "the profile in rounds").
  int profile_rounds = 5;
  double profile_round_gap_s = 0.05;
  int comm_repetitions = 20;   // per timed hand-off, collective and optimizer step
};

struct ReplicaCommCosts {
  sched::Nanoseconds handoff_latency_ns = 0;
  double handoff_bandwidth_bytes_per_s = 0;  // 0: one pipeline rank, no hand-off
  sched::Nanoseconds send_overhead_ns = 0;   // held on the sender's stream at each SEND
  sched::Bytes largest_handoff_bytes = 0;
  std::vector<ReplicaStageCosts> stages;
  // With tp > 1 (comm_profile.h): the ring link fitted to the tensor-parallel all-reduces timed
  // at 4 bytes (tensor_small_ns) and at tensor_bytes (tensor_large_ns).
  std::optional<sim::LinkSpec> tensor_link;
  sched::Bytes tensor_bytes = 0;
  sched::Nanoseconds tensor_small_ns = 0;
  sched::Nanoseconds tensor_large_ns = 0;
  std::optional<sched::Nanoseconds> core_slice_ns;  // CommProfile's: measured, or not (nullopt)
};

struct DistributedPrediction {
  int rank = 0;
  int world_size = 1;
  RunReport run;  // rank 0: the measured steps (after the warm-up), merged; others: their own
  // Rank 0 only:
  ReplicaCommCosts comm;
  std::optional<Profile> profile;
  std::optional<Prediction> prediction;
  sim::ClusterSpec cluster;       // what the prediction ran on
  sched::Nanoseconds measured_step_ns = 0;  // median of the measured steps
  std::vector<std::string> notes;
  // What the prediction knowingly leaves out for this run (each printed as a warning).
  std::vector<std::string> warnings;
};

// on_step runs on rank 0 for each measured step. Errors name the rank and what failed.
sched::Result<DistributedPrediction> predict_distributed(const RunConfig& config,
                                                         const DistributedPredictionSettings& settings,
                                                         const DistributedOptions& options,
                                                         const std::function<void(const StepStats&)>& on_step = {});

}  // namespace pipeworks::hw
