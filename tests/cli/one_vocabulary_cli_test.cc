// Runs the built `pipeworks` binary: the flags renamed into one vocabulary, their old spellings
// (accepted with a one-line note), spec files under --model-spec / --cluster-spec, the defaults
// simulate and run share, and the one error style.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"

namespace {

namespace fs = std::filesystem;
using pipeworks::test::CliRun;
using pipeworks::test::run_pipeworks;

const fs::path kScratch = fs::path(PIPEWORKS_BINARY_DIR) / "one_vocabulary_cli_test";

// A two-layer model spec and a two-device cluster spec, written for the test.
std::pair<std::string, std::string> write_specs() {
  fs::create_directories(kScratch);
  const fs::path model = kScratch / "model.json";
  const fs::path cluster = kScratch / "cluster.json";
  std::ofstream(model) << R"({"name": "two", "layers": [
      {"name": "a", "forward": "1ms", "backward": "2ms", "output_bytes": "1MiB", "stash_bytes": "4MiB", "param_bytes": "16MiB"},
      {"name": "b", "forward": "1ms", "backward": "2ms", "output_bytes": "1MiB", "stash_bytes": "4MiB", "param_bytes": "16MiB"}]})";
  std::ofstream(cluster) << R"({"name": "pair", "devices": 2, "device": {"memory_bytes": "80GiB"}, "devices_per_node": 2,
      "intra_node": {"bandwidth_bytes_per_s": "450GB/s", "latency": "3us"}})";
  return {model.string(), cluster.string()};
}

// The output without its first line (the deprecation note).
std::string after_first_line(const std::string& text) { return text.substr(text.find('\n') + 1); }

}  // namespace

TEST_CASE("old spellings still work, with one note naming the new flag", "[cli][vocabulary]") {
  const CliRun renamed = run_pipeworks("schedule --schedule gpipe -K 2 -M 2");
  const CliRun old = run_pipeworks("schedule --kind gpipe -K 2 -M 2");
  REQUIRE(renamed.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  CHECK(old.output.rfind("pipeworks schedule: note: --kind is deprecated; use --schedule\n", 0) == 0);
  CHECK(after_first_line(old.output) == renamed.output);

  const std::string sweep = "sweep --model uniform --cluster dgx-h100 --batch 8 --pp 2 --microbatches 4 ";
  const CliRun threads = run_pipeworks(sweep + "--threads 1");
  REQUIRE(threads.exit_code == 0);
  CHECK(threads.output.rfind("pipeworks sweep: note: --threads is deprecated; use --sweep-threads\n", 0) == 0);
  CHECK(after_first_line(threads.output) == run_pipeworks(sweep + "--sweep-threads 1").output);

  const CliRun both = run_pipeworks("schedule --kind gpipe --schedule 1f1b -K 2 -M 2");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("--schedule excludes --kind") &&
                              Catch::Contains("Run 'pipeworks schedule --help' for usage."));
}

TEST_CASE("spec files go to --model-spec and --cluster-spec, under --model they still load with a note",
          "[cli][vocabulary]") {
  const auto [model, cluster] = write_specs();
  const CliRun by_spec = run_pipeworks("simulate --model-spec " + model + " --cluster-spec " + cluster + " -K 2 -M 2");
  REQUIRE(by_spec.exit_code == 0);
  CHECK_THAT(by_spec.output, Catch::StartsWith("two on pair: 1f1b, K=2 stages, M=2 micro-batches"));
  const CliRun old = run_pipeworks("simulate --model " + model + " --cluster-spec " + cluster + " -K 2 -M 2");
  REQUIRE(old.exit_code == 0);
  CHECK(old.output.rfind("pipeworks simulate: note: a spec file under --model is deprecated; use --model-spec " + model,
                         0) == 0);
  CHECK(after_first_line(old.output) == by_spec.output);

  const CliRun plan = run_pipeworks("plan --model-spec " + model + " --cluster-spec " + cluster + " --batch 8 --devices 2");
  CHECK(plan.exit_code == 0);
  const CliRun neither = run_pipeworks("plan --cluster dgx-h100 --batch 8 --devices 2");
  CHECK(neither.exit_code == 2);
  CHECK(neither.output ==
        "pipeworks plan: error: --model or --model-spec is required\nRun 'pipeworks plan --help' for usage.\n");
  const CliRun both = run_pipeworks("simulate --model uniform --model-spec " + model);
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("--model excludes --model-spec"));
  const CliRun nodes = run_pipeworks("simulate --model-spec " + model + " --cluster-spec " + cluster + " --nodes 2");
  CHECK(nodes.exit_code == 2);
  fs::remove_all(kScratch);
}

TEST_CASE("simulate's defaults are run's: 1f1b, 4 stages, 8 micro-batches of 4 samples, uniform, adam",
          "[cli][vocabulary]") {
  const CliRun simulated = run_pipeworks("simulate --model uniform");
  REQUIRE(simulated.exit_code == 0);
  CHECK_THAT(simulated.output, Catch::StartsWith("uniform on dgx-h100: 1f1b, K=4 stages, M=8 micro-batches of 4 samples, "
                                                 "overlap comm, uniform partition, adam optimizer state\n"));
}

TEST_CASE("presets resize from the command line as from Python, with run's flag names", "[cli][vocabulary]") {
  // gpt2-medium has 24 blocks + embedding + head = 26 layers; 48 blocks make 50.
  const CliRun deeper = run_pipeworks("simulate --model gpt2-medium --layers 48 --seq-len 512 -K 2 -M 2");
  REQUIRE(deeper.exit_code == 0);
  CHECK_THAT(deeper.output, Catch::Contains("[0,25) embedding..block23") && Catch::Contains("[25,50) block24..lm_head"));
  const CliRun timed = run_pipeworks("simulate --model uniform --layers 4 --layer-forward 1ms --layer-backward 2ms -K 2 -M 2 "
                                     "--batch 2 --comm blocking");
  REQUIRE(timed.exit_code == 0);
  // Per stage: 2 micro-batches x 2 layers x (1 + 2) ms, then (2 + 2) ms with the forward doubled.
  CHECK_THAT(timed.output, Catch::Contains("layer0..layer1  12.0"));
  const CliRun slower = run_pipeworks("simulate --model uniform --layers 4 --layer-forward 2ms --layer-backward 2ms -K 2 "
                                      "-M 2 --batch 2 --comm blocking");
  CHECK_THAT(slower.output, Catch::Contains("layer0..layer1  16.0"));
  const CliRun wrong = run_pipeworks("plan --model uniform --model-width 512 --cluster dgx-h100 --batch 8 --devices 2");
  // A preset size flag the preset lacks, a malformed one or one beside a spec file: bad usage.
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.output, Catch::Contains("--model-width does not apply to model preset 'uniform'"));
  const CliRun bad = run_pipeworks("sweep --model uniform --layer-forward 3 --cluster dgx-h100 --batch 8 --pp 2 "
                                   "--microbatches 2");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--layer-forward: "));
  const auto [model, cluster] = write_specs();
  const CliRun spec = run_pipeworks("simulate --model-spec " + model + " --layers 4");
  CHECK(spec.exit_code == 2);
  CHECK_THAT(spec.output, Catch::Contains("resize a model preset; a spec file is taken as written"));
  fs::remove_all(kScratch);
}
