// A parallel layout as one value (sim/spec/parallel_layout.h): ranks numbered as Megatron-LM
// numbers them, checked against the example in its megatron/core/parallel_state.py
// (initialize_model_parallel's docstring: 16 GPUs, tensor 2, pipeline 4), groups on nodes, the
// checks and the words of report headlines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/spec/parallel_layout.h"

namespace pipeworks::sim {
namespace {

using Groups = std::vector<std::vector<int>>;

TEST_CASE("parallel layout: Megatron-LM's own example, group for group", "[layout]") {
  const ParallelLayout l{.tp = 2, .pp = 4, .virtual_stages = 1, .dp = 2};
  REQUIRE(l.devices() == 16);
  Groups data, pipelines;
  for (int pp = 0; pp < 4; ++pp) {
    for (int tp = 0; tp < 2; ++tp) data.push_back(dp_group(l, pp, tp));
  }
  for (int dp = 0; dp < 2; ++dp) {
    for (int tp = 0; tp < 2; ++tp) pipelines.push_back(pp_group(l, dp, tp));
  }
  CHECK(data == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(pipelines == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
}

TEST_CASE("parallel layout: rank_of and coord_of are inverse in both orders", "[layout]") {
  for (const RankOrder order : {RankOrder::kTpDpPp, RankOrder::kTpPpDp}) {
    const ParallelLayout l{.tp = 2, .pp = 3, .virtual_stages = 2, .dp = 4, .order = order};
    std::vector<bool> seen(24, false);
    for (int rank = 0; rank < l.devices(); ++rank) {
      const RankCoord c = coord_of(l, rank);
      CHECK(rank_of(l, c) == rank);
      seen[static_cast<std::size_t>(rank)] = true;
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
  }
  // With pp inside dp, a pipeline's ranks are adjacent and a replica's are far apart.
  const ParallelLayout pp_first{.pp = 4, .dp = 2, .order = RankOrder::kTpPpDp};
  CHECK(pp_group(pp_first, 1) == std::vector<int>{4, 5, 6, 7});
  CHECK(dp_group(pp_first, 1) == std::vector<int>{1, 5});
}

TEST_CASE("parallel layout: how a group lies on nodes", "[layout]") {
  // pp 2 x dp 8 on nodes of 8, Megatron's order: each stage's replicas fill one node.
  const ParallelLayout l{.pp = 2, .dp = 8};
  CHECK(group_span(dp_group(l, 1), 8) == GroupSpan{8, 1, true});
  CHECK(group_span(pp_group(l, 0), 8) == GroupSpan{1, 2, true});
  // dp 16 on nodes of 8: 8 ranks on each of 2 nodes, the hierarchical all-reduce's shape.
  CHECK(group_span(dp_group(ParallelLayout{.pp = 1, .dp = 16}, 0), 8) == GroupSpan{8, 2, true});
  // Three ranks on nodes of two: uneven.
  CHECK(group_span({0, 1, 2}, 2) == GroupSpan{2, 2, false});
}

TEST_CASE("parallel layout: a schedule's devices and stages a device as pp and v", "[layout]") {
  const ParallelLayout replicated{.tp = 2, .pp = 1, .virtual_stages = 1, .dp = 4, .zero = ZeroStage::kOptimizer};
  const ParallelLayout interleaved = with_pipeline(replicated, 4, 8);  // 8 stages on 4 devices
  CHECK(interleaved.pp == 4);
  CHECK(interleaved.virtual_stages == 2);
  CHECK(interleaved.tp == 2);
  CHECK(interleaved.dp == 4);
  CHECK(interleaved.zero == ZeroStage::kOptimizer);
  CHECK(with_pipeline({}, 3, 3).virtual_stages == 1);
  CHECK(with_pipeline({}, 0, 0).virtual_stages == 1);  // an empty schedule still has v 1
}

TEST_CASE("parallel layout: checks name the count and the limit", "[layout]") {
  CHECK(check_layout(ParallelLayout{.pp = 4, .dp = 2}, 8, 8).ok());
  auto zero = check_layout(ParallelLayout{.pp = 0});
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.error().message, Catch::Contains("pp is 0"));
  auto too_many = check_layout(ParallelLayout{.pp = 4, .dp = 4}, 8, 8);
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(too_many.error().message, Catch::Contains("needs 16 devices, the cluster has 8"));
  auto tp_across = check_layout(ParallelLayout{.tp = 3, .pp = 1, .dp = 2}, 8, 8);
  REQUIRE_FALSE(tp_across.ok());
  CHECK_THAT(tp_across.error().message, Catch::Contains("does not fit evenly in nodes of 8"));
  auto huge = check_layout(ParallelLayout{.pp = 1 << 10, .dp = 1 << 10});
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error().message, Catch::Contains("1048576 devices"));
}

TEST_CASE("parallel layout: the words of a headline", "[layout]") {
  CHECK(layout_text(ParallelLayout{.pp = 4, .dp = 8}) == "pp 4 x dp 8 (32 devices, 4 stages)");
  CHECK(layout_text(ParallelLayout{.pp = 4, .virtual_stages = 2, .dp = 8, .zero = ZeroStage::kOptimizer}) ==
        "pp 4 x dp 8 (32 devices, 8 stages: 2 a pipeline rank; ZeRO-1)");
  CHECK(layout_text(ParallelLayout{.tp = 8, .pp = 1, .dp = 1, .order = RankOrder::kTpPpDp}) ==
        "tp 8 x pp 1 x dp 1 (8 devices, 1 stage; ranks tp-pp-dp)");
  CHECK(*parse_rank_order("tp-pp-dp") == RankOrder::kTpPpDp);
  CHECK_FALSE(parse_rank_order("pp-dp-tp").ok());
}

}  // namespace
}  // namespace pipeworks::sim
