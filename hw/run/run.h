// hw/run/ -- the run room: a whole training run from plain values. Its set-up (run_setup.h), its
// steps and gradient check (this file, gradient_check.h, reference_check.h), the measured run
// that `run --predict` compares with (measured_run.h), `--partition balanced` for a run
// (layer_partition.h), the model's shape for the simulator (describe_model.h) and the run's
// JSON report (run_report_json.h). It builds on hw/exec/ and hw/model/.
//
// One training run from plain values (LibTorch-free header, for the CLI and the profiler):
// build the model, cut it into cells by a partition, generate and lower the schedule, execute
// `steps` mini-batches and report per-step time, throughput, measured bubble and peak
// activation bytes; optionally check gradients and parameters against the non-pipelined
// reference fed the same micro-batches in the same order.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/exec/cpu_affinity.h"
#include "hw/exec/device_kind.h"
#include "hw/model/fail_at.h"
#include "hw/model/model_config.h"
#include "hw/model/optimizer_config.h"
#include "hw/run/gradient_check.h"
#include "sched/generators.h"
#include "sched/schedule.h"
#include "sched/timeline.h"
#include "sim/plan/partition.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::hw {

struct RunConfig {
  ModelConfig model;
  int num_stages = 2;
  int num_microbatches = 4;
  int batch_size = 32;  // samples per mini-batch; a multiple of num_microbatches
  sched::ScheduleKind schedule = sched::ScheduleKind::kOneFOneB;
  // A schedule given whole (`run --schedule-file`: a valid file, its stages and micro-batches
  // num_stages and num_microbatches), run instead of generating `schedule`: compute-only ones are
  // lowered, ones with SEND/RECV run as written. `schedule_file` names it in reports.
  std::optional<sched::Schedule> given_schedule;
  std::string schedule_file;
  // Stages per device of interleaved-1f1b and looped-bfs (K / v devices, stage s on device
  // s mod K/v); 1 for every other schedule (zb-v and dualpipe-v place 2 by construction).
  int virtual_stages = 1;
  bool recompute = false;
  std::vector<int> placement;        // empty: stage i on device i
  sim::PartitionChoice partition;  // uniform or per-stage layer counts "3,3,2" (balanced is resolved to counts first)
  int steps = 3;
  bool check = false;         // compare with the micro-batch reference every step
  bool check_finite = false;  // fail on NaN/Inf
  int threads_per_worker = 0;  // 0: max(1, cores / devices), see threads.h
  // Device d's worker (and its intra-op threads) on cores of its own (cpu_affinity.h); the
  // measured run and the stage replay of `run --predict` then run a device on the same cores.
  WorkerPinning pin_workers = WorkerPinning::kOff;
  OptimizerConfig optimizer;
  std::chrono::nanoseconds recv_timeout = std::chrono::seconds(60);
  std::optional<FailAt> fail_at;  // test hook
  // Where an in-process run computes: the CPU (a worker thread per device) or CUDA GPUs (device d
  // on GPU d % gpus; needs a LibTorch with CUDA). See compute_devices.h.
  DeviceKind device = DeviceKind::kCpu;
  // Data-parallel replicas of the pipeline: a multi-process run of data_parallel x devices ranks
  // numbered by rank_order, replica r taking samples [r B/dp, (r+1) B/dp) of each mini-batch; the
  // optimizer state unsharded or sharded over the replicas (ZeRO-1). docs/data_parallel.md.
  int data_parallel = 1;
  // Tensor-parallel ranks of each pipeline rank (a multi-process run of tp x devices x dp ranks):
  // each holds a slice of the split layers (hw/model/tensor_parallel_model.h), summing partial
  // results over its group's Gloo all-reduces. docs/tensor_parallel.md.
  int tensor_parallel = 1;
  sim::ZeroStage zero = sim::ZeroStage::kNone;
  sim::RankOrder rank_order = sim::RankOrder::kTpDpPp;
};

struct StepStats {
  int step = 0;
  sched::Nanoseconds step_ns = 0;
  double samples_per_s = 0;
  double bubble_fraction = 0;  // measured: idle compute time over devices x makespan
  double loss = 0;
  std::vector<sched::Bytes> peak_activation_bytes;  // per device
};

struct RunReport {
  sched::Schedule schedule;  // lowered
  sim::Partition partition;
  sim::ModelSpec spec;  // the model in the simulator's shape (times 0)
  int threads_per_worker = 1;
  std::vector<std::vector<int>> worker_cpus;  // per device, its worker's cores; empty: not pinned
  std::vector<StepStats> steps;
  sched::Timeline last_timeline;  // "measured", of the last step
  // Pipeline vs reference: maxima over every step's gradients and the final parameters (a
  // multi-process run compares every step's parameters too: distributed_run.h).
  std::optional<GradientCheck> check;
};

// An error when the config needs several processes (data-parallel replicas, tensor-parallel ranks).
sched::Status check_one_process(const RunConfig& config);

// Errors name what failed (bad config, schedule, or the stage/action/micro-batch of a failure).
// The run is in this process (check_one_process).
sched::Result<RunReport> run_training(const RunConfig& config,
                                      const std::function<void(const StepStats&)>& on_step = {});

// The run's layout: the schedule's devices as pipeline ranks, split and replicated as the config says.
sim::ParallelLayout run_layout(const RunConfig& config, const sched::Schedule& schedule);

// What reports call the run's schedule: its kind ("1f1b"), or the path of --schedule-file.
std::string schedule_name(const RunConfig& config);

// The lowered schedule a config runs: the given schedule or the generator's, optional recompute,
// with data parallelism REDUCE_GRAD after each stage's last backward (unless the schedule has its
// stage-level actions), lower_comm unless it already has its SEND/RECV.
sched::Result<sched::Schedule> build_schedule(const RunConfig& config);

}  // namespace pipeworks::hw
