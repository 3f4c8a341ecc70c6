// The simulator's view of an executor run: builds the CostModel of exactly the lowered schedule,
// partition and placement a run will execute, with what the executor does that a generic model
// spec does not say (where the executor's memory is counted, gradients and forward and backward
// temporaries inside the measured peak), simulates it and predicts each device's measured peak.
// LibTorch-free header.
//
//   stage costs      = the spec's layers summed per stage (sim/plan/cost_model_builder.h), or, given a ScheduleReplay of
//                      exactly this schedule, each stage's F, R, B measured in schedule order
//                      (stage_replay.h)
//   measured peak(d) = the simulated activations (executor attribution) walked with gradients,
//                      temporaries and held input gradients (sim/engine/executor_peak.h); a
//                      stage's temporaries are its own measurement when the profile has one for
//                      this partition (stage_memory.h), else composed from the spec's layers:
//                        later: max over the stage's layers l of transient(l) + gradient of l's
//                               output - stashes of the layers after l (freed by then)
//                        first: the same + the parameter gradients of l and the layers after it
//                        forward: 0 (the layer profile does not measure a forward's temporaries)
#pragma once

#include <vector>

#include "hw/predict/profiler.h"
#include "hw/predict/stage_replay.h"
#include "hw/run/run.h"
#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/plan/partition.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::hw {

struct Prediction {
  sim::CostModel costs;
  sim::SimResult result;                         // timeline "predicted"
  std::vector<sched::Bytes> peak_activation_bytes;  // per device, comparable with StepResult's
  // Per device: the contention slow-down the simulator applied, 1 + (factor - 1) * overlap.
  std::vector<double> device_slowdown;
};

// What a replicated run adds to a stage, measured on its own collectives (hw/dist/comm_profile.h):
// REDUCE_GRAD's reduction, ZeRO-1's all-gather of the parameters and the optimizer step.
struct ReplicaStageCosts {
  sched::Nanoseconds reduce_grad_ns = 0;
  sched::Nanoseconds param_gather_ns = 0;
  sched::Nanoseconds optimizer_step_ns = 0;
};

// Executor attribution of activation memory (the counting allocator charges an allocation to
// the device whose worker made it): a stage's output is charged to its own device while the
// next stage holds it, and the first stage's input (data made by the main thread) to nobody.
// So under re-materialization, stage s "keeps" its output per micro-batch in flight (the last
// stage keeps nothing but its loss): input_bytes(s) = output_bytes(s) for s < K-1, else 0.
// Without re-materialization the stash already holds the output; nothing changes.
void apply_executor_memory(sim::CostModel& costs, bool recompute);

// Stage times, forwards without the graph and backward temporaries come from the spec; the
// cluster must have at least as many devices as the schedule, and its contention factor slows
// devices where they compute at once (sim/engine/contention.h). `profile` (may be null) supplies
// each stage's temporaries measured on the stage as a whole when it measured exactly this
// partition. `replay` (may be null; measured on this schedule and partition) replaces the stage
// times and gives each device its own contention factor; its times are this machine's, so the
// devices' speeds are 1. `replicas` (may be null; one a stage) times each stage's REDUCE_GRAD
// (one bucket), ZeRO-1's gather and the optimizer step; `config` is then one replica's (its batch
// the replica's share).
sched::Result<Prediction> predict_run(const RunConfig& config, const sched::Schedule& schedule,
                                      const sim::Partition& partition, const sim::ModelSpec& spec,
                                      const sim::ClusterSpec& cluster, const Profile* profile,
                                      const ScheduleReplay* replay = nullptr,
                                      const std::vector<ReplicaStageCosts>* replicas = nullptr);

}  // namespace pipeworks::hw
