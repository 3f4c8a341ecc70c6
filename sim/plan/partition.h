// Which layers each pipeline stage runs: explicit boundaries, equal layer counts, or the
// exact min-max "balanced" partition (optionally under per-device memory caps).
//
//   layers   0 1 2 | 3 4 | 5 6 7      boundaries = {0, 3, 5, 8}
//   stage      0   |  1  |   2        stage s runs layers [b[s], b[s+1])
#pragma once

#include <string>
#include <vector>

#include "sched/result.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::sim {

struct Partition {
  std::vector<int> boundaries;  // size K + 1: 0 = b[0] < b[1] < ... < b[K] = number of layers

  int num_stages() const { return static_cast<int>(boundaries.size()) - 1; }
  int begin(int stage) const { return boundaries[static_cast<std::size_t>(stage)]; }
  int end(int stage) const { return boundaries[static_cast<std::size_t>(stage) + 1]; }
  friend bool operator==(const Partition&, const Partition&) = default;
};

// "[0,3) [3,5) [5,8)": each stage's layer range.
std::string to_string(const Partition& partition);
// {"[0,3)", "[3,5)", "[5,8)"}.
std::vector<std::string> stage_range_texts(const Partition& partition);

// Validates boundaries: K >= 1, starts at 0, ends at num_layers, strictly increasing (no empty
// stage). Errors name the problem: "boundary 2 (=3) is not greater than boundary 1 (=3): stage
// 1 would be empty".
sched::Result<Partition> explicit_partition(std::vector<int> boundaries, int num_layers);

// Equal layer counts; the first num_layers % num_stages stages get one layer more.
sched::Result<Partition> uniform_partition(int num_layers, int num_stages);

// The numbers the balanced partitioner works on. A stage s holding layers [i, j) takes
//   time(s, i, j)   = sum_{l in [i,j)} layer_time_ns[l] / stage_speed[s]
//   memory(s, i, j) = sum static_bytes[l]
//                     + in_flight[s] * sum stash_bytes[l]                  (no recompute)
//                     + in_flight[s] * input_bytes[i] + sum stash_bytes[l]  (recompute: inputs
//                       of every in-flight micro-batch, one re-materialized stash at a time)
struct PartitionProblem {
  std::vector<Nanoseconds> layer_time_ns;  // forward + backward at the micro-batch size
  std::vector<Bytes> static_bytes;         // params + grads + optimizer state (empty: all 0)
  std::vector<Bytes> stash_bytes;          // per micro-batch (empty: all 0)
  std::vector<Bytes> input_bytes;          // input of each layer per micro-batch (recompute)
  bool recompute = false;
  std::vector<double> stage_speed;         // K entries (empty: all 1)
  std::vector<Bytes> capacity_bytes;       // K entries (empty: no cap; 0 entry: no cap)
  std::vector<int> in_flight;              // K entries (empty: all 1)
};

// Exact: minimizes the slowest stage's time (DP over prefix sums; each cell scans only the
// first layers whose range can fit and still beat its best, so O(K L^2) only in the worst case,
// e.g. one layer holding most of the time) subject to every stage fitting its capacity;
// deterministic (ties keep the latest cut found scanning backwards). When no partition fits,
// the error names the stage that overflows most, by how much, in the partition with the
// smallest largest overflow. Stages that share a device (virtual stages) are balanced as
// stages, not as device totals, so a device's stages can add up to more than another's:
// interleaved 1F1B's critical path runs through every stage, and levelling the device totals
// instead predicted slower (bench/README.md).
//
// The partition without caps comes first (from `memo` when given and known): when it fits every
// stage it is the capped answer too, the same cut for cut. On its path each cell's chosen first
// layer i* is feasible, and the capped prefix through i* costs what the uncapped one does; every
// other candidate costs at least as much capped as uncapped, and one that tied i* uncapped from a
// later i would have been chosen instead; so each cell keeps i*.
class PartitionMemo;
sched::Result<Partition> balanced_partition(const PartitionProblem& problem, int num_stages,
                                            PartitionMemo* memo = nullptr);

// The slowest stage's time and each stage's memory under `problem`, for a given partition.
double bottleneck_time(const PartitionProblem& problem, const Partition& partition);
std::vector<Bytes> stage_memory_bytes(const PartitionProblem& problem, const Partition& partition);

// Builds the problem from a model spec at a micro-batch size; training state from the
// optimizer (optimizer.h); `in_flight` as the schedule implies it (sched::in_flight_microbatches).
// Capacities and speeds are per stage (the device each stage will run on).
struct BalanceOptions {
  int microbatch_size = 1;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  bool recompute = false;
  std::vector<double> stage_speed;
  std::vector<Bytes> capacity_bytes;
  std::vector<int> in_flight;
  // The training state of each of dp replicas under this sharding (zero_sharding.h); under
  // ZeRO-3 a stage holds its gathered parameters while it computes, so they count whole.
  ZeroStage zero = ZeroStage::kNone;
  int dp = 1;
};
sched::Result<PartitionProblem> partition_problem(const ModelSpec& spec, const BalanceOptions& options);
// The same for a spec the caller has checked (check_model_spec) and builds many problems from:
// the sweep checks each model once, not once per configuration.
sched::Result<PartitionProblem> partition_problem_of_checked(const ModelSpec& spec, const BalanceOptions& options);

// Shorthand: partition_problem + balanced_partition.
sched::Result<Partition> balanced_partition(const ModelSpec& spec, int num_stages,
                                            const BalanceOptions& options, PartitionMemo* memo = nullptr);

}  // namespace pipeworks::sim
