// Runs the built `pipeworks` binary: interleaved-zb through schedule, validate, simulate and sweep,
// with --virtual-stages, and the shape it refuses as torch does.
#include <string>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"

namespace {

using Run = pipeworks::test::CliRun;
Run run(const std::string& arguments) { return pipeworks::test::run_pipeworks(arguments); }

const std::string kScratch = std::string(PIPEWORKS_BINARY_DIR) + "/interleaved_zb_cli_test";

}  // namespace

TEST_CASE("interleaved-zb: schedule writes it, validate and simulate read it back, sweep searches it", "[cli]") {
  REQUIRE(run("schedule --schedule interleaved-zb -K 4 -M 4 -v 2").output.find(
              "d0: 0F0 0F1 2F0 2F1   . 2I0 2W0 0F2") != std::string::npos);
  REQUIRE(run("schedule --schedule interleaved-zb -K 8 -M 8 -v 2 --comm -o " + kScratch + ".csv").exit_code == 0);
  const Run valid = run("validate " + kScratch + ".csv");
  CHECK(valid.exit_code == 0);
  CHECK_THAT(valid.output, Catch::Contains("ok: 8 stages, 8 micro-batches, 4 devices"));
  const Run from_file = run("simulate --model uniform --cluster dgx-h100 --schedule-file " + kScratch + ".csv");
  INFO(from_file.output);
  CHECK(from_file.exit_code == 0);
  const Run simulated = run("simulate --model uniform --cluster dgx-h100 --schedule interleaved-zb -K 8 -M 8 -v 2");
  INFO(simulated.output);
  CHECK(simulated.exit_code == 0);
  CHECK_THAT(simulated.output,
             Catch::Contains("interleaved ZB closed form with F = I = W, M >= D: (D-1)/(3vM+D-1), D = 4, v = 2"));
  const Run sweep = run("sweep --model uniform --cluster dgx-h100 --batch 32 --pp 2,4 --microbatches 4,8 "
                        "--schedule zb-h1,interleaved-zb -v 2 --top 20");
  INFO(sweep.output);
  CHECK(sweep.exit_code == 0);
  CHECK_THAT(sweep.output, Catch::Contains("interleaved-zb v=2") && Catch::Contains("0 skipped"));
  const Run refused = run("schedule --schedule interleaved-zb -K 4 -M 5 -v 2");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("5 micro-batches do not split into 2 equal rounds"));
}
