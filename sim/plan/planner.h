// The planner: for a model, a cluster, a batch and a device budget, sweep every sensible
// configuration and return the fastest one that fits, with one line per runner-up family
// saying why it lost -- it does not fit (by how much), or it is slower (by how much, and
// whether its bubble, its compute per micro-batch or its communication is to blame).
//
// Why a configuration is slower: with W = M x c the busy time of its slowest stage (c: that
// stage's compute per micro-batch) its step takes T = W x f x g, where f = E / W >= 1 is the
// pipeline's overhead factor up to E, the end of its last compute (bubble, imbalance,
// transfers), and g = T / E >= 1 what follows it (data-parallel collectives and the optimizer
// step no compute hides). So T_loser / T_best splits exactly into (W_loser / W_best) x
// (f_loser / f_best) x (g_loser / g_best); the largest factor names the cause: "compute"
// (smaller, less efficient micro-batches, re-materialization, fewer samples split over more
// replicas), "bubble" or "communication". Two causes come first when they hold: a configuration
// on fewer devices than the best says so ("uses 4 of the best's 8 devices"), since that, not its
// bubble or compute, is why it is slower; and one within kTieFraction of the best's throughput
// is called a tie.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/schedule.h"
#include "sim/plan/sweep.h"

namespace pipeworks::sim {

// Throughputs closer than this (as a fraction of the best's) are a tie: the cost model cannot tell
// them apart (its predictions are off by several percent against measured runs, bench/README.md).
inline constexpr double kTieFraction = 0.01;

struct PlanRequest {
  ModelSpec model;
  ClusterSpec cluster;
  int batch_size = 1;
  int num_devices = 1;  // at most the cluster's; every layout uses tp x pp x dp = num_devices of them
  std::optional<Bytes> memory_cap_bytes;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  // The schedules compared; empty: plan_schedules().
  std::vector<sched::ScheduleKind> schedules;
  // v searched for interleaved-1f1b, looped-bfs and interleaved-zb; empty: the sweep's default (2).
  std::vector<int> virtual_stage_counts;
  // The sharding searched for layouts with dp > 1: none and ZeRO-1 (Megatron's distributed
  // optimizer) unless told otherwise; DeepSpeed runs ZeRO-2 and -3 without pipelines.
  std::vector<ZeroStage> zero_stages = {ZeroStage::kNone, ZeroStage::kOptimizer};
  RankOrder rank_order = RankOrder::kTpDpPp;
  DataParallelOptions data_parallel;
  // Tensor-parallel counts searched; empty: every count dividing both a node's devices and
  // num_devices when the model's layers split (tensor_parallel.h), else 1.
  std::vector<int> tp_counts;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
};

// What a plan compares unless told otherwise: the kinds with one stage per device, gpipe, 1f1b,
// zb-h1, zb-h2 (the virtual-stage kinds are compared when named).
std::vector<sched::ScheduleKind> plan_schedules();

// A group of configurations the plan compares with the winner: one per schedule x recompute
// pair ("1f1b, recompute on"), one per layout ("pp 8 x dp 4", "tp 2 x pp 4 x dp 1") and one per
// sharding ("ZeRO-1").
struct RunnerUp {
  std::string family;
  std::optional<std::size_t> row;  // its best fitting row, else its least overflowing row
  bool contains_best = false;      // the winner belongs to this family
  std::string reason;              // "the best (shown above)", "does not fit: ...", "slower by ..."
  std::string label;               // the configuration of a family without a row (the synthesized one)
};

// The synthesized family (sim/synth/plan_synthesis.h): a schedule searched by sim/synth from the
// fastest fitting row it can express, on that row's K, M, partition and micro-batch size.
struct PlanSynthesis {
  std::optional<std::size_t> source;  // the row searched from; nullopt: not searched (`why_not`)
  std::string why_not;                // why nothing was searched ("" when it was)
  // The fitting rows faster than the source (all of them when there is none) that synthesis
  // cannot express, and why: "K=2 M=8 1f1b rc=off dp=2 z1 (dp 2: ...)"; "" when none.
  std::string unsearchable;
  SweepRow row;                       // the synthesized schedule's figures on the source's configuration
  sched::Schedule schedule;           // compute only, as sched::save_schedule writes it
  bool beats_best = false;            // a shorter step than the plan's best row
  std::string report_json;            // the synthesis report (`pipeworks synthesize --json`)
  bool found() const { return source && why_not.empty(); }  // `row`, `schedule` and the report hold a result
};

struct Plan {
  SweepSpec spec;                    // what was swept
  SweepResult sweep;
  std::optional<std::size_t> best;   // the fastest fitting row; nullopt when nothing fits
  std::vector<RunnerUp> runners_up;  // schedule x recompute families, then layouts, then shardings (then synthesized)
  std::optional<PlanSynthesis> synthesis;  // when the plan was asked to search a schedule
};

// The sweep the planner runs: every layout tp x pp x dp = num_devices (pp at most the number of
// layers), micro-batches = divisors of batch_size (dp x M dividing it), the request's schedules
// and shardings, recompute off and on.
sched::Result<SweepSpec> plan_sweep_spec(const PlanRequest& request);

sched::Result<Plan> make_plan(const PlanRequest& request, const SweepOptions& options = {});

// Why `loser` lost to `best` (both simulated, `best` fits): see the file comment.
std::string explain_loss(const SweepRow& loser, const SweepRow& best);

// "K=16 M=64 1f1b rc=off", with " dp=4 z1" when replicated, "tp=2 " before it with tensor
// parallelism: a row as the plan's runner-up lines name it.
std::string config_label(const SweepConfig& config);

// When nothing fits: the row that overflows its cap least, with its note.
std::optional<std::size_t> least_overflowing_row(const std::vector<SweepRow>& rows);

}  // namespace pipeworks::sim
