// Schedule validation: every structural, ordering, communication and deadlock problem of a
// Schedule, each as a located Diagnostic (see diagnostic.h for the classes). Never throws,
// aborts or hangs; linear in the actions but for the deadlock search (bench/sched_bench.cc times
// K = 64, M = 1024 lowered, 390k actions).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/diagnostic.h"
#include "sched/limits.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

struct ValidateOptions {
  // The placement was inferred from where each stage's actions sit (CSV import). An action on
  // another device then means its stage's actions are on two devices (kStageOnTwoDevices)
  // rather than on the wrong one (kWrongDevice).
  bool placement_inferred = false;
};


// Every diagnostic of `schedule`, in a stable order: shape and placement, then per-action
// problems in program order, composite marks (composite_rules.h), per-stage problems by stage,
// the stage-level actions device by device (stage_actions.h), communication, and last a deadlock.
// The deadlock search runs only when nothing else is wrong: a structural error (a backward
// before its forward on one device) already implies a cycle and is reported more precisely.
// An empty result means the schedule is valid.
std::vector<Diagnostic> validate(const Schedule& schedule, const ValidateOptions& options = {});

}  // namespace pipeworks::sched
