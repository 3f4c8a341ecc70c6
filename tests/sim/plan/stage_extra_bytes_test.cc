// The executor's bytes beyond the stashes from a model spec, by hand: temporaries composed from
// the layers or taken from the spec's measured ranges, and what a split backward keeps for W.
#include <catch2/catch.hpp>

#include "sim/plan/stage_extra_bytes.h"

namespace pipeworks::sim {
namespace {

// Three layers; per sample: output 10, stash 4, backward transient 3, parameters 8 bytes (fp32
// gradients 8), and layer 1 keeps 6 for its W.
ModelSpec three_layers() {
  ModelSpec spec;
  spec.name = "three";
  for (const char* name : {"l0", "l1", "l2"}) {
    LayerSpec layer;
    layer.name = name;
    layer.output_bytes = ScaledBytes{0, 10};
    layer.stash_bytes = ScaledBytes{0, 4};
    layer.backward_transient_bytes = ScaledBytes{0, 3};
    layer.param_bytes = 8;
    spec.layers.push_back(layer);
  }
  spec.layers[1].split_held_bytes = ScaledBytes{0, 6};
  return spec;
}

TEST_CASE("stage extra bytes: composed from the layers, what I keeps for W by stage position") {
  const ModelSpec spec = three_layers();
  const Partition partition = explicit_partition({0, 1, 3}, 3).value();
  auto extra = spec_stage_extra_bytes(spec, partition, 2);
  REQUIRE(extra.ok());
  REQUIRE(extra->size() == 2);
  // Stage 0 = layer 0 alone: later = its transient 6; first adds its gradients 8. The first stage's
  // I computes nothing and keeps nothing of its own: W runs from its output's gradient, which
  // stays on stage 1's device (the walk holds it there, executor_peak_test.cc).
  CHECK((*extra)[0] == StageExtraBytes{14, 6, 0, 0, 0});
  // Stage 1 = layers 1, 2 (the last stage): layer 2: transient 6 (output of the loss layer not
  // counted), first + 8; layer 1: 6 + output 20 - stash freed 8 = 18, first 18 + 16 = 34.
  // Held for W: layer 1's 12; layer 2 feeds the loss, nothing.
  CHECK((*extra)[1] == StageExtraBytes{34, 18, 0, 0, 12});
}

TEST_CASE("stage extra bytes: a measured range replaces the composition, not what I keeps for W") {
  ModelSpec spec = three_layers();
  StageTemporaries measured;
  measured.begin = 1;
  measured.end = 3;
  measured.forward = ScaledBytes{5, 0};
  measured.forward_no_grad = ScaledBytes{1, 0};
  measured.first_backward = ScaledBytes{7, 0};
  measured.later_backward = ScaledBytes{2, 0};
  spec.stage_temporaries.push_back(measured);
  auto extra = spec_stage_extra_bytes(spec, explicit_partition({0, 1, 3}, 3).value(), 2);
  REQUIRE(extra.ok());
  CHECK((*extra)[1] == StageExtraBytes{7, 2, 5, 1, 12});
  CostModel costs;
  costs.stages.resize(2);
  set_stage_extra_bytes(costs, *extra);
  CHECK(costs.stages[1].extra == (*extra)[1]);
}

}  // namespace
}  // namespace pipeworks::sim
