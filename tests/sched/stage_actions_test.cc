// torch's stage-level actions UNSHARD, RESHARD and REDUCE_GRAD: their text, every placement rule
// of sched/stage_actions.h with its exact diagnostic, and how the passes and unit timing carry them.
#include <catch2/catch.hpp>

#include "sched/program_text.h"
#include "sched/csv_io.h"
#include "sched/passes.h"
#include "sched/text_grid.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"

using namespace pipeworks::sched;
using pipeworks::sched::testing::program_text;

namespace {

std::string kinds_of(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += std::string(diagnostic_kind_name(d.kind)) + " ";
  return out;
}

// The schedule of a CSV text, its placement inferred from the rows.
Schedule from_csv(std::string_view text) {
  auto loaded = parse_csv(text, "t.csv");
  REQUIRE(loaded.ok());
  return loaded->schedule;
}

std::vector<Diagnostic> check(std::string_view text) { return validate(from_csv(text), ValidateOptions{true}); }

}  // namespace

TEST_CASE("stage-level actions print and parse as torch writes them, without a micro-batch", "[stage-level]") {
  CHECK(to_string(Action{0, ActionKind::kUnshard, 0}) == "0UNSHARD");
  CHECK(to_string(Action{12, ActionKind::kReshard, 0}) == "12RESHARD");
  CHECK(to_string(Action{1, ActionKind::kReduceGrad, 0}) == "1REDUCE_GRAD");
  CHECK(*parse_action("3REDUCE_GRAD") == Action{3, ActionKind::kReduceGrad, 0});
  const auto with_microbatch = parse_action("1UNSHARD3");
  REQUIRE_FALSE(with_microbatch.ok());
  CHECK(with_microbatch.error().message == "UNSHARD in '1UNSHARD3' is a stage-level action and takes no micro-batch");
  CHECK(with_microbatch.error().column == 8);
  const auto no_microbatch = parse_action("1F");
  REQUIRE_FALSE(no_microbatch.ok());
  CHECK(no_microbatch.error().message == "expected a micro-batch index in '1F'");
  CHECK(parse_action("0RESHARDx").error().message == "unexpected trailing text 'x' in action '0RESHARDx'");
  CHECK(parse_action("0OVERLAP_F_B").error().message ==
        "OVERLAP_F_B in '0OVERLAP_F_B' is a composite action, written as (0F3;3B1)OVERLAP_F_B");
  CHECK(parse_csv("0F0,0UNSHARD1\n", "a.csv").error().message ==
        "a.csv:1:13: error: UNSHARD in '0UNSHARD1' is a stage-level action and takes no micro-batch");
}

TEST_CASE("torch's placement of stage-level actions validates, evicted stages gathered again included",
          "[stage-level]") {
  // Two stages on d0 (V placement), each gathered around its computes and reduced after its last gradient.
  CHECK(kinds_of(check("0UNSHARD,3UNSHARD,0F0,3F0,3B0,3REDUCE_GRAD,3RESHARD,0B0,0REDUCE_GRAD,0RESHARD\r\n"
                       "1UNSHARD,2UNSHARD,1F0,2F0,2I0,1B0,2W0,2REDUCE_GRAD,2RESHARD,1REDUCE_GRAD,1RESHARD\r\n"))
            .empty());
  // torch's _add_unshard_reshard frees a stage and gathers it again (more than 3 stages a rank).
  CHECK(kinds_of(check("0UNSHARD,0F0,0RESHARD,1UNSHARD,1F0,1B0,1RESHARD,0UNSHARD,0B0,0RESHARD\n")).empty());
  // A stage without UNSHARD/RESHARD (not sharded) computes freely; REDUCE_GRAD alone is fine.
  CHECK(kinds_of(check("0F0,0B0,0REDUCE_GRAD\n")).empty());
}

TEST_CASE("UNSHARD and RESHARD must alternate around the stage's computes", "[stage-level]") {
  const auto again = check("0UNSHARD,0F0,0UNSHARD,0B0,0RESHARD\n");
  REQUIRE(kinds_of(again) == "shard-order ");
  CHECK(again[0].position == 2);
  CHECK(again[0].message ==
        "0UNSHARD gathers stage 0's parameters again: 0UNSHARD at position 0 gathered them and no RESHARD freed them");
  CHECK(again[0].related == std::vector<Location>{{0, 0}});

  const auto never_gathered = check("0F0,0B0,0RESHARD\n");
  REQUIRE(kinds_of(never_gathered) == "shard-order sharded-compute ");
  CHECK(never_gathered[0].message == "0RESHARD frees stage 0's parameters, which no UNSHARD gathered");
  CHECK(never_gathered[1].message ==
        "0F0 runs while stage 0's parameters are sharded (outside every 0UNSHARD..0RESHARD pair; 2 such actions on "
        "device 0)");

  const auto freed_twice = check("0UNSHARD,0F0,0B0,0RESHARD,0RESHARD\n");
  REQUIRE(kinds_of(freed_twice) == "shard-order ");
  CHECK(freed_twice[0].message == "0RESHARD frees stage 0's parameters, which 0RESHARD at position 3 freed already");

  const auto unused = check("0UNSHARD,0RESHARD,0UNSHARD,0F0,0B0,0RESHARD\n");
  REQUIRE(kinds_of(unused) == "shard-order ");
  CHECK(unused[0].position == 1);
  CHECK(unused[0].message ==
        "0RESHARD frees stage 0's parameters before any compute of the stage used them (gathered by 0UNSHARD at "
        "position 0)");

  const auto left_open = check("0UNSHARD,0F0,0B0\n");
  REQUIRE(kinds_of(left_open) == "shard-order ");
  CHECK(left_open[0].position == 0);
  CHECK(left_open[0].message == "0UNSHARD is never followed by a 0RESHARD: stage 0's parameters stay gathered");
}

TEST_CASE("a sharded stage computes only between its UNSHARD and RESHARD", "[stage-level]") {
  const auto d = check("0F0,0UNSHARD,0F1,0RESHARD,0B0,0B1\n");
  REQUIRE(kinds_of(d) == "sharded-compute ");
  CHECK(d[0].position == 0);
  CHECK(d[0].message ==
        "0F0 runs while stage 0's parameters are sharded (outside every 0UNSHARD..0RESHARD pair; 3 such actions on "
        "device 0)");
  // Re-materialization and the I/W split are computes too.
  CHECK(kinds_of(check("0UNSHARD,0F0,0I0,0RESHARD,0W0\n")) == "sharded-compute ");
}

TEST_CASE("REDUCE_GRAD comes once, after the stage's last B or W", "[stage-level]") {
  const auto twice = check("0F0,0B0,0REDUCE_GRAD,0REDUCE_GRAD\n");
  REQUIRE(kinds_of(twice) == "duplicate ");
  CHECK(twice[0].position == 3);
  CHECK(twice[0].message == "0REDUCE_GRAD appears again (first at device 0 position 2)");

  const auto early = check("0F0,0F1,0B0,0REDUCE_GRAD,0B1\n");
  REQUIRE(kinds_of(early) == "reduce-grad-order ");
  CHECK(early[0].position == 3);
  CHECK(early[0].related == std::vector<Location>{{0, 4}});
  // With the split backward the weight gradient W is the one that counts (torch counts B and W).
  const auto before_weight = check("0F0,0I0,0REDUCE_GRAD,0W0\n");
  REQUIRE(kinds_of(before_weight) == "reduce-grad-order ");
  CHECK(before_weight[0].message == "0REDUCE_GRAD reduces stage 0's gradients before 0W0 adds to them");
  CHECK(kinds_of(check("0F0,0I0,0W0,0REDUCE_GRAD\n")).empty());
}

TEST_CASE("stage-level actions belong on their stage's device", "[stage-level]") {
  const auto csv = check("0F0,0B0,1REDUCE_GRAD\n1F0,1B0\n");
  REQUIRE(kinds_of(csv) == "stage-on-two-devices ");
  CHECK(csv[0].message == "stage 1 has actions on devices 1 and 0 (1 on device 0, first 1REDUCE_GRAD)");
  // The same file as a stated placement (stage 0 on d0): its UNSHARD on d1 is on the wrong device.
  Schedule placed = from_csv("0UNSHARD,0F0,0B0,0RESHARD\n0UNSHARD,1F0,1B0\n");
  CHECK(kinds_of(validate(placed)) == "wrong-device ");
  // A micro-batch on a stage-level action (only a program can make one) is out of range.
  placed = from_csv("0F0,0B0,0REDUCE_GRAD\n");
  placed.programs.at(0).at(2).microbatch = 5;
  const auto carried = validate(placed);
  REQUIRE(kinds_of(carried) == "out-of-range ");
  CHECK(carried[0].message == "0REDUCE_GRAD carries micro-batch 5, but a stage-level action names none (0)");
}

TEST_CASE("the diagnostic grid marks a stage-level action", "[stage-level]") {
  const Schedule s = from_csv("0F0,0B0,0RESHARD\n");
  const auto d = validate(s, ValidateOptions{true});
  REQUIRE_FALSE(d.empty());
  CHECK(render(s, d[0]) ==
        "             0         1         2\n"
        "  d0       0F0       0B0 [0RESHARD]\n");
}

TEST_CASE("stage-level actions take no unit step and keep their place through the passes", "[stage-level][passes]") {
  const Schedule s = from_csv("0UNSHARD,0F0,0B0,0REDUCE_GRAD,0RESHARD\r\n1UNSHARD,1F0,1B0,1REDUCE_GRAD,1RESHARD\r\n");
  REQUIRE(validate(s, ValidateOptions{true}).empty());
  auto timing = unit_timing(s);
  REQUIRE(timing.ok());
  CHECK(timing->num_steps == 4);
  CHECK(timing->start[1] == std::vector<std::int64_t>{0, 1, 2, 3, 3});
  CHECK(*render_grid(s) ==
        "t:   0  1  2  3\n"
        "d0: F0  .  . B0\n"
        "d1:  . F0 B0  .\n");
  auto lowered = lower_comm(s);
  REQUIRE(lowered.ok());
  CHECK(program_text(lowered->programs[0]) == "0UNSHARD 0F0 0SEND_F0 0RECV_B0 0B0 0REDUCE_GRAD 0RESHARD");
  CHECK(program_text(lowered->programs[1]) == "1UNSHARD 1RECV_F0 1F0 1B0 1SEND_B0 1REDUCE_GRAD 1RESHARD");
  CHECK(validate(*lowered).empty());
  CHECK(strip_comm(*lowered) == s);
  auto recomputed = add_recompute(s);
  REQUIRE(recomputed.ok());
  CHECK(program_text(recomputed->programs[0]) == "0UNSHARD 0F0 0R0 0B0 0REDUCE_GRAD 0RESHARD");
  CHECK(validate(*recomputed).empty());
}
