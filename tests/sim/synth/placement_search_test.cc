// The placements synthesis searches for K stages on D devices, by hand.
#include <catch2/catch.hpp>

#include "sim/synth/placement_search.h"

namespace pipeworks::sim {
namespace {

std::vector<std::string> names(const std::vector<PlacementCandidate>& candidates) {
  std::vector<std::string> out;
  for (const PlacementCandidate& c : candidates) out.push_back(c.name);
  return out;
}

TEST_CASE("placement search: one per device, the V and the loop where K places on D", "[synth]") {
  CHECK(names(candidate_placements(4, 4)) == std::vector<std::string>{"one per device"});
  CHECK(candidate_placements(4, 4).front().placement == std::vector<int>{0, 1, 2, 3});
  const auto two = candidate_placements(8, 4);
  REQUIRE(names(two) == std::vector<std::string>{"V", "loop of 2"});
  CHECK(two[0].placement == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
  CHECK(two[1].placement == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  const auto three = candidate_placements(6, 2);
  REQUIRE(names(three) == std::vector<std::string>{"loop of 3"});
  CHECK(three[0].placement == std::vector<int>{0, 1, 0, 1, 0, 1});
  CHECK(candidate_placements(6, 4).empty());
  CHECK(candidate_placements(2, 4).empty());
  CHECK(candidate_placements(4, 0).empty());
}

}  // namespace
}  // namespace pipeworks::sim
