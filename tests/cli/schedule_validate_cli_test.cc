// Runs the built `pipeworks` binary: `schedule` output and `validate` exit codes and messages.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"

namespace {

using Run = pipeworks::test::CliRun;
Run run(const std::string& arguments) { return pipeworks::test::run_pipeworks(arguments); }

const std::string kInvalid = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid/";
const std::string kScratch = std::string(PIPEWORKS_BINARY_DIR) + "/schedule_validate_cli_test";

}  // namespace

TEST_CASE("schedule prints the grid, CSV and JSON", "[cli][schedule]") {
  const Run grid = run("schedule --schedule gpipe --stages 2 --microbatches 2");
  CHECK(grid.exit_code == 0);
  CHECK(grid.output ==
        "t:   0  1  2  3  4  5\n"
        "d0: F0 F1  .  . B0 B1\n"
        "d1:  . F0 F1 B0 B1  .\n");
  const Run comm = run("schedule --schedule gpipe --stages 2 --microbatches 2 --comm");
  CHECK(comm.exit_code == 0);
  // The grid of the lowered schedule (its picture is asserted in tests/sched/schedule_io_test.cc).
  CHECK_THAT(comm.output, Catch::Contains("d0:  F0  F1   .   .  B0  B1\n    >F0 >F1         <B0 <B1\n"));
  CHECK_THAT(comm.output, Catch::EndsWith("(under each device: >F0 sent after that step, <B0 received before it)\n"));
  const Run csv = run("schedule --schedule 1f1b -k 2 -m 2 --comm --format csv");
  CHECK(csv.exit_code == 0);
  CHECK(csv.output ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\r\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\r\n");
  const Run json = run("schedule --schedule gpipe -k 3 -m 1 --placement 0,0,1 --recompute --format json");
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.output, Catch::Contains("\"placement\": [0,0,1]"));
  CHECK_THAT(json.output, Catch::Contains("[\"0F0\",\"1F0\",\"1R0\",\"1B0\",\"0R0\",\"0B0\"]"));
}

TEST_CASE("schedule -o writes a file that validate accepts", "[cli][schedule][validate]") {
  std::system(("mkdir -p " + kScratch).c_str());
  for (const char* ext : {".csv", ".json"}) {
    const std::string path = kScratch + "/1f1b_comm" + ext;
    const Run written = run("schedule --schedule 1f1b -k 4 -m 8 --recompute --comm -o " + path);
    REQUIRE(written.exit_code == 0);
    CHECK(written.output.empty());
    const Run checked = run("validate " + path);
    CHECK(checked.exit_code == 0);
    CHECK(checked.output == path + ": ok: 4 stages, 8 micro-batches, 4 devices, 192 actions, recompute, comm lowered\n");
  }
}

TEST_CASE("bad flags exit 2", "[cli][schedule][validate]") {
  CHECK(run("schedule --schedule gpipe --stages 0 --microbatches 2").exit_code == 2);
  CHECK(run("schedule --schedule zigzag --stages 2 --microbatches 2").exit_code == 2);
  CHECK(run("schedule --stages 2").exit_code == 2);  // --microbatches is required
  CHECK(run("schedule --stages 2 --microbatches 2").exit_code == 0);  // --schedule defaults to 1f1b
  CHECK(run("schedule --schedule gpipe --stages 2 --microbatches 2 --format svg").exit_code == 2);
  const Run placement = run("schedule --schedule gpipe --stages 2 --microbatches 2 --placement 0,2");
  CHECK(placement.exit_code == 2);
  CHECK_THAT(placement.output, Catch::Contains("stage 1 is placed on device 2, outside 0..1"));
  CHECK(run("validate").exit_code == 2);
  CHECK(run("validate a.csv --max-errors -1").exit_code == 2);
  CHECK(run("frobnicate").exit_code == 2);
}

TEST_CASE("every command has --help", "[cli]") {
  for (const char* command : {"schedule", "validate"}) {
    const Run help = run(std::string(command) + " --help");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.output, Catch::Contains("Usage"));
  }
}

TEST_CASE("validate reports FILE:ROW:COL errors with the marked grid and exits 1", "[cli][validate]") {
  const Run r = run("validate " + kInvalid + "backward_before_forward.csv");
  CHECK(r.exit_code == 1);
  CHECK(r.output == kInvalid +
                        "backward_before_forward.csv:1:1: error: 0B0 runs before its forward 0F0 "
                        "[backward-before-forward]\n"
                        "        0    1\n"
                        "  d0 [0B0]<0F0>\n" +
                        kInvalid + "backward_before_forward.csv: 1 error\n");
  const Run json = run("validate " + kInvalid + "local_comm.json");
  CHECK(json.exit_code == 1);
  CHECK_THAT(json.output, Catch::StartsWith(kInvalid + "local_comm.json: /programs/0/1: error: 0SEND_F0 exchanges"));
  const Run parse = run("validate " + kInvalid + "parse_trailing.csv");
  CHECK(parse.exit_code == 1);
  CHECK(parse.output == kInvalid + "parse_trailing.csv:2:8: error: unexpected trailing text 'xyz' in action '1F0xyz'\n");
  const Run missing = run("validate " + kScratch + "/does_not_exist.csv");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.output, Catch::Contains("cannot open: No such file or directory"));
}

TEST_CASE("validate caps the diagnostics shown in full", "[cli][validate]") {
  const Run r = run("validate " + kInvalid + "stage_on_two_devices.csv --max-errors 1");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("stage_on_two_devices.csv: 1 more errors not shown (--max-errors 1)\n"));
  CHECK_THAT(r.output, Catch::EndsWith("stage_on_two_devices.csv: 2 errors\n"));
}
