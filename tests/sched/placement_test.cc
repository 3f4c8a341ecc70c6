// The one placement rule (sched/placement.h): the pictures at the top of the header, the order
// problems come in, and its users' words for them.
#include "sched/placement.h"

#include <catch2/catch.hpp>

#include "sched/generators.h"
#include "sched/passes.h"

using namespace pipeworks::sched;
using Rule = PlacementProblem::Rule;

namespace {

std::string first_message(const std::vector<int>& placement, int num_stages, int num_devices) {
  const auto problems = placement_problems(placement, num_stages, num_devices);
  return problems.empty() ? "" : problems.front().message;
}

}  // namespace

TEST_CASE("placement problems: the header's pictures", "[placement]") {
  CHECK(placement_problems({0, 1, 1, 0}, 4, 2).empty());
  CHECK(first_message({0, 1}, 3, 2) == "placement names 2 stages but the schedule has 3");
  CHECK(first_message({0, 5}, 2, 2) == "stage 1 is placed on device 5, outside 0..1");
  CHECK(first_message({0, 2}, 2, 3) == "placement leaves device 1 without a stage (devices must be 0..2)");
}

TEST_CASE("placement problems: a length alone, then stages in order, then idle devices", "[placement]") {
  const auto wrong_length = placement_problems({-1, 9}, 3, 2);
  REQUIRE(wrong_length.size() == 1);
  CHECK(wrong_length[0].rule == Rule::kLength);

  const auto problems = placement_problems({-1, 0, 7, 0}, 4, 3);
  REQUIRE(problems.size() == 4);
  CHECK((problems[0].rule == Rule::kOffDevices && problems[0].stage == 0 && problems[0].device == -1));
  CHECK((problems[1].rule == Rule::kOffDevices && problems[1].stage == 2 && problems[1].device == 7));
  CHECK((problems[2].rule == Rule::kIdleDevice && problems[2].device == 1));
  CHECK((problems[3].rule == Rule::kIdleDevice && problems[3].device == 2));
}

TEST_CASE("check_placement accepts an idle device program, refuses a stage off the programs", "[placement]") {
  Schedule s = *gpipe(ScheduleShape{2, 2, {}});
  CHECK(check_placement(s).ok());
  s.programs.emplace_back();  // a third device program that hosts no stage
  CHECK(check_placement(s).ok());
  s.placement = {0, 3};
  REQUIRE_FALSE(check_placement(s).ok());
  CHECK(check_placement(s).error().message == "stage 1 is placed on device 3, outside 0..2");
  s.placement = {0};
  CHECK(check_placement(s).error().message == "placement names 1 stages but the schedule has 2");
}

TEST_CASE("the placement's users word its problems the same way", "[placement]") {
  // A generator's shape: its devices are the ones it names, at most K.
  CHECK(resolve_placement(ScheduleShape{2, 2, {0, 2}}).error().message == "stage 1 is placed on device 2, outside 0..1");
  CHECK(resolve_placement(ScheduleShape{3, 2, {0, 2, 2}}).error().message ==
        "placement leaves device 1 without a stage (devices must be 0..2)");
  CHECK(resolve_placement(ScheduleShape{2, 2, {0, 2147483647}}).error().message ==
        "stage 1 is placed on device 2147483647, outside 0..1");
  CHECK(resolve_placement(ScheduleShape{3, 2, {0, 1}}).error().message ==
        "placement names 2 stages but the schedule has 3");
  // lower_comm, with its prefix.
  Schedule s = *gpipe(ScheduleShape{2, 2, {}});
  s.placement = {0, 4};
  CHECK(lower_comm(s).error().message == "lower_comm: stage 1 is placed on device 4, outside 0..1");
}
