// Two modes among a run's steps: found with exact bounds, and one mode or too few steps are none
// (step_modes.h).
#include <catch2/catch.hpp>

#include "hw/run/step_modes.h"

namespace pipeworks::hw {
namespace {

constexpr sched::Nanoseconds kUs = 1000;

TEST_CASE("step modes: the header's eight steps split at the widest gap") {
  const std::vector<sched::Nanoseconds> steps = {26'300 * kUs, 41'500 * kUs, 26'500 * kUs, 27'700 * kUs,
                                                 26'900 * kUs, 41'900 * kUs, 27'100 * kUs, 27'400 * kUs};
  const auto modes = two_modes(steps);
  REQUIRE(modes.has_value());
  CHECK(modes->fast_steps == 6);
  CHECK(modes->fast_min_ns == 26'300 * kUs);
  CHECK(modes->fast_max_ns == 27'700 * kUs);
  CHECK(modes->slow_steps == 2);
  CHECK(modes->slow_min_ns == 41'500 * kUs);
  CHECK(modes->slow_max_ns == 41'900 * kUs);
  CHECK(describe(*modes) == "steps fall into two modes: 26.30 ms-27.70 ms (6 steps) and 41.50 ms-41.90 ms (2 steps)");
}

TEST_CASE("step modes: spread without a gap, a lone outlier and too few steps make one mode") {
  // 10-40% spread in even steps: no gap above 25%.
  CHECK_FALSE(two_modes({10'000, 11'000, 12'100, 13'300, 14'000}).has_value());
  // One slow step alone is an outlier, not a mode.
  CHECK_FALSE(two_modes({10'000, 10'100, 10'200, 10'300, 20'000}).has_value());
  CHECK_FALSE(two_modes({10'000, 20'000, 30'000}).has_value());
  CHECK_FALSE(two_modes({}).has_value());
  // Two and two: modes.
  CHECK(two_modes({10'000, 10'100, 20'000, 20'100}).has_value());
}

}  // namespace
}  // namespace pipeworks::hw
