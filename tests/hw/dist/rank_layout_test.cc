// A rank's place in a replicated pipeline (hw/dist/rank_layout.h), drawn for pp 2 x dp 2:
//   tp-dp-pp   rank 0 (r0, d0)  rank 1 (r1, d0)  rank 2 (r0, d1)  rank 3 (r1, d1)
//   tp-pp-dp   rank 0 (r0, d0)  rank 1 (r0, d1)  rank 2 (r1, d0)  rank 3 (r1, d1)
// and with tensor-parallel ranks (t0, t1) adjacent, as Megatron numbers them, for tp 2 x pp 2 x dp 2.
#include <catch2/catch.hpp>

#include "hw/dist/rank_layout.h"
#include "hw/run/run.h"

namespace pipeworks::hw {
namespace {

RunConfig replicated(int dp, sim::RankOrder order) {
  RunConfig c;
  c.num_stages = 2;
  c.num_microbatches = 4;
  c.batch_size = 8 * dp;
  c.data_parallel = dp;
  c.rank_order = order;
  return c;
}

TEST_CASE("rank layout: pp 2 x dp 2 in Megatron's order puts a device's replicas on neighbouring ranks") {
  const RunConfig c = replicated(2, sim::RankOrder::kTpDpPp);
  const sched::Schedule schedule = build_schedule(c).value();
  const std::vector<std::vector<int>> expected = {{0, 0, 0, 2}, {1, 0, 1, 3}, {2, 1, 0, 2}, {3, 1, 1, 3}};
  for (const auto& e : expected) {
    auto place = rank_place(c, schedule, e[0], 4);
    REQUIRE(place.ok());
    INFO("rank " << e[0]);
    CHECK(place->device == e[1]);
    CHECK(place->replica == e[2]);
    CHECK(place->stage_ranks == std::vector<int>{e[2], e[3]});
    CHECK(place->replica_group == (e[1] == 0 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}));
  }
}

TEST_CASE("rank layout: tp-pp-dp puts each pipeline on neighbouring ranks") {
  const RunConfig c = replicated(2, sim::RankOrder::kTpPpDp);
  const sched::Schedule schedule = build_schedule(c).value();
  auto third = rank_place(c, schedule, 2, 4);
  REQUIRE(third.ok());
  CHECK(third->device == 0);
  CHECK(third->replica == 1);
  CHECK(third->stage_ranks == std::vector<int>{2, 3});
  CHECK(third->replica_group == std::vector<int>{0, 2});
}

TEST_CASE("rank layout: WORLD_SIZE must be devices x replicas, and the schedule carries REDUCE_GRAD") {
  const RunConfig c = replicated(2, sim::RankOrder::kTpDpPp);
  const sched::Schedule schedule = build_schedule(c).value();
  auto wrong = rank_place(c, schedule, 0, 2);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message ==
        "the schedule has 2 devices x 2 replicas = 4 ranks but WORLD_SIZE is 2 (one process per device of each "
        "replica)");
  int reductions = 0;
  for (const auto& program : schedule.programs) {
    for (const sched::Action& a : program) reductions += a.kind == sched::ActionKind::kReduceGrad ? 1 : 0;
  }
  CHECK(reductions == 2);  // one a stage
  const sched::Schedule single = build_schedule(replicated(1, sim::RankOrder::kTpDpPp)).value();
  CHECK_FALSE(single.has_stage_level());
}

// tp 2 x pp 2 x dp 2, order tp-dp-pp: rank = t + 2 (r + 2 d).
TEST_CASE("rank layout: tensor-parallel ranks sit next to each other, peers share the tensor rank") {
  RunConfig c = replicated(2, sim::RankOrder::kTpDpPp);
  c.tensor_parallel = 2;
  const sched::Schedule schedule = build_schedule(c).value();
  for (int rank = 0; rank < 8; ++rank) {
    auto place = rank_place(c, schedule, rank, 8);
    REQUIRE(place.ok());
    INFO("rank " << rank);
    const int t = rank % 2, r = (rank / 2) % 2, d = rank / 4;
    CHECK(place->tensor_rank == t);
    CHECK(place->replica == r);
    CHECK(place->device == d);
    CHECK(place->stage_ranks == std::vector<int>{t + 2 * r, t + 2 * r + 4});
    CHECK(place->replica_group == std::vector<int>{t + 4 * d, t + 2 + 4 * d});
    CHECK(place->tensor_group == std::vector<int>{2 * r + 4 * d, 2 * r + 4 * d + 1});
  }
}

TEST_CASE("rank layout: tp-pp-dp keeps the tensor ranks adjacent and each pipeline next") {
  RunConfig c = replicated(2, sim::RankOrder::kTpPpDp);
  c.tensor_parallel = 2;
  const sched::Schedule schedule = build_schedule(c).value();
  auto place = rank_place(c, schedule, 3, 8);  // t 1, device 1, replica 0
  REQUIRE(place.ok());
  CHECK(place->tensor_rank == 1);
  CHECK(place->device == 1);
  CHECK(place->replica == 0);
  CHECK(place->stage_ranks == std::vector<int>{1, 3});
  CHECK(place->tensor_group == std::vector<int>{2, 3});
  CHECK(place->replica_group == std::vector<int>{3, 7});
}

TEST_CASE("rank layout: WORLD_SIZE must be tp x pp x dp") {
  RunConfig c = replicated(1, sim::RankOrder::kTpDpPp);
  c.tensor_parallel = 2;
  const sched::Schedule schedule = build_schedule(c).value();
  auto wrong = rank_place(c, schedule, 0, 2);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message ==
        "the layout is tp 2 x pp 2 x dp 1 = 4 ranks but WORLD_SIZE is 2 (one process per tensor-parallel rank of each "
        "device of each replica)");
  CHECK_FALSE(schedule.has_stage_level());  // tensor ranks reduce inside their layers, not at REDUCE_GRAD
}

}  // namespace
}  // namespace pipeworks::hw
