// The simulator's view of an executor run: builds the CostModel of exactly the lowered schedule,
// partition and placement a run will execute, with what the executor does that a generic model
// spec cannot say (forwards without the graph under re-materialization, where the executor's
// memory is counted, gradients and backward temporaries inside the measured peak), simulates
// it and predicts each device's measured peak. LibTorch-free header.
//
//   measured peak(d) = peak of held activations (simulated, executor attribution)
//                    + gradients of the stages on d      (allocated inside the step)
//                    + backward temporaries above the stash (profiled; 0 from a spec):
//                      max over the stage's layers l of transient(l) + gradient of l's output
//                      - stashes of the layers after l (freed by then)
#pragma once

#include <vector>

#include "hw/profiler.h"
#include "hw/run.h"
#include "sched/schedule.h"
#include "sim/cluster_spec.h"
#include "sim/cost_model.h"
#include "sim/model_spec.h"
#include "sim/partition.h"
#include "sim/simulator.h"

namespace pipeworks::hw {

struct Prediction {
  sim::CostModel costs;
  sim::SimResult result;                         // timeline "predicted"
  std::vector<sched::Bytes> peak_activation_bytes;  // per device, comparable with StepResult's
};

// Executor attribution of activation memory (the counting allocator charges an allocation to
// the device whose worker made it): a stage's output is charged to its own device while the
// next stage holds it, and the first stage's input (data made by the main thread) to nobody.
// So under re-materialization, stage s "keeps" its output per micro-batch in flight (the last
// stage keeps nothing but its loss): input_bytes(s) = output_bytes(s) for s < K-1, else 0.
// Without re-materialization the stash already holds the output; nothing changes.
void apply_executor_memory(sim::CostModel& costs, bool recompute);

// `profile` (may be null) supplies forward-without-graph times and backward temporaries; the
// cluster must have at least as many devices as the schedule.
sched::Result<Prediction> predict_run(const RunConfig& config, const sched::Schedule& schedule,
                                      const sim::Partition& partition, const sim::ModelSpec& spec,
                                      const sim::ClusterSpec& cluster, const Profile* profile);

}  // namespace pipeworks::hw
