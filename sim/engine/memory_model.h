// What a device holds, and when it changes: the memory rules of the simulator in one place.
//
// Static (from time 0 to the end): params + grads + optimizer state of every stage placed on
// the device. Activations, per (stage, micro-batch), changed at the END of an action:
//
//   without re-materialization (no R(s,m) in the schedule):
//     F end  +stash_bytes                       B end (or W end when the schedule splits the
//                                               backward into I/W)  -stash_bytes
//
//   with re-materialization (R(s,m) present):
//     F end  +input_bytes   R end  +stash_bytes   B end (or W end)  -(input_bytes + stash_bytes)
//
// With an I/W split the activations are released only when W ends: W still needs the stashed
// inputs of the layers to form weight gradients, so I cannot free them.
//
//   d0 (GPipe, M=2, no recompute):   F0    F1    .    B0    B1
//   activations held:                +1    +1         -1    -1   -> peak 2 stashes
#pragma once

#include <vector>

#include "sched/action_index.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

struct StaticMemory {
  Bytes param_bytes = 0;
  Bytes grad_bytes = 0;
  Bytes optimizer_bytes = 0;
  Bytes total_bytes() const { return param_bytes + grad_bytes + optimizer_bytes; }
};

// One entry per device of the schedule: the sum over the stages placed on it. Sizes were
// bounded by check_cost_model, so the sums cannot overflow for any realistic stage count;
// callers pass a checked model.
std::vector<StaticMemory> static_memory(const sched::Schedule& schedule, const CostModel& model);

// Change of activation bytes on the action's device when `action` ends (see the table above).
// 0 for SEND/RECV. `index` must index `schedule`'s actions (it decides whether R(s,m) and
// W(s,m) are present); the stage must be in range of `model.stages`.
Bytes activation_delta_bytes(const sched::Action& action, const sched::ActionIndex& index, const CostModel& model);
// The same rule once the lookups are done: `recompute` = R(s,m) is in the schedule, `split` =
// W(s,m) is (the simulator's op table resolves both from its own flat index).
Bytes activation_delta_bytes(sched::ActionKind kind, const StageCost& cost, bool recompute, bool split);

// The memory figures of one device after a run.
struct MemoryReport {
  Bytes param_bytes = 0;
  Bytes grad_bytes = 0;
  Bytes optimizer_bytes = 0;
  Bytes peak_activation_bytes = 0;  // activations held at the moment of the peak
  Bytes peak_bytes = 0;             // static + peak activations
  Bytes capacity_bytes = 0;         // device_memory_bytes (0 = unknown / unlimited)
  bool fits = true;                 // capacity 0 or peak <= capacity
};

MemoryReport memory_report(const StaticMemory& fixed, Bytes peak_activation_bytes, Bytes capacity_bytes);

}  // namespace pipeworks::sim
