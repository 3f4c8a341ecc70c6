// `pipeworks plan --synthesize` run as a process: the synthesized family labelled with the row it
// was searched from, its schedule written and read back, the same output for one seed, the
// reason when only rows synthesis cannot express fit, and its options refused when out of range.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "cli/run_pipeworks.h"

namespace {

using pipeworks::test::CliRun;
using pipeworks::test::run_pipeworks;

const std::string kScratch = std::string(PIPEWORKS_BINARY_DIR) + "/plan_synthesis_cli_test_";
// 1 GiB of parameters a layer: replicas pay for their all-reduce; 200 evaluations: one result.
const std::string kPlan = "plan --model uniform --layer-params 1GiB --cluster dgx-h100 --batch 16 --devices 4 "
                          "--memory-cap 40GiB --synthesize --synthesis-max-evaluations 200 ";

}  // namespace

TEST_CASE("plan --synthesize labels the synthesized family and writes its schedule", "[cli][plan][synthesize]") {
  for (const std::string ext : {"csv", "json"}) {
    const std::string schedule = kScratch + "schedule." + ext;
    const CliRun r = run_pipeworks(kPlan + "--schedule 1f1b --synthesized-output " + schedule);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("synthesized (searched from K=4 M="));
    CHECK_THAT(r.output, Catch::Contains("the best: faster than the best row (K="));
    CHECK_THAT(r.output, Catch::Contains("synthesized schedule: searched from K=4 M="));
    CHECK_THAT(r.output, Catch::Contains("faster than the best row: step "));
    CHECK_THAT(r.output, Catch::Contains("wrote the synthesized schedule to " + schedule));
    const CliRun valid = run_pipeworks("validate " + schedule);
    INFO(valid.output);
    CHECK(valid.exit_code == 0);
    std::remove(schedule.c_str());
  }
}

TEST_CASE("plan --synthesize gives the same output twice", "[cli][plan][synthesize]") {
  const CliRun a = run_pipeworks(kPlan, "2>/dev/null");
  const CliRun b = run_pipeworks(kPlan, "2>/dev/null");
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.output, Catch::Contains("synthesized (searched from "));
  CHECK(a.output == b.output);
}

TEST_CASE("plan --synthesize says why nothing was searched when only data-parallel rows fit", "[cli][plan][synthesize]") {
  // One layer: one stage, so every row on 4 devices has 4 replicas.
  const CliRun r = run_pipeworks("plan --model uniform --layers 1 --cluster dgx-h100 --batch 16 --devices 4 --synthesize "
                                 "--synthesized-output " + kScratch + "none.csv");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("not searched: no fitting row has tp 1 and dp 1"));
  CHECK_THAT(r.output, Catch::Contains("(dp 4: synthesis models one pipeline without data parallelism)"));
  CHECK_THAT(r.output, Catch::Contains("--synthesized-output: no schedule was synthesized"));
}

TEST_CASE("plan refuses synthesis options out of range with one clear line", "[cli][plan][synthesize]") {
  const std::string base = "plan --model uniform --cluster dgx-h100 --batch 16 --devices 4 ";
  pipeworks::test::check_cli_cases(
      {{base + "--synthesize --synthesis-time-limit 0", "--synthesis-time-limit"},
       {base + "--synthesize --synthesis-time-limit nan", "--synthesis-time-limit"},
       {base + "--synthesize --synthesis-max-evaluations -2", "--synthesis-max-evaluations"},
       {base + "--synthesize --synthesis-seed -1", "--synthesis-seed"},
       {base + "--synthesized-output s.csv", "--synthesized-output needs --synthesize"},
       {base + "--synthesize --synthesized-output s.txt", "--synthesized-output"}},
      2);
}
