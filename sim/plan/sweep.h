// Sweeps: simulate every combination of stage count, micro-batch count, schedule and
// re-materialization for one model on one cluster, each with a balanced partition, and keep one
// row of figures per configuration. The planner (planner.h) and `pipeworks sweep` build on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/generators.h"
#include "sim/plan/data_parallel.h"
#include "sim/plan/partition.h"
#include "sim/plan/partition_memo.h"
#include "sim/plan/schedule_memo.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::sim {

// The number of combinations a sweep enumerates, so an absurd request fails at once instead of
// exhausting time or memory. A configuration larger than sched/limits.h allows gets a row with
// simulated = false and a note.
inline constexpr std::int64_t kMaxSweepCombinations = 10'000'000;
inline constexpr int kMaxSweepThreads = 1024;

struct SweepSpec {
  ModelSpec model;
  ClusterSpec cluster;
  std::vector<int> batch_sizes;        // samples per training step
  // The devices a pipeline spans, D: K = D stages for the kinds with one stage per device,
  // K = v x D for the virtual-stage kinds (so rows with one D use the same devices). The devices
  // are the cluster's first D, stage s on the one its schedule places it on.
  std::vector<int> stage_counts;
  std::vector<int> microbatch_counts;  // M; must divide the batch size
  std::vector<sched::ScheduleKind> schedules;
  // v, stages per device, searched for interleaved-1f1b, looped-bfs and interleaved-zb (each
  // >= 2); zb-v and dualpipe-v always have 2, the other kinds 1.
  std::vector<int> virtual_stage_counts = {2};
  std::vector<bool> recompute_modes;   // false: keep activations; true: re-materialize (R)
  // Data-parallel replicas of each pipeline (a row uses pp x dp devices: stage_counts give pp),
  // the sharding searched with dp > 1 (dp 1 has none), and how replicas lie on the cluster.
  std::vector<int> dp_counts = {1};
  // Tensor-parallel ranks of each pipeline rank (a row uses tp x pp x dp devices; tp above 1 needs
  // a model whose layers split, tensor_parallel.h, and a tp dividing a node's devices), with
  // sequence parallelism or not, their collectives overlapped or not.
  std::vector<int> tp_counts = {1};
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // the collectives overlap their layer's GEMMs (tensor_parallel.h)
  std::vector<ZeroStage> zero_stages = {ZeroStage::kNone};
  RankOrder rank_order = RankOrder::kTpDpPp;
  DataParallelOptions data_parallel;
  // When set, only layouts of exactly this many devices (tp x pp x dp); the others are not counted.
  std::optional<int> exact_devices;
  // Per-device cap on top of each device's own memory (the smaller applies); nullopt: none.
  std::optional<Bytes> memory_cap_bytes;
  OptimizerKind optimizer = OptimizerKind::kAdam;
};

struct SweepConfig {
  int batch_size = 1;
  int num_stages = 1;  // K
  int num_microbatches = 1;
  sched::ScheduleKind schedule = sched::ScheduleKind::kGPipe;
  bool recompute = false;
  int virtual_stages = 1;  // v: K / v devices
  int dp = 1;              // replicas, each with batch_size / dp samples
  ZeroStage zero = ZeroStage::kNone;
  int tp = 1;              // tensor-parallel ranks of each pipeline rank
  int microbatch_size() const { return batch_size / dp / num_microbatches; }
  int num_devices() const { return num_stages / virtual_stages; }  // of one pipeline: pp
  int total_devices() const { return tp * num_devices() * dp; }
  // The row's layout: tp x pp = num_devices() ranks of virtual_stages stages, dp replicas, its ZeRO stage.
  ParallelLayout layout(RankOrder order = RankOrder::kTpDpPp) const {
    ParallelLayout l;
    l.tp = tp;
    l.pp = num_devices();
    l.virtual_stages = virtual_stages;
    l.dp = dp;
    l.zero = zero;
    l.order = order;
    return l;
  }
  friend bool operator==(const SweepConfig&, const SweepConfig&) = default;
};

// Figures of one simulated configuration.
struct SweepRow {
  SweepConfig config;
  Partition partition;
  bool simulated = false;      // false: it could not be built or simulated; `note` says why
  Nanoseconds makespan_ns = 0;  // one training step: all M micro-batches, the collectives, the optimizer
  // Of the step, the part after the last compute: the data-parallel collectives and the
  // optimizer step that no compute hides (planner.h).
  Nanoseconds tail_ns = 0;
  double samples_per_s = 0;    // batch_size / makespan, over all replicas
  double tokens_per_s = 0;     // samples_per_s x the model's tokens per sample; 0 unknown
  // Model FLOPs utilization: flops_per_sample x batch / (step x devices x peak FLOP/s); 0 unknown.
  double mfu = 0;
  double bubble_fraction = 0;  // idle compute time over devices x makespan
  Bytes peak_bytes = 0;        // peak of the fullest device
  int peak_device = 0;         // that device
  Bytes capacity_bytes = 0;    // the cap of that device (device memory and --memory-cap); 0: none
  bool fits = false;           // every device's peak within its cap
  Bytes overflow_bytes = 0;    // the largest amount by which a device exceeds its cap (0: fits)
  // The slowest stage's compute per micro-batch (F + B, + R when re-materializing, with the
  // per-action overhead): makespan = M x this / (1 - its idle share). Explains plan choices.
  Nanoseconds stage_compute_ns = 0;
  std::string note;            // why it does not fit ("device 3 needs ...") or why it failed
  std::string partition_note;  // the partitioner's message when no partition fits the cap
  // Tables of the model spec read outside their profiled sizes at this micro-batch size
  // (size_extrapolation.h); 0: every cost measured or from formulas.
  int extrapolated_tables = 0;
  friend bool operator==(const SweepRow&, const SweepRow&) = default;
};

// Combinations that are impossible; each is counted under the first reason that applies.
struct SkipCounts {
  std::size_t more_stages_than_devices = 0;  // tp x pp x dp more than the cluster's devices
  std::size_t more_stages_than_layers = 0;
  std::size_t microbatches_not_dividing_batch = 0;  // dp x M does not divide the batch
  std::size_t total() const {
    return more_stages_than_devices + more_stages_than_layers + microbatches_not_dividing_batch;
  }
  friend bool operator==(const SkipCounts&, const SkipCounts&) = default;
};

struct SweepResult {
  std::vector<SweepRow> rows;  // in the order of sweep_configs, whatever the thread count
  SkipCounts skipped;
};

struct SweepOptions {
  int threads = 0;  // 0: every core; at most kMaxSweepThreads
  // Called after each configuration with (finished, total); calls are serialized.
  std::function<void(std::size_t, std::size_t)> on_progress;
};

// The schedule kinds a sweep searches: every kind.
std::vector<std::string_view> sweepable_schedule_names();

// Whether a sweep searches `kind` with each of SweepSpec::virtual_stage_counts: the kinds with
// virtual stages but the V-shaped ones, which always have 2.
bool searches_virtual_stage_counts(sched::ScheduleKind kind);

// Each schedule of the spec with each v it is searched with, in order: (kind, v).
std::vector<std::pair<sched::ScheduleKind, int>> schedule_variants(const SweepSpec& spec);

// "1f1b", "zb-v", or with v searched "interleaved-1f1b v=2": a row's schedule as tables print it.
std::string schedule_text(const SweepConfig& config);

// Checks the spec (non-empty lists, positive values, at most kMaxSweepCombinations
// combinations, valid model and cluster).
sched::Status check_sweep_spec(const SweepSpec& spec);

// The possible configurations in a fixed order (batch, stages, micro-batches, schedule, v,
// recompute, each as listed), counting the impossible ones in `skipped`.
std::vector<SweepConfig> sweep_configs(const SweepSpec& spec, SkipCounts& skipped);

// What a sweep's configurations share: uncapped partitions, generated and lowered schedules.
struct SweepMemo {
  PartitionMemo partitions;
  ScheduleMemo schedules;
};

// Partitions, builds and simulates one configuration. Never fails: problems go into the row.
// `memo`, when given, shares what SweepMemo holds between configurations.
// `rank_model`, when given, is tensor_parallel_view of spec.model for config.tp, checked
// (check_model_spec), and the spec passed check_sweep_spec: run_sweep does both once, not once per
// configuration. Without it the configuration checks the spec's model and cluster and its view.
SweepRow evaluate_config(const SweepSpec& spec, const SweepConfig& config, SweepMemo* memo = nullptr,
                         const ModelSpec* rank_model = nullptr);

// Every configuration, on options.threads threads; rows are identical for any thread count.
sched::Result<SweepResult> run_sweep(const SweepSpec& spec, const SweepOptions& options = {});

// Indices of the simulated rows from best to worst: fitting rows first, then by samples/s
// (higher first), peak bytes (lower first) and row index.
std::vector<std::size_t> rank_rows(const std::vector<SweepRow>& rows);
// The best fitting row (the first of rank_rows if it fits), or nullopt.
std::optional<std::size_t> best_fitting_row(const std::vector<SweepRow>& rows);
// Indices of the simulated rows on the Pareto frontier of samples/s against peak bytes,
// lowest memory first.
std::vector<std::size_t> pareto_rows(const std::vector<SweepRow>& rows);

}  // namespace pipeworks::sim
