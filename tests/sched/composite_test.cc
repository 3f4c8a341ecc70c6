// torch's composite action (0F3;3B1)OVERLAP_F_B: its text and errors, CSV and JSON round trips
// with each sub-action located, the composite rules of validation, unit timing (the two start
// together) and the passes, which keep a composite one cell.
#include <catch2/catch.hpp>

#include "sched/cells.h"
#include "sched/csv_io.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

std::string kinds_of(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += std::string(diagnostic_kind_name(d.kind)) + " ";
  return out;
}

LoadedSchedule loaded_csv(std::string_view text) {
  auto loaded = parse_csv(text, "t.csv");
  REQUIRE(loaded.ok());
  return *loaded;
}

std::string error_of(std::string_view token) {
  auto parsed = parse_cell(token);
  REQUIRE_FALSE(parsed.ok());
  return parsed.error().message;
}

// One device, stages 0 and 1: stage 1's second forward overlapped with its first backward.
constexpr std::string_view kOneDevice = "0F0,1F0,0F1,(1F1;1B0)OVERLAP_F_B,0B0,1B1,0B1\r\n";
// Two devices: d0's third forward waits in its composite for the backward stage 1 sends back.
constexpr std::string_view kTwoDevices = "0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n";

}  // namespace

TEST_CASE("a composite action parses into its two sub-actions and prints back", "[composite]") {
  auto parsed = parse_composite("(0F3;3B1)OVERLAP_F_B");
  REQUIRE(parsed.ok());
  CHECK(parsed->actions[0] == Action{0, ActionKind::kForward, 3});
  CHECK(parsed->actions[1] == Action{3, ActionKind::kBackward, 1});
  CHECK(parsed->columns == std::array<std::size_t, 2>{1, 5});
  CHECK(composite_text(parsed->actions[0], parsed->actions[1]) == "(0F3;3B1)OVERLAP_F_B");
  auto cell = parse_cell("(0F3;3B1)OVERLAP_F_B");
  REQUIRE(cell.ok());
  CHECK(cell->size == 2);
  CHECK(parse_cell("2F0")->size == 1);
}

TEST_CASE("composite parse errors say what is wrong and where", "[composite]") {
  CHECK(error_of("(0F3)OVERLAP_F_B") ==
        "composite action '(0F3)OVERLAP_F_B' holds one action; OVERLAP_F_B overlaps two, as in (0F3;3B1)OVERLAP_F_B");
  CHECK(error_of("(0F3;3B1;1F0)OVERLAP_F_B") ==
        "composite action '(0F3;3B1;1F0)OVERLAP_F_B' holds more than two actions; OVERLAP_F_B overlaps two");
  CHECK(error_of("(0F3;3B1)OVERLAP") == "unknown composite kind 'OVERLAP' in '(0F3;3B1)OVERLAP' (expected OVERLAP_F_B)");
  CHECK(error_of("(0F3;3B1") == "unterminated composite action '(0F3;3B1' (expected (0F3;3B1)OVERLAP_F_B)");
  CHECK(error_of("(0F3 ;3B1)OVERLAP_F_B") ==
        "unexpected trailing text ' ' in action '0F3 ' in composite action '(0F3 ;3B1)OVERLAP_F_B'");
  CHECK(parse_composite("(0F3;3B1)OVERLAP").error().column == 9);
  CHECK(parse_csv("0F0,(0F3;3X1)OVERLAP_F_B\n", "a.csv").error().message.rfind("a.csv:1:11: error: unknown action kind 'X'", 0) == 0);
  CHECK(parse_json(R"({"format": "pipeworks.schedule", "version": 1, "num_stages": 1, "num_microbatches": 1,
                      "placement": [0], "programs": [["(0F0)OVERLAP_F_B"]]})",
                   "a.json")
            .error()
            .message.rfind("a.json: /programs/0/0: error: composite action '(0F0)OVERLAP_F_B' holds one action", 0) == 0);
}

TEST_CASE("a composite's error in a quoted cell points where its bytes lie in the source", "[composite][io]") {
  // The cell spans two lines: the end of "(0F0,\n1F0" lies on line 2, after 1F0.
  CHECK(parse_csv("0F0,\"(0F0,\n1F0\"\n", "a.csv").error().message.rfind("a.csv:2:4: error: unterminated", 0) == 0);
  // '""' is one byte of the cell but two of the source: the end of (0F0;1B0" lies at column 12.
  CHECK(parse_csv("\"(0F0;1B0\"\"\"\n", "a.csv").error().message.rfind("a.csv:1:12: error: unterminated", 0) == 0);
}

TEST_CASE("CSV keeps a composite one cell and locates each sub-action inside it", "[composite][io]") {
  const LoadedSchedule loaded = loaded_csv(kOneDevice);
  const Schedule& s = loaded.schedule;
  REQUIRE(s.programs.size() == 1);
  CHECK(s.num_actions() == 8);
  CHECK(s.programs[0][3] == Action{1, ActionKind::kForward, 1});
  CHECK(s.programs[0][4] == Action{1, ActionKind::kBackward, 0});
  CHECK(s.composites == std::vector<Composite>{{0, 3}});
  CHECK(loaded.cells[0][3] == TextPosition{1, 14});
  CHECK(loaded.cells[0][4] == TextPosition{1, 18});
  CHECK(to_csv(s) == kOneDevice);
  CHECK(validate(s, ValidateOptions{true}).empty());
}

TEST_CASE("JSON writes a composite as one string and points a sub-action's diagnostic at it", "[composite][io]") {
  const Schedule s = loaded_csv(kOneDevice).schedule;
  const std::string json = to_json(s);
  CHECK(json.find(R"(["0F0","1F0","0F1","(1F1;1B0)OVERLAP_F_B","0B0","1B1","0B1"])") != std::string::npos);
  auto back = parse_json(json, "s.json");
  REQUIRE(back.ok());
  CHECK(back->schedule == s);
  CHECK(back->entries[0] == std::vector<int>{0, 1, 2, 3, 3, 4, 5, 6});
  // 1B0 again after the composite: position 5 of the program, entry 4 of the file.
  auto doubled = parse_json(R"({"format": "pipeworks.schedule", "version": 1, "num_stages": 2, "num_microbatches": 2,
      "placement": [0, 0], "programs": [["0F0", "1F0", "0F1", "(1F1;1B0)OVERLAP_F_B", "1B0", "0B0", "1B1", "0B1"]]})",
                            "d.json");
  REQUIRE(doubled.ok());
  const auto d = validate(doubled->schedule);
  REQUIRE(kinds_of(d) == "duplicate ");
  CHECK(d[0].position == 5);
  CHECK(diagnostic_location(*doubled, d[0]) == "d.json: /programs/0/4");
}

TEST_CASE("a composite overlaps a forward with a backward that does not need it", "[composite][validate]") {
  const auto order = validate(loaded_csv("0F0,1F0,0F1,(1B0;1F1)OVERLAP_F_B,0B0,1B1,0B1\n").schedule);
  REQUIRE(kinds_of(order) == "bad-composite ");
  CHECK(order[0].message == "(1B0;1F1)OVERLAP_F_B must overlap a forward (F) with a backward (B or I), in that order");
  CHECK(order[0].position == 3);
  CHECK(order[0].related == std::vector<Location>{{0, 4}});
  CHECK(kinds_of(validate(loaded_csv("0F0,(0I0;0W0)OVERLAP_F_B\n").schedule)) == "bad-composite ");
  const auto dependent = validate(loaded_csv("(0F0;0B0)OVERLAP_F_B\n").schedule);
  REQUIRE(kinds_of(dependent) == "bad-composite ");
  CHECK(dependent[0].message == "in (0F0;0B0)OVERLAP_F_B, 0B0 depends on 0F0, so the two cannot overlap");
  // I as the backward is fine.
  CHECK(validate(loaded_csv("0F0,(0F1;0I0)OVERLAP_F_B,0W0,0B1\n").schedule).empty());
}

TEST_CASE("each sub-action obeys the rules of any action", "[composite][validate]") {
  // A sub-action of a stage that lives on the other device.
  const LoadedSchedule two = loaded_csv("0F0,(0F1;1B0)OVERLAP_F_B,0B0,0B1\n1F0,1F1,1B1\n");
  const auto d = validate(two.schedule, ValidateOptions{true});
  REQUIRE(kinds_of(d) == "stage-on-two-devices ");
  CHECK(d[0].message == "stage 1 has actions on devices 1 and 0 (1 on device 0, first 1B0)");
  CHECK(diagnostic_location(two, d[0]) == "t.csv:1:10");
  // A sub-action's dependency missing ordering: 1B1 inside the composite before 1F1.
  CHECK(kinds_of(validate(loaded_csv("0F0,1F0,0F1,(0F2;1B1)OVERLAP_F_B,1F1,1B0,1F2,1B2,0B0,0B1,0B2\n").schedule)) ==
        "backward-before-forward ");
}

TEST_CASE("composite marks must name two actions, in order, sharing none", "[composite][validate]") {
  Schedule s = loaded_csv(kOneDevice).schedule;
  s.composites = {{0, 7}};
  const auto beyond = validate(s);
  REQUIRE(kinds_of(beyond) == "bad-composite ");
  CHECK(beyond[0].message == "composite mark (device 0, position 7) does not name two actions of a program");
  CHECK(beyond[0].device == 0);
  CHECK_FALSE(beyond[0].has_cell());
  s.composites = {{0, 3}, {0, 4}};
  const auto shared = validate(s);
  REQUIRE(kinds_of(shared) == "bad-composite ");
  CHECK(shared[0].message ==
        "composite mark (device 0, position 4) comes after (device 0, position 3): marks go in program order and "
        "share no action");
  // Writers skip a mark that names a taken action or none, without failing.
  CHECK(to_csv(s) == kOneDevice);
  s.composites = {{3, 0}, {0, -1}};
  CHECK(kinds_of(validate(s)) == "bad-composite bad-composite ");
  CHECK(to_csv(s) == "0F0,1F0,0F1,1F1,1B0,0B0,1B1,0B1\r\n");
}

TEST_CASE("the diagnostic grid shows a composite's parentheses", "[composite][validate]") {
  const Schedule s = loaded_csv("0F0,1F0,0F1,(1B0;1F1)OVERLAP_F_B,0B0,1B1,0B1\n").schedule;
  const auto d = validate(s);
  REQUIRE_FALSE(d.empty());
  CHECK(render(s, d[0]) ==
        "         0     1     2     3     4     5     6     7\n"
        "  d0   0F0   1F0   0F1 [(1B0]<1F1)>  0B0   1B1   0B1\n");
}

TEST_CASE("unit timing starts a composite once both sub-actions may run", "[composite][timing]") {
  const Schedule s = loaded_csv(kTwoDevices).schedule;
  REQUIRE(validate(s, ValidateOptions{true}).empty());
  auto timing = unit_timing(s);
  REQUIRE(timing.ok());
  // 0F2 could start at 2 but its composite waits for 0B0's gradient, sent by 1B0 at the end of step 2.
  CHECK(timing->start[0] == std::vector<std::int64_t>{0, 1, 3, 4, 5, 7});
  CHECK(timing->finish[0][2] == 5);
  CHECK(timing->finish[0][3] == 5);
  CHECK(timing->start[1] == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(timing->num_steps == 8);
}

TEST_CASE("the passes keep a composite one cell", "[composite][passes]") {
  const Schedule s = loaded_csv(kTwoDevices).schedule;
  auto lowered = lower_comm(s);
  REQUIRE(lowered.ok());
  // Receives for either sub-action before the composite, sends of what it produced after it.
  CHECK(to_csv(*lowered) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,(0F2;0B0)OVERLAP_F_B,0SEND_F2,0RECV_B1,0B1,0RECV_B2,0B2\r\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1RECV_F2,1SEND_B1,1F2,1B2,1SEND_B2\r\n");
  CHECK(validate(*lowered).empty());
  CHECK(strip_comm(*lowered) == s);
  auto recomputed = add_recompute(s);
  REQUIRE(recomputed.ok());
  CHECK(to_csv(*recomputed) ==
        "0F0,0F1,0R0,(0F2;0B0)OVERLAP_F_B,0R1,0B1,0R2,0B2\r\n1F0,1R0,1B0,1F1,1R1,1B1,1F2,1R2,1B2\r\n");
  CHECK(validate(*recomputed).empty());
  CHECK(*add_recompute(*recomputed) == *recomputed);
  auto both = lower_comm(*recomputed);
  REQUIRE(both.ok());
  CHECK(validate(*both).empty());
}
