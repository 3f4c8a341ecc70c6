// How many layer ranges a profile measures (hw/predict/stage_memory.h): every range while the
// work is within the budget, else the longest ranges that fit, so the work stays bounded however
// many layers a model has (every range of L layers would take ~L^3/6 layer runs).
#include <catch2/catch.hpp>

#include "hw/predict/stage_memory.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("range budget: layer runs of ranges up to W of L layers, counted one range at a time") {
  CHECK(range_layer_runs(1, 1) == 1);
  CHECK(range_layer_runs(3, 3) == 3 * 1 + 2 * 2 + 1 * 3);
  CHECK(range_layer_runs(3, 1) == 3);
  CHECK(range_layer_runs(3, 10) == range_layer_runs(3, 3));
  CHECK(range_layer_runs(100, 100) == 171'700);  // sum n (101 - n)
}

TEST_CASE("range budget: every range of a 48-layer model, bounded ranges beyond, a request taken as given") {
  CHECK(measured_range_layers(1, 0) == 1);
  CHECK(measured_range_layers(48, 0) == 48);  // 19,600 runs: still every range
  for (int layers : {49, 300, 1000, 100'000}) {
    CAPTURE(layers);
    const int w = measured_range_layers(layers, 0);
    CHECK(w >= 1);
    CHECK(w < layers);
    CHECK((w == 1 || range_layer_runs(layers, w) <= kRangeLayerBudget));
    CHECK(range_layer_runs(layers, w + 1) > kRangeLayerBudget);
  }
  CHECK(measured_range_layers(300, 0) < 300);
  CHECK(measured_range_layers(300, 5) == 5);
  CHECK(measured_range_layers(3, 5) == 3);
}

}  // namespace
}  // namespace pipeworks::hw
