// `--partition` text, one reading for every command: "uniform", "balanced" (the exact balanced
// partitioner over the model's costs under the schedule's micro-batches in flight) or per-stage
// layer counts such as "7,6,6,7", where "N*R" stands for R stages of N layers ("5,4*4,3,1*2").
// Every command prints a partition's counts in that notation (layer_counts_text), so any printed
// partition can be passed back to --partition.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/generators.h"
#include "sched/result.h"
#include "sim/plan/partition.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::sim {

// The counts of "7,6,6,7" or "7,6*2,7": comma-separated entries, each a positive integer N or
// N*R (R >= 1 copies of N), at most sched::kMaxStages counts in all. The error's column points at
// the bad entry.
sched::Result<std::vector<int>> parse_layer_counts(std::string_view text);

// A partition's layers per stage, "3,2,2,2,3"; `compact` folds runs of equal counts: "3,2*3,3".
std::string layer_counts_text(const Partition& partition, bool compact);

// What `--partition` asks for, read once where the text enters: the rule and, for counts, the
// layers per stage. `text` keeps the spelling given, for messages and for what runs compare.
struct PartitionChoice {
  enum class Rule { kUniform, kBalanced, kCounts };
  Rule rule = Rule::kUniform;
  std::vector<int> counts;  // kCounts: layers per stage
  std::string text = "uniform";
  bool balanced() const { return rule == Rule::kBalanced; }
  friend bool operator==(const PartitionChoice&, const PartitionChoice&) = default;
};

// "uniform", "balanced" or layer counts (parse_layer_counts, whose error it returns).
sched::Result<PartitionChoice> parse_partition_choice(std::string_view text);
// The choice of these counts, spelled as layer_counts_text spells them ("3,3,2").
PartitionChoice counts_choice(const std::vector<int>& counts);

// A uniform or counted choice cut for `num_stages` stages of `num_layers` layers: counts must name
// exactly `num_stages` stages summing to `num_layers`. "balanced" needs the layers' costs
// (choose_partition) and is an error here. Errors quote the choice's text.
sched::Result<Partition> fixed_partition(const PartitionChoice& choice, int num_layers, int num_stages);
// fixed_partition of the text's choice.
sched::Result<Partition> parse_partition(std::string_view text, int num_layers, int num_stages);

// What "balanced" weighs besides the layers' costs: the schedule (its micro-batches in flight per
// stage), the micro-batch size, the training state, and the device each stage runs on.
struct PartitionContext {
  sched::ScheduleKind schedule = sched::ScheduleKind::kOneFOneB;
  int num_microbatches = 1;
  int microbatch_size = 1;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  bool recompute = false;
  std::vector<double> stage_speed;    // per stage; empty: all 1
  std::vector<Bytes> capacity_bytes;  // per stage; empty or 0: no cap
  std::vector<int> in_flight;         // per stage, as a given schedule has it; empty: as `schedule` implies
  ZeroStage zero = ZeroStage::kNone;  // the training state's sharding over dp replicas (BalanceOptions)
  int dp = 1;
};

// Any choice for `num_stages` stages of `model`: balanced balances `model`'s costs under
// `context`; the rest is fixed_partition.
sched::Result<Partition> choose_partition(const PartitionChoice& choice, const ModelSpec& model, int num_stages,
                                          const PartitionContext& context);

}  // namespace pipeworks::sim
