// Runs the built `pipeworks` binary: `sweep` and `plan` output, files, skip counts and exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"

namespace {

using Run = pipeworks::test::CliRun;
Run run(const std::string& arguments) { return pipeworks::test::run_pipeworks(arguments); }

std::string read_file(const std::string& path) { return pipeworks::test::read_text_file(path); }

const std::string kScratch = std::string(PIPEWORKS_BINARY_DIR) + "/sweep_cli_test";
// The uniform preset (8 layers) on one DGX H100 (8 GPUs).
const std::string kSmall = "sweep --model uniform --cluster dgx-h100 --batch 8 ";

}  // namespace

TEST_CASE("sweep prints the best and the Pareto frontier, and counts skipped configurations", "[cli][sweep]") {
  // 4 schedules x 2 recompute modes = 8 per (stages, M). Stages 16 > 8 devices: 8 M values x 8;
  // M = 3, 5, 6, 7 do not divide 8: 4 x 3 stage counts x 8.
  const Run sweep = run(kSmall + "--pp 1,2,4,16 --microbatches 1..8 --top 3");
  CHECK(sweep.exit_code == 0);
  CHECK_THAT(sweep.output, Catch::StartsWith("sweep: uniform on dgx-h100 (8 devices): 96 configurations simulated, "
                                             "160 skipped (64 needing more devices than the cluster's, 96 micro-batches not dividing "
                                             "the batch); 96 fit in memory\n"));
  CHECK_THAT(sweep.output, Catch::Contains("Top 3 (fitting first, by samples/s):\n"
                                           "stages  M  mb  schedule  recompute  partition"));
  CHECK_THAT(sweep.output, Catch::Contains("Pareto frontier (samples/s against peak memory):\n"));
}

TEST_CASE("sweep writes every row to CSV and JSON, the same for any thread count", "[cli][sweep]") {
  std::system(("mkdir -p " + kScratch).c_str());
  const std::string args = kSmall + "--pp pow2:1..8 --microbatches 1,2,4..8 --schedule 1f1b --recompute on ";
  const Run one = run(args + "--sweep-threads 1 -o " + kScratch + "/one.csv");
  const Run four = run(args + "--sweep-threads 4 -o " + kScratch + "/four.csv");
  REQUIRE(one.exit_code == 0);
  REQUIRE(four.exit_code == 0);
  const std::string csv = read_file(kScratch + "/one.csv");
  CHECK(csv == read_file(kScratch + "/four.csv"));
  // 4 stage counts x 4 micro-batch counts (1, 2, 4, 8), one schedule, one mode: 16 rows.
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 16);
  CHECK_THAT(one.output, Catch::Contains("wrote 16 rows to "));
  const Run json = run(args + "-o " + kScratch + "/rows.json");
  REQUIRE(json.exit_code == 0);
  CHECK_THAT(read_file(kScratch + "/rows.json"), Catch::Contains("\"microbatches_not_dividing_batch\": 12"));
}

TEST_CASE("sweep rejects bad lists and unknown inputs with the right exit code", "[cli][sweep]") {
  const Run range = run(kSmall + "--pp 1..x --microbatches 1");
  CHECK(range.exit_code == 2);
  CHECK_THAT(range.output, Catch::Contains("pipeworks sweep: error: --pp: \"1..x\": column 3: expected a number"));
  const Run schedule = run(kSmall + "--pp 1 --microbatches 1 --schedule gpipe,zb");
  CHECK(schedule.exit_code == 2);
  CHECK_THAT(schedule.output, Catch::Contains("--schedule: \"gpipe,zb\": column 6: 'zb' is not one of gpipe, 1f1b"));
  const Run cap = run(kSmall + "--pp 1 --microbatches 1 --memory-cap 80Gb");
  CHECK(cap.exit_code == 2);
  CHECK_THAT(cap.output, Catch::Contains("--memory-cap: "));
  const Run model = run("sweep --model no-such-model --cluster dgx-h100 --batch 8 --pp 1 --microbatches 1");
  CHECK(model.exit_code == 1);
  CHECK_THAT(model.output, Catch::Contains("--model 'no-such-model' is not a model preset ("));
  const Run scripted = run("plan --model resnet.pt --cluster dgx-h100 --batch 8 --devices 2");
  CHECK(scripted.exit_code == 1);
  CHECK_THAT(scripted.output, Catch::Contains("--model 'resnet.pt' is a TorchScript model, which the simulator reads "
                                              "through its profile: pipeworks profile --model resnet.pt"));
  const Run output = run(kSmall + "--pp 1 --microbatches 1 -o rows.txt");
  CHECK(output.exit_code == 2);
  const Run missing = run("sweep --model uniform --cluster dgx-h100 --pp 1 --microbatches 1");
  CHECK(missing.exit_code == 2);
}

TEST_CASE("plan prints the best configuration and a verdict per family", "[cli][plan]") {
  const Run plan = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --memory-cap 12GiB");
  CHECK(plan.exit_code == 0);
  // Layouts tp x pp x dp = 8: with tp 1, dp 8 takes M = 1..8, dp 4 1..16, ... (296 rows); tp 2, 4
  // and 8 add 232, 152 and 56; the M that leave dp x M not dividing 64 are skipped.
  CHECK_THAT(plan.output, Catch::StartsWith("plan: gpt2-medium on dgx-h100, batch 64: 736 configurations simulated, "
                                            "80 skipped as impossible\n"));
  CHECK_THAT(plan.output, Catch::Contains("\nbest: pp ") && Catch::Contains(" (8 devices, "));
  CHECK_THAT(plan.output, Catch::Contains("\n  tp 1 x pp 8 x dp 1 ") && Catch::Contains("\n  tp 1 x pp 1 x dp 8 ") &&
                              Catch::Contains("\n  tp 8 x pp 1 x dp 1 "));
  CHECK_THAT(plan.output, Catch::Contains("\nbest: "));
  CHECK_THAT(plan.output, Catch::Contains("(cap 12.00 GiB)"));
  CHECK_THAT(plan.output, Catch::Contains("runners-up (best of each family):\n  gpipe, recompute off"));
  CHECK_THAT(plan.output, Catch::Contains("the best (shown above)"));
  CHECK_THAT(plan.output, Catch::Contains("\n  zb-h1, recompute off"));
  // --schedule narrows the comparison to the schedules named, as in sweep.
  const Run two = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --schedule gpipe,1f1b");
  CHECK(two.exit_code == 0);
  CHECK_THAT(two.output, Catch::StartsWith("plan: gpt2-medium on dgx-h100, batch 64: 368 configurations simulated, "));
  CHECK_THAT(two.output, !Catch::Contains("zb-h1"));
  // The virtual-stage kinds are compared when named, each v its own family.
  const Run v = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --schedule zb-v,interleaved-1f1b");
  INFO(v.output);
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.output, Catch::Contains("\n  zb-v, recompute off") && Catch::Contains("\n  interleaved-1f1b v=2, recompute on"));
  const Run bad_v = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --schedule looped-bfs -v 1");
  CHECK(bad_v.exit_code == 1);
  CHECK_THAT(bad_v.output, Catch::Contains("virtual stages per device must be >= 2, got 1"));
}

TEST_CASE("plan fails with exit 1 when nothing fits, naming the overflow", "[cli][plan]") {
  const Run plan = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --memory-cap 64MiB");
  CHECK(plan.exit_code == 1);
  CHECK_THAT(plan.output, Catch::Contains("no configuration fits in memory\nclosest: "));
  CHECK_THAT(plan.output, Catch::Contains("partitioner: under the memory caps: no partition into"));
  const Run devices = run("plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 16");
  CHECK(devices.exit_code == 1);
  CHECK_THAT(devices.output, Catch::Contains("plan: 16 devices asked for, but cluster 'dgx-h100' has 8"));
  const Run list = run("plan --model gpt2-medium --cluster dgx-h100 --batch 32,64 --devices 8");
  CHECK(list.exit_code == 2);
  CHECK_THAT(list.output, Catch::Contains("--batch: \"32,64\": expected one number, not a list of 2"));
}
