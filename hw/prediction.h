// The simulator's view of an executor run: builds the CostModel of exactly the lowered schedule,
// partition and placement a run will execute, with what the executor does that a generic model
// spec cannot say (forwards without the graph under re-materialization, where the executor's
// memory is counted, gradients and backward temporaries inside the measured peak), simulates
// it and predicts each device's measured peak. LibTorch-free header.
//
//   measured peak(d) = peak of held activations (simulated, executor attribution), with the
//                      input gradients d's stages made and the previous stage has not yet
//                      consumed added along the simulated timeline
//                    + gradients of the stages on d      (allocated inside the step)
//                    + backward temporaries above the stash (profiled; 0 from a spec): the
//                      stage's own measurement when the profile has one for this partition
//                      (stage_memory.h), else composed from the layers: max over the stage's
//                      layers l of transient(l) + gradient of l's output - stashes of the
//                      layers after l (freed by then)
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
  // Per device: the contention slow-down applied, 1 + (factor - 1) * overlap (1: none).
  std::vector<double> device_slowdown;
};

// Per device: the share of its compute time during which another device also computes
// (0 when it has none). Contention applies only there: a worker alone in a bubble runs at the
// speed measured alone.
std::vector<double> compute_overlap_fractions(const sched::Timeline& timeline);

// Executor attribution of activation memory (the counting allocator charges an allocation to
// the device whose worker made it): a stage's output is charged to its own device while the
// next stage holds it, and the first stage's input (data made by the main thread) to nobody.
// So under re-materialization, stage s "keeps" its output per micro-batch in flight (the last
// stage keeps nothing but its loss): input_bytes(s) = output_bytes(s) for s < K-1, else 0.
// Without re-materialization the stash already holds the output; nothing changes.
void apply_executor_memory(sim::CostModel& costs, bool recompute);

// Per device: how much its simulated peak (timeline.memory) grows when the input gradients its
// stages make are held too. Stage s > 0 makes the gradient of its input in B(s,m) (the counting
// allocator charges it to s's device); it lives until B(s-1,m) has consumed it, the simulator
// does not hold it. Sizes: costs.stages[s-1].output_bytes.
std::vector<sched::Bytes> held_input_grad_growth(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                                 const sim::CostModel& costs);

// `profile` (may be null) supplies forward-without-graph times and backward temporaries; the
// cluster must have at least as many devices as the schedule. With a profile that measured a
// contention factor c > 1 (its cluster's speeds are 1/c), the run is simulated at full speed,
// then each device is slowed by 1 + (c - 1) * its overlap fraction and simulated again (twice).
sched::Result<Prediction> predict_run(const RunConfig& config, const sched::Schedule& schedule,
                                      const sim::Partition& partition, const sim::ModelSpec& spec,
                                      const sim::ClusterSpec& cluster, const Profile* profile);

}  // namespace pipeworks::hw
