// The greedy list rule: ZB-H2's order at its setting, the in-flight limits always kept, B on
// stages without split, and bad settings refused.
#include <catch2/catch.hpp>

#include "sched/validate.h"
#include "sched/zero_bubble.h"
#include "sim/synth/list_rule.h"
#include "sim/synth/stage_times.h"
#include "sim/synth/synth_test_costs.h"

namespace {

using pipeworks::sim::ListPolicy;

std::vector<pipeworks::sim::SynthStageTimes> times_of(const pipeworks::sim::CostModel& costs) {
  auto times = pipeworks::sim::synth_stage_times(costs);
  REQUIRE(times.ok());
  return *times;
}

ListPolicy uniform_policy(int stages, int limit, int deferred) {
  return ListPolicy{std::vector<int>(static_cast<std::size_t>(stages), limit),
                    std::vector<int>(static_cast<std::size_t>(stages), deferred)};
}

}  // namespace

TEST_CASE("synth list rule at 2K-1 in flight and no forced W is ZB-H2", "[synth]") {
  for (const auto& [k, m] : {std::pair{3, 6}, std::pair{4, 8}, std::pair{2, 1}}) {
    const auto costs = pipeworks::test::synth_costs(k, 1, 1, 1);
    auto built = pipeworks::sim::list_schedule(times_of(costs), m, uniform_policy(k, 2 * k - 1, m));
    REQUIRE(built.ok());
    auto zb = pipeworks::sched::zb_h2(pipeworks::sched::ScheduleShape{k, m, {}});
    REQUIRE(zb.ok());
    CHECK(built->programs == zb->programs);
  }
}

TEST_CASE("synth list rule keeps every stage within its in-flight limit", "[synth]") {
  const auto costs = pipeworks::test::synth_costs(4, 3, 4, 2);
  for (int limit = 1; limit <= 7; ++limit) {
    for (const int deferred : {0, 1, 3, 16}) {
      auto built = pipeworks::sim::list_schedule(times_of(costs), 16, uniform_policy(4, limit, deferred));
      REQUIRE(built.ok());
      for (const int held : pipeworks::sched::peak_in_flight(*built)) CHECK(held <= limit);
      CHECK(pipeworks::sched::validate(*built).empty());
    }
  }
}

TEST_CASE("synth list rule runs B on a stage without weights", "[synth]") {
  auto costs = pipeworks::test::synth_costs(3, 2, 2, 1);
  costs.stages[1].backward_weight_ns = 0;
  costs.stages[1].backward_ns = 2;
  auto built = pipeworks::sim::list_schedule(times_of(costs), 4, uniform_policy(3, 3, 4));
  REQUIRE(built.ok());
  for (const auto& a : built->programs[1]) CHECK(a.kind != pipeworks::sched::ActionKind::kBackwardWeight);
  CHECK(built->programs[1].size() == 8);
  CHECK(pipeworks::sched::validate(*built).empty());
  CHECK(pipeworks::test::simulate_lowered(*built, costs).makespan_ns > 0);
}

TEST_CASE("synth list rule refuses a limit below one or sizes that disagree", "[synth]") {
  const auto times = times_of(pipeworks::test::synth_costs(2, 1, 1, 1));
  CHECK_FALSE(pipeworks::sim::list_schedule(times, 4, uniform_policy(2, 0, 1)).ok());
  CHECK_FALSE(pipeworks::sim::list_schedule(times, 4, uniform_policy(2, 1, -1)).ok());
  CHECK_FALSE(pipeworks::sim::list_schedule(times, 4, uniform_policy(3, 1, 1)).ok());
}
