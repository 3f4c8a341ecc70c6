// Schedules whose rule decides on the clock, regenerated on a cost model's stage times: ZB-H2's
// list rule (sched/zero_bubble.h) written for unit time leaves gaps when F, I and W differ (W
// cheaper than F and I, the first stage's I given to its W); run on the real times it fills them
// (tests/sim/engine/timed_orders_test.cc: on its bound where the unit-time order is 5% over). `simulate`, `sweep` and `plan` time these kinds so; `run --schedule zb-h2` runs
// the unit-time order (it has no cost model before it runs).
#pragma once

#include "sched/generators.h"
#include "sched/schedule.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// zb-h2.
bool decides_on_times(sched::ScheduleKind kind);

// The schedule of `kind` with generated's stages, micro-batches and placement, its rule run on
// `costs`' F, I and W per stage and the slowest stage boundary's hand-off (latency, send overhead
// and the stage output's bytes on the link); times scaled down together where one exceeds
// sched::kMaxStageTime (the rule depends on their ratios only). `generated` unchanged for
// other kinds and where stages share a device.
sched::Result<sched::Schedule> timed_schedule(sched::ScheduleKind kind, const sched::Schedule& generated,
                                              const CostModel& costs);

}  // namespace pipeworks::sim
