// The zero-bubble schedules under the simulator with F, I and W costs: ZB-H1's makespan
// M(F+I+W) + (K-1)(F+I-W), 2W(K-1) less than 1F1B's; ZB-H2 and ZB-V at the least makespan.
#include <catch2/catch.hpp>

#include "sched/generators.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::ScheduleKind;

namespace {

sim::Nanoseconds makespan(ScheduleKind kind, int k, int m, sim::Nanoseconds f, sim::Nanoseconds i,
                          sim::Nanoseconds w) {
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}});
  REQUIRE(schedule.ok());
  sim::CostModel costs = sim::uniform_cost_model(k, f, i + w);
  for (sim::StageCost& c : costs.stages) {
    c.backward_input_ns = i;
    c.backward_weight_ns = w;
  }
  auto result = sim::simulate(*schedule, costs, sim::SimOptions{});
  REQUIRE(result.ok());
  return result->makespan_ns;
}

}  // namespace

TEST_CASE("ZB-H1: makespan M(F+I+W) + (K-1)(F+I-W) where W <= F and W <= I, 2W(K-1) under 1F1B's",
          "[zero_bubble]") {
  const sim::Nanoseconds costs[][3] = {{10, 10, 10}, {20, 10, 10}, {10, 20, 10}, {20, 30, 10}, {30, 20, 5}};
  for (const auto& [f, i, w] : costs) {
    for (int k = 1; k <= 5; ++k) {
      for (const int m : {k, 2 * k, 3 * k + 1}) {
        INFO("F=" << f << " I=" << i << " W=" << w << " K=" << k << " M=" << m);
        const sim::Nanoseconds zb = makespan(ScheduleKind::kZbH1, k, m, f, i, w);
        CHECK(zb == m * (f + i + w) + (k - 1) * (f + i - w));
        CHECK(makespan(ScheduleKind::kOneFOneB, k, m, f, i, w) - zb == 2 * w * (k - 1));
      }
    }
  }
}

TEST_CASE("ZB-H2 and ZB-V with F = I = W: the least makespan, only the forward ramp idle", "[zero_bubble]") {
  constexpr sim::Nanoseconds f = 10;
  for (int p = 1; p <= 5; ++p) {
    for (const int m : {2 * p, 3 * p + 1}) {
      INFO("p=" << p << " M=" << m);
      CHECK(makespan(ScheduleKind::kZbH2, p, m, f, f, f) == 3 * m * f + (p - 1) * f);
      // ZB-V's 2p stages are half as long: F = I = W = f/2 each, p-1 hops of f/2 to ramp up.
      CHECK(makespan(ScheduleKind::kZbV, 2 * p, m, f / 2, f / 2, f / 2) == 3 * m * f + (p - 1) * f / 2);
    }
  }
}
