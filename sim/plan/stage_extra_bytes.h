// What the executor holds of each stage beyond the simulator's stashes, from the model spec alone
// (StageCost::extra, sim/engine/cost_model.h), so that every command that asks what a run would
// hold (run --predict, synthesize) composes it by one rule. A profile's per-stage measurement,
// where it has one for the partition, replaces the temporaries (hw/predict/prediction.h).
//
//   temporaries: the spec's measured ones for the stage's layer range (StageTemporaries), else
//                composed from its layers (composed_backward_bytes below)
//   split_held:  what I keeps for W, the stage's layers' split_held_bytes
#pragma once

#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/partition.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {

// Bytes above the simulated stash while a stage's backward runs layers [begin, end) from the last
// down: at layer l the stashes of the layers after it are already freed, the gradient of its
// output (made by layer l+1, or received) is live, and its own temporaries come on top:
//   later = max over l of  transient(l) + output(l) [l < end-1] - sum_{j > l} stash(j),  >= 0
// In the step's first backward the parameter gradients of l and the layers after it are new:
//   first = max over l of  later's term + sum_{j >= l} grad(j)
// The transients come from the spec (0 where it states none); no forward temporaries.
sched::Result<StageExtraBytes> composed_backward_bytes(const ModelSpec& spec, int begin, int end, int size);

// What a stage holds from I to W (hw/exec/stage_compute.h): each layer's split_held_bytes
// (default: its output's gradient; the last stage's loss output's, a scalar, counted as nothing).
// Nothing on the first stage, whose I has nothing to compute: W runs from the output's gradient,
// which stays counted on the device of stage 1 that made it (sim/engine/executor_peak.h).
sched::Result<Bytes> split_held_bytes(const ModelSpec& spec, int begin, int end, bool last, int size);

// Per stage of `partition` at `size` samples per micro-batch: the temporaries as above and
// split_held. An error where a byte count overflows.
sched::Result<std::vector<StageExtraBytes>> spec_stage_extra_bytes(const ModelSpec& spec, const Partition& partition,
                                                                   int size);

// Sets costs.stages[s].extra to `extra[s]` for every stage both have.
void set_stage_extra_bytes(CostModel& costs, const std::vector<StageExtraBytes>& extra);

}  // namespace pipeworks::sim
