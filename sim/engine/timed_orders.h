// Schedules whose rule decides on the clock, regenerated on a cost model's stage times: ZB-H2's
// list rule (sched/zero_bubble.h) written for unit time leaves gaps when F, I and W differ (W
// cheaper than F and I, the first stage's I given to its W); run on the real times it fills them
// (tests/sim/engine/timed_orders_test.cc: on its bound where the unit-time order is 5% over).
// ZB-V's fixed order (torch's) likewise gives way to sched::zb_v_timed on its V placement.
// `simulate`, `sweep` and `plan` time these kinds so; `run --schedule zb-h2` and `zb-v` run the
// unit-time orders (they have no cost model before they run).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/generators.h"
#include "sched/schedule.h"
#include "sched/zero_bubble.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// zb-h2 and zb-v.
bool decides_on_times(sched::ScheduleKind kind);

// What a timed rule decides on: each stage's F, I and W and the slowest stage boundary's hand-off
// (latency, send overhead and the stage output's bytes on the link), scaled down together where
// one exceeds sched::kMaxStageTime (the rule depends on their ratios only).
struct RuleTimes {
  std::vector<sched::StageTimes> stages;
  std::int64_t handoff = 0;
  // The hand-off, then F, I, W of each stage: the values as one key.
  std::vector<std::int64_t> flat() const;
};

// `costs`' RuleTimes for `kind` on generated's placement; nullopt where the order is not timed:
// other kinds, zb-h2 where stages share a device, zb-v off its V placement.
sched::Result<std::optional<RuleTimes>> rule_times(sched::ScheduleKind kind, const sched::Schedule& generated,
                                                   const CostModel& costs);

// The schedule of `kind` (zb-h2 or zb-v, where rule_times gave `times`) with generated's stages,
// micro-batches and placement, its rule run on `times`. `search_wake_ups` bounds the search
// beyond each rule's order (sched::kOrderSearchWakeUps); sweep and plan pass kSweepOrderSearch.
sched::Result<sched::Schedule> timed_schedule(sched::ScheduleKind kind, const sched::Schedule& generated,
                                              const RuleTimes& times, std::int64_t search_wake_ups);

// The two above: `generated` unchanged where rule_times gives nullopt.
sched::Result<sched::Schedule> timed_schedule(sched::ScheduleKind kind, const sched::Schedule& generated,
                                              const CostModel& costs,
                                              std::int64_t search_wake_ups = sched::kOrderSearchWakeUps);

// What sweep and plan give the search: nothing beyond the rules' orders. A search spends its
// whole budget where no order reaches the bound (I > 2F, say), and a plan simulates thousands of
// configurations within its time target (bench/README.md, "planner"); `simulate` of the chosen
// row searches and can end sooner than the row says, never later.
inline constexpr std::int64_t kSweepOrderSearch = 0;

}  // namespace pipeworks::sim
