// Text, CSV and JSON round trips; torch.distributed.pipelining CSV details; located parse errors.
#include <catch2/catch.hpp>

#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/schedule_file.h"
#include "sched/text_grid.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

std::vector<Schedule> sample_schedules() {
  std::vector<Schedule> out;
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (const ScheduleShape& shape : {ScheduleShape{4, 6, {}}, ScheduleShape{3, 4, {0, 0, 1}}, ScheduleShape{4, 3, {0, 1, 1, 0}}}) {
      auto s = generate(kind, shape);
      REQUIRE(s.ok());
      out.push_back(*s);
      out.push_back(*add_recompute(*s));
      out.push_back(*lower_comm(*s));
      out.push_back(*lower_comm(*add_recompute(*s)));
    }
  }
  for (auto kind : {ScheduleKind::kZbH1, ScheduleKind::kZbH2, ScheduleKind::kZbV, ScheduleKind::kDualPipeV}) {
    auto s = generate(kind, ScheduleShape{4, 6, {}});
    REQUIRE(s.ok());
    out.push_back(*s);
    out.push_back(*add_recompute(*s));
    out.push_back(*lower_comm(*s));
    out.push_back(*lower_comm(*add_recompute(*s)));
  }
  return out;
}

std::string error_of(const Result<LoadedSchedule>& r) {
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("every action kind round-trips through its text", "[io]") {
  for (ActionKind kind : kAllActionKinds) {
    const Action a{12, kind, is_stage_level(kind) ? 0 : 345};  // stage-level kinds name no micro-batch
    auto back = parse_action(to_string(a));
    REQUIRE(back.ok());
    CHECK(*back == a);
  }
}

TEST_CASE("CSV and JSON give back the same schedule", "[io]") {
  for (const Schedule& s : sample_schedules()) {
    auto json = parse_json(to_json(s), "x.json");
    REQUIRE(json.ok());
    CHECK(json->schedule == s);
    CHECK_FALSE(json->placement_inferred);
    auto csv = parse_csv(to_csv(s), "x.csv");
    REQUIRE(csv.ok());
    // CSV carries no placement; it is inferred back from the rows.
    CHECK(csv->schedule == s);
    CHECK(csv->placement_inferred);
    CHECK(validate(csv->schedule, ValidateOptions{true}).empty());
  }
}

TEST_CASE("CSV is written like Python's csv.writer", "[io]") {
  auto s = lower_comm(*one_f_one_b(ScheduleShape{2, 2, {}}));
  REQUIRE(s.ok());
  CHECK(to_csv(*s) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\r\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\r\n");
}

TEST_CASE("JSON is written one program per line", "[io]") {
  auto s = gpipe(ScheduleShape{2, 1, {}});
  REQUIRE(s.ok());
  CHECK(to_json(*s) ==
        "{\n"
        "  \"format\": \"pipeworks.schedule\",\n"
        "  \"version\": 1,\n"
        "  \"num_stages\": 2,\n"
        "  \"num_microbatches\": 1,\n"
        "  \"placement\": [0,1],\n"
        "  \"programs\": [\n"
        "    [\"0F0\",\"0B0\"],\n"
        "    [\"1F0\",\"1B0\"]\n"
        "  ]\n"
        "}\n");
}

TEST_CASE("CSV reading follows csv.reader and _Action.from_str", "[io]") {
  // Idle (empty or blank) cells, quotes, a BOM, \n endings and an empty row (a rank with nothing).
  auto r = parse_csv("\xEF\xBB\xBF" "0F0,, ,\"0B0\"\n\n1F0,  1B0 ", "t.csv");
  REQUIRE(r.ok());
  const Schedule& s = r->schedule;
  CHECK(s.num_stages == 2);
  CHECK(s.num_microbatches == 1);
  REQUIRE(s.programs.size() == 3);
  CHECK(s.programs[0] == Program{{0, ActionKind::kForward, 0}, {0, ActionKind::kBackward, 0}});
  CHECK(s.programs[1].empty());
  CHECK(s.placement == std::vector<int>{0, 2});
  CHECK(r->cells[0][1] == TextPosition{1, 9});  // after the opening quote
  CHECK(r->cells[2][1] == TextPosition{3, 7});  // after the blanks
  CHECK(r->row_lines == std::vector<int>{1, 2, 3});
  // An empty file is an empty schedule; validation reports its shape.
  auto empty = parse_csv("", "e.csv");
  REQUIRE(empty.ok());
  CHECK(empty->schedule.programs.empty());
  CHECK(validate(empty->schedule).front().kind == DiagnosticKind::kBadShape);
}

TEST_CASE("CSV parse errors carry row and column", "[io]") {
  CHECK(error_of(parse_csv("0F0,0B0\n1F0,1F0xyz\n", "a.csv")) ==
        "a.csv:2:8: error: unexpected trailing text 'xyz' in action '1F0xyz'");
  CHECK(error_of(parse_csv("-1F0", "a.csv")) ==
        "a.csv:1:1: error: stage index in '-1F0' must be a non-negative integer without a sign");
  CHECK(error_of(parse_csv("0F0,99999999999F0", "a.csv")) ==
        "a.csv:1:5: error: stage index '99999999999' in '99999999999F0' is out of range (at most 2147483647)");
  CHECK(error_of(parse_csv("0F0,  0X1", "a.csv")).rfind("a.csv:1:8: error: unknown action kind 'X'", 0) == 0);
  CHECK(error_of(parse_csv("0F0,0F99999999999", "a.csv")).rfind("a.csv:1:7: error: micro-batch index", 0) == 0);
  CHECK(error_of(parse_csv("0F0,\"0B0", "a.csv")) == "a.csv:1:5: error: unterminated quoted cell");
  CHECK(error_of(parse_csv("0F0\n70000F0", "a.csv")) ==
        "a.csv:2:1: error: stage 70000 in '70000F0' is beyond the largest supported schedule (65536 stages)");
  CHECK(error_of(parse_csv("0F0,1000F5000", "a.csv")).rfind("a.csv:1:5: error: '1000F5000' implies at least 1001", 0) == 0);
}

TEST_CASE("JSON parse errors carry a JSON pointer", "[io]") {
  const std::string head = R"({"format": "pipeworks.schedule", "version": 1, "num_stages": 1, "num_microbatches": 1, )";
  CHECK(error_of(parse_json(head + R"("placement": [0], "programs": [["0F0", "-1B0"]]})", "a.json")) ==
        "a.json: /programs/0/1: error: stage index in '-1B0' must be a non-negative integer without a sign "
        "(at character 1)");
  CHECK(error_of(parse_json(head + R"("placement": [0], "programs": [["0F0", 7]]})", "a.json")) ==
        "a.json: /programs/0/1: error: expected an action string, got number");
  CHECK(error_of(parse_json(head + R"("placement": [1e3], "programs": []})", "a.json")) ==
        "a.json: /placement/0: error: expected an integer, got number");
  CHECK(error_of(parse_json(head + R"("placement": [99999999999], "programs": []})", "a.json")) ==
        "a.json: /placement/0: error: 99999999999 is out of range (at most 2147483647)");
  CHECK(error_of(parse_json(head + R"("programs": []})", "a.json")) == "a.json: /placement: error: missing member");
  CHECK(error_of(parse_json(R"({"format": "other"})", "a.json")).rfind("a.json: /version: error: missing member", 0) == 0);
  CHECK(error_of(parse_json("[1, 2]", "a.json")) == "a.json: (root): error: expected an object, got array");
  CHECK(error_of(parse_json("{\n  \"format\": }", "a.json")).rfind("a.json:2:13: error: invalid JSON:", 0) == 0);
  const std::string ok = head + R"("placement": [0], "programs": [["0F0", "0B0"]]})";
  CHECK(parse_json(ok, "a.json").ok());
  std::string wrong_version = ok;
  wrong_version.replace(wrong_version.find("\"version\": 1"), 12, "\"version\": 2");
  CHECK(error_of(parse_json(wrong_version, "a.json")) == "a.json: /version: error: unsupported version 2 (this reader knows 1)");
}

TEST_CASE("schedule files choose the format by extension, then by content", "[io]") {
  CHECK(*format_from_extension("a/b.CSV") == ScheduleFormat::kCsv);
  CHECK(*format_from_extension("b.json") == ScheduleFormat::kJson);
  CHECK_FALSE(format_from_extension("b.txt").ok());
  auto s = *gpipe(ScheduleShape{2, 2, {}});
  CHECK(parse_schedule(to_json(s), "x")->format == ScheduleFormat::kJson);
  CHECK(parse_schedule(to_csv(s), "x")->format == ScheduleFormat::kCsv);
  CHECK(error_of(load_schedule("/nonexistent/dir/x.csv")) == "/nonexistent/dir/x.csv: cannot open: No such file or directory");
  const std::string path = std::string(PIPEWORKS_BINARY_DIR) + "/schedule_io_test.json";
  REQUIRE(save_schedule(s, path).ok());
  auto back = load_schedule(path);
  REQUIRE(back.ok());
  CHECK(back->schedule == s);
  CHECK_FALSE(save_schedule(s, path + ".txt").ok());
}

TEST_CASE("render_grid of small recompute and lowered schedules", "[io][grid]") {
  auto s = gpipe(ScheduleShape{2, 2, {}});
  REQUIRE(s.ok());
  CHECK(*render_grid(*add_recompute(*s)) ==
        "t:   0  1  2  3  4  5  6  7\n"
        "d0: F0 F1 R0  .  . B0 R1 B1\n"
        "d1:  . F0 F1 R0 B0 R1 B1  .\n");
  // Comm takes no step in unit-time execution: lowering keeps the compute rows and adds a row of
  // transfers under each device (the picture in text_grid.h).
  CHECK(*render_grid(*lower_comm(*s)) ==
        "t:    0   1   2   3   4   5\n"
        "d0:  F0  F1   .   .  B0  B1\n"
        "    >F0 >F1         <B0 <B1\n"
        "d1:   .  F0  F1  B0  B1   .\n"
        "        <F0 <F1 >B0 >B1\n"
        "(under each device: >F0 sent after that step, <B0 received before it)\n");
  // Several stages on a device: marks carry the stage, several in a step separated by commas.
  auto v = generate(ScheduleKind::kZbV, ScheduleShape{4, 2, {}});
  REQUIRE(v.ok());
  const std::string grid = *render_grid(*lower_comm(*v));
  CHECK(grid.find("1<F1,2>F0") != std::string::npos);
  CHECK(grid.find("3>B0") != std::string::npos);
}

TEST_CASE("JSON numbers beyond a double are errors, not exceptions", "[io]") {
  CHECK(error_of(parse_json(R"({"version": 8E310})", "a.json")).rfind("a.json: error: invalid JSON:", 0) == 0);
}
