// Hostile input through every LibTorch-free command (schedule, validate, simulate, sweep, plan),
// one test per class of defect: sizes past the shared limits, outputs whose write fails, usage
// errors, and messages that must name the input rather than leak internals. Each class runs
// through each command. (run, profile and launch: tests/hw/run/run_cli_hostile_test.cc.)
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace {

namespace fs = std::filesystem;
using pipeworks::test::CliRun;
using pipeworks::test::run_pipeworks;

const std::string kSweep = "sweep --model gpt2-medium --cluster dgx-h100 --batch 8 --pp 2 --microbatches 2 ";
const std::string kPlan = "plan --model gpt2-medium --cluster dgx-h100 --batch 8 --devices 2 ";
const std::string kData = PIPEWORKS_TEST_DATA_DIR;

using Case = pipeworks::test::CliCase;
constexpr auto check_cases = pipeworks::test::check_cli_cases;

// A directory of its own, with "full.csv" and "full.json" naming /dev/full (a device whose
// every write fails with ENOSPC) for commands that want an extension.
fs::path scratch_dir() {
  const fs::path dir = pipeworks::test::temp_path("hostile_cli");
  fs::create_directories(dir);
  for (const char* name : {"full.csv", "full.json", "full.svg"}) {
    if (!fs::exists(dir / name)) fs::create_symlink("/dev/full", dir / name);
  }
  return dir;
}

TEST_CASE("hostile CLI: sizes past the shared limits are refused up front", "[cli][hostile]") {
  check_cases({{"schedule --schedule gpipe -K 100000 -M 2", "--stages: must be an integer from 1 to 65536, got '100000'"},
               {"schedule --schedule 1f1b -K 60000 -M 100",
                "60000 stages x 100 micro-batches is more than the limit of 4194304 cells"},
               {"simulate -K 60000 -M 100", "60000 stages x 100 micro-batches is more than the limit of 4194304 cells"},
               {"simulate -M 5000000", "--microbatches: must be an integer from 1 to 4194304, got '5000000'"},
               {kSweep + "--sweep-threads 5000", "--sweep-threads: must be an integer from 0 to 1024, got '5000'"},
               {"sweep --model gpt2-medium --cluster dgx-h100 --batch 8 --pp 1 --microbatches 1..100000000",
                "list too long: more than 1000000 values"},
               {kPlan + "--nodes 5000", "--nodes: must be an integer from 1 to 1024, got '5000'"},
               {"validate --max-errors 99999999999 x.csv", "--max-errors: must be an integer from 0 to 1000000"}},
              2);
  // A file is input, not usage: the same limit, exit 1.
  check_cases({{"validate " + kData + "/invalid/bad_shape_huge.json", "2147483647 stages is more than the limit of 65536"}},
              1);
}

TEST_CASE("hostile CLI: every output whose write fails is an error", "[cli][hostile]") {
  const fs::path dir = scratch_dir();
  const std::string full_csv = (dir / "full.csv").string();
  const std::string full_json = (dir / "full.json").string();
  const std::string enospc = "No space left on device";
  check_cases({{"schedule --schedule gpipe -K 2 -M 2 -o /dev/full", "/dev/full: cannot write: " + enospc},
               {"simulate -K 2 -M 2 --json /dev/full", "/dev/full: cannot write: " + enospc},
               {"simulate -K 2 -M 2 --trace /dev/full", "/dev/full: cannot write: " + enospc},
               {"simulate -K 2 -M 2 --svg /dev/full", "/dev/full: cannot write: " + enospc},
               {kSweep + "-o " + full_csv, full_csv + ": cannot write: " + enospc},
               {kPlan + "-o " + full_json, full_json + ": cannot write: " + enospc}},
              1);
  // An output that cannot be opened fails before the work, not after it.
  const std::string missing = "/nonexistent/dir/out";
  for (const std::string& arguments :
       {"schedule --schedule gpipe -K 2 -M 2 -o " + missing + ".csv", "simulate -K 2 -M 2 --svg " + missing + ".svg",
        kSweep + "-o " + missing + ".csv", kPlan + "-o " + missing + ".json", "simulate -K 2 -M 2 --json " + dir.string()}) {
    const CliRun run = run_pipeworks(arguments);
    INFO(arguments << "\n" << run.output);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.output, Catch::Contains(": cannot open for writing: No such file or directory") ||
                               Catch::Contains(": is a directory, not a file"));
    CHECK_THAT(run.output, !Catch::Contains("makespan") && !Catch::Contains("configurations simulated"));
  }
  // Standard output on a full device.
  const std::string valid = (dir / "valid.csv").string();
  REQUIRE(run_pipeworks("schedule --schedule gpipe -K 2 -M 2 -o " + valid).exit_code == 0);
  for (const std::string& arguments : {std::string("schedule --schedule gpipe -K 2 -M 2"), "validate " + valid,
                                       std::string("simulate"),
                                       kSweep, kPlan, std::string("--help")}) {
    const CliRun run = run_pipeworks(arguments, "2>&1 >/dev/full");
    INFO(arguments << "\n" << run.output);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.output, Catch::Contains("pipeworks: error: cannot write standard output: " + enospc));
  }
  fs::remove_all(dir);
}

TEST_CASE("hostile CLI: usage errors exit 2 with one line naming the option, before anything runs",
          "[cli][hostile]") {
  const std::vector<Case> cases = {
      {"schedule --schedule gpipe -K 0 -M 2", "--stages: must be an integer from 1 to 65536, got '0'"},
      {"schedule --schedule gpipe -K 2 -M -1", "--microbatches: must be an integer from 1 to 4194304, got '-1'"},
      {"schedule --schedule gpipe -K 2 -M 2 --placement 0,-1", "--placement: must be an integer from 0 to 65535, got '-1'"},
      {"validate --max-errors -1 x.csv", "--max-errors: must be an integer from 0 to 1000000, got '-1'"},
      {"simulate --batch 0", "--batch: must be an integer from 1 to 2147483647, got '0'"},
      {"simulate -K -3", "--stages: must be an integer from 1 to 65536, got '-3'"},
      {"simulate -K 2.5", "--stages: must be an integer from 1 to 65536, got '2.5'"},
      {kSweep + "--top -1", "--top: must be an integer from 0 to 1000000, got '-1'"},
      {kSweep + "--threads -1", "--threads: must be an integer from 0 to 1024, got '-1'"},
      {"sweep --model gpt2-medium --cluster dgx-h100 --batch 0 --pp 2 --microbatches 2", "--batch: \"0\""},
      {"plan --model gpt2-medium --cluster dgx-h100 --batch 8 --devices 0", "--devices: \"0\""},
      {"plan --model gpt2-medium --cluster dgx-h100 --batch -5 --devices 2", "--batch: \"-5\""},
      {kPlan + "--memory-cap -3GiB", "--memory-cap"},
      // Ignored otherwise: no kind searched reads a virtual-stage count.
      {kSweep + "--schedule 1f1b,zb-v -v 3",
       "--virtual-stages: no schedule searched takes it (it applies to interleaved-1f1b, looped-bfs, interleaved-zb"},
      {kPlan + "-v 4", "--virtual-stages: no schedule searched takes it"}};
  check_cases(cases, 2);
  for (const Case& c : cases) {
    const CliRun run = run_pipeworks(c.arguments);
    INFO(c.arguments << "\n" << run.output);
    CHECK(std::count(run.output.begin(), run.output.end(), '\n') <= 2);  // the error and where to read more
    CHECK_THAT(run.output, !Catch::Contains("Options:"));
  }
}

TEST_CASE("hostile CLI: outputs that collide, '-', empty values and non-decimal integers are refused",
          "[cli][hostile]") {
  const fs::path dir = pipeworks::test::temp_path("hostile_outputs");
  fs::create_directories(dir);
  const std::string same = (dir / "same.json").string();
  const std::string via_dots = (dir / ".." / dir.filename() / "same.json").string();
  check_cases({{"simulate -K 2 -M 2 --json " + same + " --trace " + same, "--json and --trace name the same file"},
               {"simulate -K 2 -M 2 --json " + same + " --svg " + via_dots, "--json and --svg name the same file"},
               {"simulate -K 2 -M 2 --json -", "--json: '-' is not standard output here"},
               {"schedule --schedule gpipe -K 2 -M 2 -o -", "--output: '-' is not standard output here"},
               {"simulate -K 2 -M 2 --json ''", "--json: an empty value"},
               {"schedule --schedule gpipe -K 2 -M 2 -o ''", "--output: an empty value"},
               {kPlan + "--memory-cap ''", "--memory-cap: an empty value"},
               {"simulate -K 010 -M 2", "--stages: must be written in decimal (no leading zero or 0x), got '010'"},
               {"schedule --schedule gpipe -K 2 -M 0x10", "--microbatches: must be written in decimal"}},
              2);
  CHECK_FALSE(fs::exists(same));
  CHECK_FALSE(fs::exists("-"));
  fs::remove_all(dir);
}

TEST_CASE("hostile CLI: messages name the input and leak no internals", "[cli][hostile]") {
  const fs::path dir = scratch_dir();
  check_cases({{"validate " + dir.string(), dir.string() + ": is a directory, not a file"},
               {"simulate --model " + dir.string(), "is not a model preset"},
               {"simulate --model-spec " + kData + "/invalid_specs/model_negative.json",
                "model_negative.json: /layers/0/param_bytes: -5: negative values are not allowed"},
               {"sweep --model gpt2-medium --cluster-spec " + kData +
                    "/invalid_specs/cluster_zero_devices.json --batch 8 --pp 2 --microbatches 2",
                "cluster_zero_devices.json: /devices: 0: must be at least 1"}},
              1);
  // Numbers past any type's range are answered in the input's own words, on short lines.
  for (const std::string& arguments : {std::string("plan --model gpt2-medium --cluster dgx-h100 --batch 99999999999 --devices 2"),
                                       std::string("simulate --batch 1e400"), std::string("simulate -K 1e10")}) {
    const CliRun run = run_pipeworks(arguments);
    INFO(arguments << "\n" << run.output);
    CHECK(run.exit_code == 2);
    std::size_t longest = 0;
    for (std::size_t start = 0, end = 0; start < run.output.size(); start = end + 1) {
      end = std::min(run.output.find('\n', start), run.output.size());
      longest = std::max(longest, end - start);
    }
    CHECK(longest < 160);
  }
  fs::remove_all(dir);
}

}  // namespace
