// Schedules regenerated on a cost model's times (sim/engine/timed_orders.h): ZB-H2's rule on the
// stage times and hand-off, every other kind and shared placements left as generated.
#include <catch2/catch.hpp>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/zero_bubble.h"
#include "sim/engine/simulator.h"
#include "sim/engine/timed_orders.h"

using namespace pipeworks;
using sched::ScheduleKind;

namespace {

// K stages of F, I, W with a hand-off of `handoff` ns on every link.
sim::CostModel split_costs(int k, sim::Nanoseconds f, sim::Nanoseconds i, sim::Nanoseconds w, sim::Nanoseconds handoff) {
  sim::CostModel costs = sim::uniform_cost_model(k, f, i + w, handoff);
  for (sim::StageCost& stage : costs.stages) {
    stage.backward_input_ns = i;
    stage.backward_weight_ns = w;
  }
  return costs;
}

sim::Nanoseconds simulated(const sched::Schedule& schedule, const sim::CostModel& costs) {
  auto lowered = sched::lower_comm(schedule);
  REQUIRE(lowered.ok());
  auto result = sim::simulate(*lowered, costs, sim::SimOptions{});
  REQUIRE(result.ok());
  return result->makespan_ns;
}

}  // namespace

TEST_CASE("timed orders: zb-h2 runs its rule on the cost model's times and the slowest hand-off", "[timed_orders]") {
  const sim::CostModel costs = split_costs(4, 30, 20, 5, 3);
  const auto unit = sched::generate(ScheduleKind::kZbH2, {4, 12, {}}).value();
  const auto timed = sim::timed_schedule(ScheduleKind::kZbH2, unit, costs);
  REQUIRE(timed.ok());
  const std::vector<sched::StageTimes> times(4, {30, 20, 5});
  CHECK(*timed == sched::zb_h2_timed({4, 12, {}}, times, 3).value());
  CHECK(simulated(*timed, costs) < simulated(unit, costs));
  // Times past the rule's clock are scaled down together: the same decisions.
  const sim::CostModel slow = split_costs(4, 30 * sched::kMaxStageTime, 20 * sched::kMaxStageTime,
                                          5 * sched::kMaxStageTime, 3 * sched::kMaxStageTime);
  CHECK(sim::timed_schedule(ScheduleKind::kZbH2, unit, slow).value() == *timed);
}

TEST_CASE("timed orders: other kinds and stages sharing a device keep their generated order", "[timed_orders]") {
  const sim::CostModel costs = split_costs(4, 30, 20, 5, 3);
  for (const ScheduleKind kind : {ScheduleKind::kOneFOneB, ScheduleKind::kZbH1, ScheduleKind::kGPipe}) {
    const auto unit = sched::generate(kind, {4, 8, {}}).value();
    CHECK(sim::timed_schedule(kind, unit, costs).value() == unit);
  }
  CHECK(sim::decides_on_times(ScheduleKind::kZbV));
  CHECK(sim::decides_on_times(ScheduleKind::kZbH2));
  auto off_the_v = sched::generate(ScheduleKind::kZbV, {4, 8, {}}).value();  // zb-v generates on its V only
  off_the_v.placement = {0, 1, 0, 1};
  CHECK(sim::timed_schedule(ScheduleKind::kZbV, off_the_v, costs).value() == off_the_v);
  const auto shared = sched::generate(ScheduleKind::kZbH2, {4, 8, {0, 1, 1, 0}}).value();
  CHECK(sim::timed_schedule(ScheduleKind::kZbH2, shared, costs).value() == shared);
}

TEST_CASE("timed orders: ZB-H2 on the real times reaches its bound where the unit-time order leaves gaps",
          "[timed_orders]") {
  // The last stage starts after K-1 forwards and hand-offs and then has M(F+I+W) of work, and
  // its 2K-1 held W's cannot cover the K-1 I's going up with their hand-offs and stage 0's last
  // W: the bound (K-1)(F+c) + M(F+I+W) + (K-1) max(0, I+c-2W) (closed_form_makespan.h). Issue
  // 39's costs (ms x 1000), W cheaper than F and I; the first stage sends no input gradient
  // back, so the cost-model builder gives its I's work to its W (the same I + W after its last
  // I, so the same bound).
  const int k = 8, m = 24;
  const sim::Nanoseconds f = 18'500, i = 18'100, w = 9'300, c = 600;
  sim::CostModel costs = split_costs(k, f, i, w, c);
  costs.stages[0].backward_input_ns = 0;
  costs.stages[0].backward_weight_ns = i + w;
  const sim::Nanoseconds bound = (k - 1) * (f + c) + m * (f + i + w) + (k - 1) * (i + c - 2 * w);
  const auto unit = sched::generate(ScheduleKind::kZbH2, {k, m, {}}).value();
  const sim::Nanoseconds unit_order = simulated(unit, costs);
  const sim::Nanoseconds timed_order = simulated(sim::timed_schedule(ScheduleKind::kZbH2, unit, costs).value(), costs);
  INFO("bound " << bound << ", unit-time order " << unit_order << ", timed order " << timed_order);
  CHECK(bound == 1'236'000);
  CHECK(timed_order == bound);
  CHECK(unit_order > bound + bound / 20);  // the unit-time order: more than 5% over
}
