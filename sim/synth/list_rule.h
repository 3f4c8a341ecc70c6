// The zero-bubble authors' greedy list heuristic (Qi et al. 2024, section 3's automatic
// scheduling), run on the real stage times: whenever a device is free it runs
//
//   1. its oldest W, when it owes more W's than the policy lets it defer,
//   2. else its next backward (I, or B on a stage without split) if its gradient has arrived,
//   3. else its next F if its input has arrived and its in-flight micro-batches (F run, W or B
//      not yet) stay under the stage's limit,
//   4. else its oldest W, else it waits for a neighbour's result.
//
// Limits of K-s and no deferral give 1F1B's order with split backwards, limits of 2K-1 and
// unbounded deferral ZB-H2's (zero_bubble.h); the search tries settings between (policies.h).
// Event-driven like sched::zb_h2_timed: a device decides only when its own action ends or a
// neighbour's result arrives, so the time is proportional to the 3KM actions.
//
// Where a device holds several stages (a placement, device_memory.h) it decides among them by the
// same rule: a forced W is the oldest owed W of its stages (the one whose I ended first), a
// ready backward goes before a ready forward, and among its stages the one nearest the loss
// (the highest) runs its backward or forward first, as ZB-V does with its later chunk; an F
// must also keep the device's held activations and its later stages' reserve within the cap.
// With one stage per device this is the rule above, action for action.
#pragma once

#include <compare>
#include <vector>

#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/synth/device_memory.h"
#include "sim/synth/stage_times.h"

namespace pipeworks::sim {

struct ListPolicy {
  std::vector<int> in_flight_limit;       // per stage, at least 1
  std::vector<int> max_deferred_weights;  // per stage, at least 0 (M or more: never forced)
  friend auto operator<=>(const ListPolicy&, const ListPolicy&) = default;
  friend bool operator==(const ListPolicy&, const ListPolicy&) = default;
};

// The compute-only schedule (stage s on device s) the rule builds; an error when a limit is
// below 1 or the sizes disagree.
sched::Result<sched::Schedule> list_schedule(const std::vector<SynthStageTimes>& times, int num_microbatches,
                                             const ListPolicy& policy);

// The same with stage s on device memory.device_of[s] and each F admitted against its device's
// cap (device_memory.h); a memory with no placement is the call above. An error also when the
// placement's size disagrees.
sched::Result<sched::Schedule> list_schedule(const std::vector<SynthStageTimes>& times, int num_microbatches,
                                             const ListPolicy& policy, const DeviceMemory& memory);

}  // namespace pipeworks::sim
