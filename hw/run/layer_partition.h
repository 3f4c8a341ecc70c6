// `--partition balanced` for a run: the simulator's balanced partition over a profiled model spec
// under the run's schedule, so the run cuts the model where `pipeworks simulate` would.
// LibTorch-free.
#pragma once

#include <string>
#include <string_view>

#include "hw/run/run.h"
#include "sched/generators.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::hw {

// What `balanced` needs besides the layer costs: the run's schedule (its stages, devices and
// micro-batches in flight) and what the simulator charges per stage.
struct RunBalance {
  const sched::Schedule* schedule = nullptr;  // lowered or not
  sched::ScheduleKind kind = sched::ScheduleKind::kOneFOneB;  // its micro-batches in flight
  int microbatch_size = 1;
  sim::OptimizerKind optimizer = sim::OptimizerKind::kSgd;
  bool recompute = false;
};

// As sim::fixed_partition, plus balanced: sim::balanced_partition over `spec` (timed, e.g. written
// by `pipeworks profile`; same layer count as the model), stages at equal speed and no memory
// cap, exactly as `pipeworks simulate --partition balanced` cuts it on a uniform cluster.
// Balanced without a spec is an error saying a model spec is needed.
sched::Result<sim::Partition> run_partition(const sim::PartitionChoice& choice, int num_layers,
                                            const sim::ModelSpec* spec, const RunBalance& balance);

// `--partition balanced` resolved for a run: run_partition over `spec` under the run's lowered
// schedule, micro-batch size, optimizer and recompute setting, as per-stage layer counts "3,3,2",
// so every run path (in-process, multi-process, --predict) cuts the same layers.
sched::Result<sim::PartitionChoice> balanced_layer_counts(const RunConfig& config, const sim::ModelSpec& spec);

}  // namespace pipeworks::hw
