// Shapes inside the argument ranges whose work would outgrow what they ask for (a grid far larger
// than its schedule, a V built far beyond M, a devices x devices link table) and preset sizes
// outside what the presets can represent: each command refuses them at once with the figure and
// the limit (exit 2), and the same shape in a proportional form still runs.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace {

using pipeworks::test::CliRun;
using pipeworks::test::run_pipeworks;

using Case = pipeworks::test::CliCase;
constexpr auto check_cases = pipeworks::test::check_cli_cases;

TEST_CASE("hostile CLI: work far beyond the shape asked for is refused with its estimate", "[cli][hostile]") {
  check_cases({{"schedule --schedule 1f1b -K 4096 -M 2",
                "the grid would have 4096 rows x 8194 steps = 33562624 cells, beyond the largest grid drawn"},
               {"schedule --schedule zb-v -K 4096 -M 2 --format csv",
                "zb-v builds its V for at least 4095 micro-batches whatever M is: 4096 stages x 4095"},
               {"simulate --model uniform --layers 4097 --cluster multinode --nodes 513 -K 4097 -M 1",
                "4097 devices need a 4097 x 4097 link table"},
               {"sweep --model uniform --cluster dgx-h100 --batch 8 --pp 5000 --microbatches 1",
                "--pp: 5000 devices need a 5000 x 5000 link table"},
               {"plan --model uniform --cluster multinode --nodes 1024 --batch 8 --devices 8192",
                "--devices: 8192 devices need a 8192 x 8192 link table"}},
              2);
  // The same 1F1B as CSV: 4096 rows of 4 actions, no error.
  const CliRun csv = run_pipeworks("schedule --schedule 1f1b -K 4096 -M 2 --format csv", "2>&1 >/dev/null");
  CHECK(csv.exit_code == 0);
  CHECK(csv.output.empty());
}

TEST_CASE("hostile CLI: preset sizes out of the presets' ranges are usage errors naming the flag", "[cli][hostile]") {
  check_cases({{"simulate --model gpt3-175b --flops 1 -K 2 -M 2", "--flops is 1 FLOP/s"},
               {"plan --model amoeba --flops 1 --cluster dgx-h100 --batch 8 --devices 2", "the rate must be at least"},
               {"simulate --model uniform --layers 100001", "--layers: must be an integer from 1 to 100000"},
               {"sweep --model gpt2-small --model-width 2000000 --cluster dgx-h100 --batch 8 --pp 2 --microbatches 2",
                "--model-width: must be an integer from 1 to 1000000"},
               {"simulate --model gpt2-small --heads 7", "heads (7) must divide hidden (768)"}},
              2);
}

TEST_CASE("hostile CLI: a cluster file with 0 bytes of memory is refused", "[cli][hostile]") {
  const auto path = pipeworks::test::temp_path("zero_memory_cluster", ".json");
  std::ofstream(path) << R"({"name": "zero", "devices": 2, "device": {"memory_bytes": "0B"}, "devices_per_node": 2,
                            "intra_node": {"bandwidth_bytes_per_s": "1GB/s"}})";
  check_cases({{"simulate --model gpt2-small --cluster-spec " + path.string() + " -K 2 -M 2",
                "write \"unknown\" when the memory is not known"}},
              1);
  std::filesystem::remove(path);
}

}  // namespace
