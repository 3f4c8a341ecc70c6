// The list rule's settings: clipped to the cap's limits, distinct, a few dozen for deep pipelines.
#include <catch2/catch.hpp>

#include <set>

#include "sim/synth/policies.h"

TEST_CASE("synth policies stay within the memory limits and hold no duplicates", "[synth]") {
  const std::vector<int> memory{3, 2, 5};
  const auto policies = pipeworks::sim::list_policies(memory, 8);
  REQUIRE_FALSE(policies.empty());
  std::set<pipeworks::sim::ListPolicy> distinct(policies.begin(), policies.end());
  CHECK(distinct.size() == policies.size());
  for (const auto& p : policies) {
    REQUIRE(p.in_flight_limit.size() == 3);
    for (std::size_t s = 0; s < 3; ++s) {
      CHECK(p.in_flight_limit[s] >= 1);
      CHECK(p.in_flight_limit[s] <= memory[s]);
      CHECK(p.max_deferred_weights[s] >= 0);
      CHECK(p.max_deferred_weights[s] <= 8);
    }
  }
  // ZB-H2's setting under the cap: every limit the cap allows, no W forced.
  CHECK(distinct.contains(pipeworks::sim::ListPolicy{{3, 2, 5}, {8, 8, 8}}));
  // 1F1B's warm-up with each W right after its I.
  CHECK(distinct.contains(pipeworks::sim::ListPolicy{{3, 2, 1}, {0, 0, 0}}));
}

TEST_CASE("synth policies for a deep pipeline are a few dozen settings", "[synth]") {
  const auto policies = pipeworks::sim::list_policies(std::vector<int>(4096, 64), 64);
  CHECK(policies.size() <= 8 * (17 + 8 + 3));
  CHECK(policies.size() >= 8);
}
