// Parses `--partition uniform|balanced|N,N,...` into the simulator's Partition, so the run and
// a prediction cut the model at the same layers as `pipeworks simulate` would. LibTorch-free.
#pragma once

#include <string_view>

#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/model_spec.h"
#include "sim/optimizer.h"
#include "sim/partition.h"

namespace pipeworks::hw {

// "uniform" (sim::uniform_partition) or K layer counts "3,3,2" summing to the number of layers.
sched::Result<sim::Partition> parse_partition(std::string_view text, int num_layers, int num_stages);

// What `balanced` needs besides the layer costs: the run's schedule (its stages, devices and
// micro-batches in flight) and what the simulator charges per stage.
struct RunBalance {
  const sched::Schedule* schedule = nullptr;  // lowered or not; in flight: GPipe M, else min(M, K - s)
  bool gpipe = false;
  int microbatch_size = 1;
  sim::OptimizerKind optimizer = sim::OptimizerKind::kSgd;
  bool recompute = false;
};

// As parse_partition, plus "balanced": sim::balanced_partition over `spec` (timed, e.g. written
// by `pipeworks profile`; same layer count as the model), stages at equal speed and no memory
// cap, exactly as `pipeworks simulate --partition balanced` cuts it on a uniform cluster.
// "balanced" without a spec is an error saying a model spec is needed.
sched::Result<sim::Partition> run_partition(std::string_view text, int num_layers, const sim::ModelSpec* spec,
                                            const RunBalance& balance);

}  // namespace pipeworks::hw
