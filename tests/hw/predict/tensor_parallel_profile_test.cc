// A tensor-parallel rank's profile (hw/predict/tensor_parallel_profile.h): its layers' all-reduces
// counted as the shard runs them, and a profile of rank 0's shard whose spec carries them, so the
// simulator can time them on a link.
#include "hw/hw_test_support.h"

#include <catch2/catch.hpp>

#include <ostream>

#include "hw/predict/profiler.h"
#include "hw/predict/tensor_parallel_profile.h"

namespace pipeworks::hw {

// How a failed comparison prints a layer's counts: {forward, backward, bytes}.
std::ostream& operator<<(std::ostream& out, const LayerCollectives& c) {
  return out << "{" << c.forward << ", " << c.backward << ", " << c.bytes << "}";
}

namespace {

ModelConfig small_mlp() {
  ModelConfig m;
  m.kind = ModelKind::kMlp;
  m.depth = 4;
  m.width = 16;
  return m;
}

TEST_CASE("tensor-parallel collectives: the mlp's pairs, g forward on a row, f backward on a column") {
  // fc0 (column) on the data: no input gradient, so no all-reduce; fc1 (row): the partial outputs,
  // forward; fc2 (column): its input's gradient, backward; fc3 (row) forward; the head whole.
  // Each buffer is one micro-batch of 3 samples x 16 floats.
  auto counted = count_layer_collectives(small_mlp(), 2, 3);
  REQUIRE(counted.ok());
  const std::vector<LayerCollectives> expected{{0, 0, 0}, {1, 0, 192}, {0, 1, 192}, {1, 0, 192}, {0, 0, 0}};
  CHECK(*counted == expected);
}

TEST_CASE("tensor-parallel collectives: a transformer encoder layer all-reduces twice each way") {
  ModelConfig m = testing::tiny_transformer();  // 3 encoder layers, 4 tokens of width 8
  auto counted = count_layer_collectives(m, 2, 2);
  REQUIRE(counted.ok());
  int encoders = 0;
  for (const LayerCollectives& c : *counted) {
    if (c.forward == 0 && c.backward == 0) continue;
    ++encoders;
    CHECK(c.forward == 2);
    CHECK(c.backward == 2);
    CHECK(c.bytes == 2 * 4 * 8 * 4);  // (b, s, h) floats
  }
  CHECK(encoders == 3);
  CHECK_THAT(count_layer_collectives(m, 1, 2).error().message, Catch::Contains("tp 1"));
  m.ff_width = 17;
  CHECK_FALSE(count_layer_collectives(m, 2, 2).ok());
}

TEST_CASE("profile of a tensor-parallel rank: its shard's times, its collectives in the spec") {
  ProfileOptions o;
  o.model = small_mlp();
  o.microbatch_sizes = {2, 4};
  o.warmup = 1;
  o.repetitions = 2;
  o.measure_machine = false;
  o.measure_stage_temporaries = false;
  o.tensor_parallel = 2;
  auto profile = profile_model(o);
  REQUIRE(profile.ok());
  const sim::ModelSpec& spec = profile->spec;
  CHECK(spec.tensor_parallel == 2);
  REQUIRE(spec.layers.size() == 5);
  CHECK_FALSE(spec.layers[0].tensor_parallel);
  REQUIRE(spec.layers[1].tensor_parallel);
  CHECK(spec.layers[1].tensor_parallel->forward_collectives == 1);
  CHECK(spec.layers[1].tensor_parallel->backward_collectives == 0);
  CHECK(*spec.layers[1].tensor_parallel->collective_bytes.at(4) == 4 * 16 * 4);
  REQUIRE(spec.layers[2].tensor_parallel);
  CHECK(spec.layers[2].tensor_parallel->backward_collectives == 1);
  // A split layer holds half its weights (a row-parallel bias stays whole); the head all of its.
  CHECK(spec.layers[0].param_bytes == (8 * 16 + 8) * 4);
  CHECK(spec.layers[1].param_bytes == (16 * 8 + 16) * 4);
  CHECK(spec.layers[4].param_bytes == (16 * 16 + 16) * 4);
  CHECK_THAT(spec.description, Catch::Contains("one rank of 2 tensor-parallel ranks"));
  o.measure_stage_temporaries = true;
  CHECK_THAT(profile_model(o).error().message, Catch::Contains("unsharded model"));
}

}  // namespace
}  // namespace pipeworks::hw
