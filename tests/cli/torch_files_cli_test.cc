// `pipeworks validate` and `simulate --schedule-file` on files torch.distributed.pipelining wrote
// itself (tests/data/torch_emitted/): accepted, and the simulate summary and report note what the
// simulator does not time (stage-level actions, OVERLAP_F_B composites).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_pipeworks.h"

namespace {

const std::string kTorch = std::string(PIPEWORKS_TEST_DATA_DIR) + "/torch_emitted/";
const std::string kInvalid = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid/";

}  // namespace

TEST_CASE("validate accepts torch's files and names what they hold", "[cli][validate][torch]") {
  const std::string file = kTorch + "ScheduleDualPipeV_p2_v2_m4.compute_comms.csv";
  const auto r = pipeworks::test::run_pipeworks("validate " + file);
  CHECK(r.exit_code == 0);
  CHECK(r.output == file +
                        ": ok: 4 stages, 4 micro-batches, 2 devices, 81 actions, comm lowered, stage-level actions, "
                        "6 OVERLAP_F_B composites\n");
  const auto only = pipeworks::test::run_pipeworks("validate " + kTorch + "ScheduleDualPipeV_p2_v2_m4.compute_only.csv");
  CHECK(only.exit_code == 0);
}

TEST_CASE("validate locates a stage-level rule broken", "[cli][validate][torch]") {
  const auto r = pipeworks::test::run_pipeworks("validate " + kInvalid + "shard_order.csv");
  CHECK(r.exit_code == 1);
  CHECK(r.output == kInvalid +
                        "shard_order.csv:1:18: error: 0UNSHARD gathers stage 0's parameters again: 0UNSHARD at "
                        "position 0 gathered them and no RESHARD freed them [shard-order]\n"
                        "             0         1         2         3         4\n"
                        "  d0 <0UNSHARD>      0F0       0B0 [0UNSHARD] 0RESHARD\n" +
                        kInvalid + "shard_order.csv: 1 error\n");
}

TEST_CASE("simulate --schedule-file takes torch's files and notes what it does not time", "[cli][simulate][torch]") {
  const std::string json = std::string(PIPEWORKS_BINARY_DIR) + "/torch_files_cli_test.json";
  const auto r = pipeworks::test::run_pipeworks("simulate --model gpt2-small --cluster dgx-h100 --schedule-file " + kTorch +
                                                "ScheduleDualPipeV_p2_v2_m4.compute_comms.csv --json " + json);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nnote         12 stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) cost "
                                       "nothing: the cost model gives them no time (no data-parallel group)\n"));
  CHECK_THAT(r.output, Catch::Contains("\nnote         6 OVERLAP_F_B actions run as their forward then their backward: "
                                       "overlap is not modelled\n"));
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  CHECK(report["num_stage_level_actions"] == 12);
  CHECK(report["num_composites"] == 6);
  CHECK(report["notes"].size() == 2);
  // A compute_only file is lowered by our passes first; torch's pipeline_order of GPipe holds REDUCE_GRAD.
  const auto gpipe = pipeworks::test::run_pipeworks("simulate --model gpt2-small --cluster dgx-h100 --schedule-file " +
                                                    kTorch + "ScheduleGPipe_p4_m8.pipeline_order.csv");
  CHECK(gpipe.exit_code == 0);
  CHECK_THAT(gpipe.output, Catch::Contains("note         4 stage-level actions"));
}
