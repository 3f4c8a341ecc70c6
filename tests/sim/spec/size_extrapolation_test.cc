// A spec read outside its profiled micro-batch sizes says so, with exact figures (size_extrapolation.h).
#include <catch2/catch.hpp>

#include "sim/spec/model_presets.h"
#include "sim/spec/size_extrapolation.h"

namespace pipeworks::sim {
namespace {

// A layer profiled at sizes 2, 4 and 8 (forward and output bytes).
LayerSpec profiled_layer(std::string name) {
  LayerSpec l;
  l.name = std::move(name);
  l.forward = ScaledDuration{0, 90, {{2, 200}, {4, 380}, {8, 700}}};
  l.output_bytes = ScaledBytes{0, 32, {{2, 64}, {4, 128}, {8, 256}}};
  return l;
}

// Two profiled layers and one whose costs are a line.
ModelSpec profiled_2_to_8() {
  ModelSpec spec;
  spec.name = "profiled";
  LayerSpec line;
  line.name = "line";
  line.forward = ScaledDuration{10, 5};
  spec.layers = {profiled_layer("l0"), profiled_layer("l1"), line};
  return spec;
}

TEST_CASE("size extrapolation: none inside the profiled sizes, every table outside them counted") {
  const ModelSpec spec = profiled_2_to_8();
  for (int inside : {2, 3, 4, 7, 8}) {
    INFO(inside);
    CHECK_FALSE(size_extrapolation(spec, inside).has_value());
  }
  const auto above = size_extrapolation(spec, 32);
  REQUIRE(above.has_value());
  CHECK(above->smallest == 2);
  CHECK(above->largest == 8);
  CHECK(above->tables == 4);  // two layers' forward and output bytes; the line is no table
  CHECK(describe(*above) == "micro-batch size 32 is outside the profiled sizes 2..8 (4x the largest): 4 tables "
                            "extrapolated");
  const auto below = size_extrapolation(spec, 1);
  REQUIRE(below.has_value());
  CHECK(describe(*below) == "micro-batch size 1 is outside the profiled sizes 2..8 (0.5x the smallest): 4 tables "
                            "extrapolated");
}

TEST_CASE("size extrapolation: a table of its own range counts alone, a preset from formulas never") {
  ModelSpec spec = profiled_2_to_8();
  spec.layers[0].stash_bytes = ScaledBytes{0, 8, {{1, 8}, {16, 128}}};
  const auto beyond = size_extrapolation(spec, 12);
  REQUIRE(beyond.has_value());
  CHECK(beyond->tables == 4);  // the stash table spans 12; the four 2..8 tables do not
  CHECK(describe(*beyond) == "micro-batch size 12 is outside the profiled sizes 2..8 (1.5x the largest): 4 tables "
                             "extrapolated");
  spec.layers[0].stash_bytes = ScaledBytes{0, 8, {{4, 32}, {16, 128}}};
  const auto small = size_extrapolation(spec, 3);
  REQUIRE(small.has_value());
  CHECK(small->tables == 1);  // only the stash table starts above 3
  CHECK(small->smallest == 4);
  for (const char* preset : {"gpt2-small", "uniform"}) {
    INFO(preset);
    auto formulas = model_preset(preset);
    REQUIRE(formulas.ok());
    CHECK_FALSE(size_extrapolation(*formulas, 1024).has_value());
  }
}

}  // namespace
}  // namespace pipeworks::sim
