// What the zero-bubble files (zero_bubble.cc, zb_v_timed.cc, v_schedules.cc) share and the public
// zero_bubble.h does not offer: the action shorthands, the check of stage times and the test for
// times the timed rules leave alone. Defined in zero_bubble.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/action.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sched/zero_bubble.h"

namespace pipeworks::sched::detail {

constexpr Action forward(int stage, int m) { return {stage, ActionKind::kForward, m}; }
constexpr Action input_grad(int stage, int m) { return {stage, ActionKind::kBackwardInput, m}; }
constexpr Action weight_grad(int stage, int m) { return {stage, ActionKind::kBackwardWeight, m}; }
constexpr Action full_backward(int stage, int m) { return {stage, ActionKind::kBackward, m}; }

// Ok when there is one entry of times per stage, each from 1 to kMaxStageTime, and the hand-off
// from 0 to kMaxStageTime; else an error naming `kind`.
Status check_stage_times(const char* kind, const ScheduleShape& shape, const std::vector<StageTimes>& times,
                         std::int64_t handoff);

// Whether every stage has F = I = W, the same on all, and there is no hand-off: unit time scaled,
// where the timed rules keep the unit-time order.
bool unit_like(const std::vector<StageTimes>& times, std::int64_t handoff);

}  // namespace pipeworks::sched::detail
