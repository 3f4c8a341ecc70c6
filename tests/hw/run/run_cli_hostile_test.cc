// Hostile input through the LibTorch commands (run, run --predict, profile, launch), one test
// per class of defect as tests/cli/hostile_input_cli_test.cc does for the others: sizes past
// the shared limits, outputs whose write fails, usage errors before any header, and messages
// without LibTorch's internals.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

const std::string kTinyRun = "run --model mlp --depth 2 --width 8 -K 2 -M 2 --batch 4 --steps 1 --intra-op-threads 1 ";
const std::string kTinyProfileMachine =
    "profile --model mlp --depth 1 --width 4 --microbatch-sizes 1 --warmup 0 --repetitions 1 --intra-op-threads 1 ";
const std::string kTinyProfile = kTinyProfileMachine + "--no-machine ";

struct Case {
  std::string arguments;
  std::string expected;
};

// Each case exits with `exit_code`, says `expected`, and printed no run header first.
void check_cases(const std::vector<Case>& cases, int exit_code) {
  for (const Case& c : cases) {
    const test::CliRun run = test::run_pipeworks(c.arguments);
    INFO(c.arguments << "\n" << run.output);
    CHECK(run.exit_code == exit_code);
    CHECK_THAT(run.output, Catch::Contains(c.expected));
    CHECK_THAT(run.output, !Catch::Contains("pipeworks run: mlp on") && !Catch::Contains("pipeworks profile: mlp on") &&
                               !Catch::Contains("Exception raised from") && !Catch::Contains("Options:"));
  }
}

TEST_CASE("hostile run/profile/launch: sizes past the shared limits are refused up front", "[hostile]") {
  REQUIRE(fs::exists(PIPEWORKS_EXE));
  check_cases({{"run --intra-op-threads 5000", "--intra-op-threads: must be an integer from 0 to 256, got '5000'"},
               {"run --steps 2000000", "--steps: must be an integer from 1 to 1000000, got '2000000'"},
               {"run --width 100000", "--width: must be an integer from 1 to 65536, got '100000'"},
               {"run --width 60000", "model: mlp has about 3.24e+10 parameters, more than the limit of 1.07e+09"},
               {"run -K 20", "20 stages is more than the model's 9 layers"},
               {"run -K 70000", "--stages: must be an integer from 1 to 65536, got '70000'"},
               {"run --predict --replay-rounds 1000000", "--replay-rounds: must be an integer from 1 to 100000"},
               {"profile -o x.json --intra-op-threads 999", "--intra-op-threads: must be an integer from 0 to 256, got '999'"},
               {"profile -o x.json --workers 65", "--workers: must be an integer from 1 to 64, got '65'"},
               {"profile -o x.json --microbatch-sizes 1,2000000", "--microbatch-sizes: must be an integer from 1"},
               {"launch -n 100000 -- true", "--nproc: must be an integer from 1 to 1024, got '100000'"}},
              2);
}

TEST_CASE("hostile run/profile: an option that would be ignored is refused, not dropped", "[hostile]") {
  check_cases({{kTinyRun + "--warmup 3", "--warmup applies to --predict only: add --predict or drop --warmup"},
               {kTinyRun + "--profile-repetitions 3", "--profile-repetitions applies to --predict only"},
               {kTinyRun + "--replay-rounds 3", "--replay-rounds applies to --predict only"},
               {kTinyRun + "--no-stage-replay", "--no-stage-replay applies to --predict only"},
               {kTinyRun + "--cluster-spec c.json", "--cluster-spec applies to --predict only"},
               {kTinyRun + "--distributed --predict --replay-rounds 3",
                "--distributed --predict has no stage replay: drop --replay-rounds"},
               {kTinyRun + "--distributed --predict --no-stage-replay",
                "--distributed --predict has no stage replay: drop --no-stage-replay"},
               {kTinyProfile + "-o m.json --cluster-out c.json", "--cluster-out writes what --no-machine skips"},
               {kTinyProfile + "-o m.json --round-gap 2", "--round-gap is the pause between rounds: it needs --rounds 2"}},
              2);
}

TEST_CASE("hostile profile: --no-machine prints no machine figures it did not measure", "[hostile]") {
  const fs::path dir = test::temp_path("hostile_no_machine");
  fs::create_directories(dir);
  const test::CliRun skipped = test::run_pipeworks(kTinyProfile + "-o " + (dir / "m.json").string());
  INFO(skipped.output);
  REQUIRE(skipped.exit_code == 0);
  CHECK_THAT(skipped.output, Catch::Contains("machine: not measured (--no-machine)"));
  CHECK_THAT(skipped.output, !Catch::Contains("contention:") && !Catch::Contains("hand-off (") &&
                                 !Catch::Contains("dispatch overhead") && !Catch::Contains("idle slowdown"));
  const test::CliRun measured = test::run_pipeworks(kTinyProfileMachine + "-o " + (dir / "m.json").string());
  INFO(measured.output);
  REQUIRE(measured.exit_code == 0);
  CHECK_THAT(measured.output, Catch::Contains("contention: 2 workers at once take") &&
                                  Catch::Contains("idle slowdown: F+B after 5 ms asleep takes") &&
                                  Catch::Contains("hand-off (in-process transport)") &&
                                  !Catch::Contains("not measured"));
  fs::remove_all(dir);
}

TEST_CASE("hostile run: data-parallel settings a run cannot take are refused up front", "[hostile]") {
  check_cases({{kTinyRun + "--dp 2", "--dp 2: data-parallel replicas run one process per rank; start them with"},
               {kTinyRun + "--dp 2 --zero 2", "--zero 2: runs shard the optimizer state only (--zero 0 or 1)"},
               {kTinyRun + "--zero 1", "--zero 1 shards over data-parallel replicas, but --dp is 1"},
               {kTinyRun + "--dp 3", "batch size 4 does not split into 3 replicas x 2 micro-batches"},
               {kTinyRun + "--dp 2 --pin-workers on", "--pin-workers on pins each device's worker"},
               {kTinyRun + "--dp 2 --predict", "--dp 2: data-parallel replicas run one process per rank"},
               {kTinyRun + "--dp 0", "--dp: must be an integer from 1"}},
              2);
}

TEST_CASE("hostile run/profile: every output whose write fails is an error", "[hostile]") {
  const fs::path dir = test::temp_path("hostile_run");
  fs::create_directories(dir);
  const std::string enospc = "/dev/full: cannot write: No space left on device";
  for (const std::string option : {"--json", "--trace", "--svg"}) {
    const test::CliRun run = test::run_pipeworks(kTinyRun + option + " /dev/full");
    INFO(option << "\n" << run.output);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.output, Catch::Contains(enospc));
  }
  for (const std::string& outputs : {std::string("-o /dev/full"), "-o " + (dir / "m.json").string() + " --cluster-out /dev/full"}) {
    const test::CliRun run = test::run_pipeworks(kTinyProfileMachine + outputs);
    INFO(outputs << "\n" << run.output);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.output, Catch::Contains(enospc));
  }
  // Standard output on a full device.
  const test::CliRun full = test::run_pipeworks(kTinyRun, "2>&1 >/dev/full");
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.output, Catch::Contains("cannot write standard output: No space left on device"));
  // An output that cannot be opened fails before the run or the profile, not after them.
  check_cases({{kTinyRun + "--json /nonexistent/r.json", "--json: /nonexistent/r.json: cannot open for writing"},
               {kTinyRun + "--predict --svg " + dir.string(), "is a directory, not a file"},
               {kTinyProfile + "-o /nonexistent/m.json", "--output: /nonexistent/m.json: cannot open for writing"}},
              1);
  fs::remove_all(dir);
}

TEST_CASE("hostile run/profile/launch: usage errors exit 2 before any header", "[hostile]") {
  check_cases({{"run -K 0", "--stages: must be an integer from 1 to 65536, got '0'"},
               {"run -M -2", "--microbatches: must be an integer from 1 to 4194304, got '-2'"},
               {"run --batch 0", "--batch: must be an integer from 1 to 1048576, got '0'"},
               {"run --batch 30", "batch size 30 must be a positive multiple of the 8 micro-batches"},
               {"run --steps 0", "--steps: must be an integer from 1 to 1000000, got '0'"},
               {"run --threads -1", "--threads: must be an integer from 0 to 256, got '-1'"},
               {"run --timeout 0", "--timeout: must be a number in (0, 1e+06], got '0'"},
               {"run --dropout 1", "--dropout: must be a number in [0, 1), got '1'"},
               {"run -K 2 --placement 0,5", "stage 1 is placed on device 5, outside 0..1"},
               {"run --partition 3,3,3", "partition"},
               {"run --schedule 1f1b --virtual-stages 2", "--virtual-stages applies to interleaved-1f1b, looped-bfs and interleaved-zb, not 1f1b"},
               {"run --schedule interleaved-1f1b -K 3 -v 2", "3 stages cannot be cut into 2 virtual stages per device"},
               {"run --schedule looped-bfs -K 4 -v 2 -M 3", "3 micro-batches is not a multiple of the 2 devices"},
               {"run --schedule zb-v --stages 3", "zb-v places two stages on each device; 3 stages is odd"},
               {"run --predict --check", "--check and --predict: run them separately"},
               {"run --predict --warmup -1", "--warmup: must be an integer from 0 to 1000000, got '-1'"},
               {"run --predict --profile-repetitions 0", "--profile-repetitions: must be an integer from 1"},
               {"profile -o x.json --workers 0", "--workers: must be an integer from 1 to 64, got '0'"},
               {"profile -o x.json --rounds 0", "--rounds: must be an integer from 1 to 100000, got '0'"},
               {"profile -o x.json --round-gap -1", "--round-gap: must be a number in [0, 3600], got '-1'"},
               {"profile -o x.json --microbatch-sizes 0", "--microbatch-sizes: must be an integer from 1"},
               {"launch -n 0 -- true", "--nproc: must be an integer from 1 to 1024, got '0'"},
               {"launch --master-port 70000 -- true", "--master-port: must be an integer from 0 to 65535"},
               {"launch --kill-after -1 -- true", "--kill-after: must be a number in [0, 1e+07], got '-1'"}},
              2);
}

TEST_CASE("hostile run/profile: colliding outputs, bad seeds, empty values and flags of another model kind",
          "[hostile]") {
  const std::string same = test::temp_path("same", ".json").string();
  check_cases({{kTinyProfileMachine + "-o " + same + " --cluster-out " + same, "--output and --cluster-out name the same file"},
               {kTinyRun + "--json " + same + " --trace " + same, "--json and --trace name the same file"},
               {kTinyRun + "--json -", "--json: '-' is not standard output here"},
               {kTinyRun + "--seed -1", "--seed: must be a decimal integer from 0 to 18446744073709551615, got '-1'"},
               {kTinyRun + "--seed 18446744073709551616", "--seed: must be a decimal integer from 0 to"},
               {kTinyRun + "--seed ''", "--seed: must be a decimal integer from 0 to"},
               {kTinyRun + "--json ''", "--json: an empty value"},
               {kTinyRun + "--loss ''", "--loss: an empty value"},
               {"run -M 010", "--microbatches: must be written in decimal (no leading zero or 0x), got '010'"},
               {"run --model mlp --layers 2", "--layers: only for --model transformer, not --model mlp"},
               {"run --model transformer --depth 2", "--depth: only for --model mlp, not --model transformer"},
               {"run --layers 2", "--layers: only for --model transformer, not --model mlp"},
               {"run --model convnet --input-high 5", "--input-high: only for a TorchScript model (--model FILE.pt), not --model convnet"}},
              2);
  CHECK_FALSE(fs::exists(same));
}

TEST_CASE("hostile run: messages name the input, not LibTorch's internals", "[hostile]") {
  check_cases({{"run --lr -1", "--lr: must be a number in [0, 1e+06], got '-1'"},
               {"run --lr nan", "--lr: must be a number in [0, 1e+06], got 'nan'"},
               {"run --width 1e400", "--width: must be an integer from 1 to 65536, got '1e400'"}},
              2);
  const std::string data = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid_specs/";
  check_cases({{kTinyRun + "--predict --model-spec " + data + "model_negative.json",
                "model_negative.json: /layers/0/param_bytes: -5: negative values are not allowed"},
               {kTinyRun + "--predict --model-spec /tmp", "/tmp: is a directory, not a file"}},
              1);
}

TEST_CASE("run --tp refused: one process (with --predict too), a model or size that does not split, a GPU", "[cli][tp]") {
  check_cases(
      {{"run --tp 2 -K 1 -M 2 --steps 1",
        "--tp 2: tensor-parallel ranks run one process per rank; start them with `pipeworks launch -n <tp x pp x dp>"},
       {"run --tp 2 --model convnet -K 1 --steps 1", "the convnet model cannot split over tensor-parallel ranks"},
       {"run --tp 3 --model mlp --width 16 -K 1 --steps 1", "the mlp's --width (16) does not split into 3 equal shards"},
       {"run --tp 2 --model transformer --ff-width 33 -K 1 --steps 1",
        "the transformer's --ff-width (33) does not split into 2 equal shards"},
       {"run --tp 2 --device cuda -K 1 --steps 1", "run --tp with --device cpu"},
       {"run --tp 2 -K 1 --steps 1 --predict", "--tp 2: tensor-parallel ranks run one process per rank"},
       {"run --tp 0 -K 1", "--tp"}},
      2);
}

}  // namespace
}  // namespace pipeworks::hw
