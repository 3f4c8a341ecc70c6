// add_reduce_grad and add_unshard_reshard (sched/stage_level_passes.h): the pictures of the
// header, a composite kept whole, what the passes refuse. tests/python/test_torch_stage_actions.py
// holds them to torch's own passes over every torch schedule class.
#include <catch2/catch.hpp>

#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/program_text.h"
#include "sched/stage_level_passes.h"
#include "sched/validate.h"

using namespace pipeworks::sched;
using pipeworks::sched::testing::program_text;

TEST_CASE("add_reduce_grad: REDUCE_GRAD right after each stage's last B or W", "[stage-level]") {
  auto one_f = one_f_one_b(ScheduleShape{2, 2, {}});
  REQUIRE(one_f.ok());
  auto reduced = add_reduce_grad(*one_f);
  REQUIRE(reduced.ok());
  CHECK(program_text(reduced->programs[0]) == "0F0 0F1 0B0 0B1 0REDUCE_GRAD");
  CHECK(program_text(reduced->programs[1]) == "1F0 1B0 1F1 1B1 1REDUCE_GRAD");
  // With the backward split, after the M-th W, wherever the I's are.
  auto zb = generate(ScheduleKind::kZbH1, ScheduleShape{2, 2, {}});
  REQUIRE(zb.ok());
  auto zb_reduced = add_reduce_grad(*zb);
  REQUIRE(zb_reduced.ok());
  CHECK(program_text(zb_reduced->programs[1]).ends_with("1W1 1REDUCE_GRAD"));
  CHECK(validate(*zb_reduced).empty());
}

TEST_CASE("add_unshard_reshard: the next three stages of a device stay gathered", "[stage-level]") {
  auto bfs = generate(ScheduleKind::kLoopedBfs, ScheduleShape{8, 8, {}}, 4);
  REQUIRE(bfs.ok());
  auto sharded = add_unshard_reshard(*bfs);
  REQUIRE(sharded.ok());
  CHECK(program_text(sharded->programs[0]).starts_with(
      "0UNSHARD 2UNSHARD 4UNSHARD 0F0 0F1 0F2 0F3 0F4 0F5 0F6 0F7 0RESHARD 6UNSHARD 2F0"));
  CHECK(program_text(sharded->programs[0]).ends_with("0B0 0RESHARD"));
  auto both = add_reduce_grad(*sharded);
  REQUIRE(both.ok());
  CHECK(validate(*both).empty());
  auto lowered = lower_comm(*both);
  REQUIRE(lowered.ok());
  CHECK(validate(*lowered).empty());
  // One stage gathered at a time: gathered just before its run of computes, freed right after.
  auto one = add_unshard_reshard(*one_f_one_b(ScheduleShape{2, 2, {}}), 1);
  REQUIRE(one.ok());
  CHECK(program_text(one->programs[0]) == "0UNSHARD 0F0 0F1 0B0 0B1 0RESHARD");
}

TEST_CASE("stage-level passes keep a composite one cell", "[stage-level]") {
  // One device, stages 0 and 1, M = 2; the composite holds stage 1's second backward.
  auto loaded = parse_csv("0F0,1F0,0F1,(1F1;1B0)OVERLAP_F_B,0B0,1B1,0B1\r\n", "t.csv");
  REQUIRE(loaded.ok());
  const Schedule& s = loaded->schedule;
  REQUIRE(s.composites.size() == 1);
  auto both = add_reduce_grad(*add_unshard_reshard(s));
  REQUIRE(both.ok());
  // torch writes the same: 0UNSHARD 1UNSHARD 0F0 1F0 0F1 (1F1;1B0)OVERLAP_F_B 0B0 1B1 1REDUCE_GRAD
  // 1RESHARD 0B1 0REDUCE_GRAD 0RESHARD (stage 1 is freed as soon as only stage 0 computes next).
  CHECK(program_text(both->programs[0]) ==
        "0UNSHARD 1UNSHARD 0F0 1F0 0F1 1F1 1B0 0B0 1B1 1REDUCE_GRAD 1RESHARD 0B1 0REDUCE_GRAD 0RESHARD");
  REQUIRE(both->composites.size() == 1);
  CHECK(both->composites[0] == Composite{0, 5});  // 1F1 1B0 still side by side, one cell
  CHECK(validate(*both).empty());
  // A composite that completes a stage's gradients gets its REDUCE_GRAD after the whole cell.
  auto last = parse_csv("0F0,0F1,0B0,(0F2;0B1)OVERLAP_F_B,0B2\r\n", "t.csv");
  REQUIRE(last.ok());
  auto reduced = add_reduce_grad(last->schedule);
  REQUIRE(reduced.ok());
  CHECK(program_text(reduced->programs[0]) == "0F0 0F1 0B0 0F2 0B1 0B2 0REDUCE_GRAD");
}

TEST_CASE("stage-level passes refuse lowered schedules and a second pass", "[stage-level]") {
  auto s = one_f_one_b(ScheduleShape{2, 2, {}});
  REQUIRE(s.ok());
  auto lowered = add_reduce_grad(*lower_comm(*s));
  REQUIRE_FALSE(lowered.ok());
  CHECK_THAT(lowered.error().message, Catch::Contains("already holds 0SEND_F0"));
  auto twice = add_unshard_reshard(*add_unshard_reshard(*s));
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(twice.error().message, Catch::Contains("already holds 0UNSHARD"));
  CHECK_FALSE(add_unshard_reshard(*s, 0).ok());
}
