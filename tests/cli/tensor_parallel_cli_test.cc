// Tensor parallelism from the command line: simulate --tp / --sequence-parallel (the layout line,
// one rank's memory, the JSON layout), sweep --tp (the tp column), and the requests refused with
// their reason (run --tp's: tests/hw/run/run_cli_hostile_test.cc, with the LibTorch commands).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_pipeworks.h"

namespace {

using pipeworks::test::run_pipeworks;

const std::string kSimulate =
    "simulate --model gpt3-175b --cluster multinode --nodes 8 --pp 8 -M 16 --schedule 1f1b --batch 16 --recompute ";

// The largest "peak memory" figure of a simulate table, in GiB.
double peak_gib(const std::string& output) {
  double most = 0;
  for (std::size_t at = output.find(" GiB "); at != std::string::npos; at = output.find(" GiB ", at + 1)) {
    const std::size_t start = output.rfind(' ', at - 1) + 1;
    most = std::max(most, std::stod(output.substr(start, at - start)));
  }
  return most;
}

// The "step" line's time in seconds.
double step_s(const std::string& output) {
  const std::size_t at = output.find("\nstep ");
  REQUIRE(at != std::string::npos);
  std::istringstream in(output.substr(at + 6));
  double value = 0;
  std::string unit;
  in >> value >> unit;
  return unit == "s" ? value : unit == "ms" ? value / 1e3 : value / 1e6;
}

}  // namespace

TEST_CASE("simulate --tp lays each pipeline rank over a node's GPUs and divides its memory", "[cli][tp]") {
  const std::string json = std::string(PIPEWORKS_BINARY_DIR) + "/tensor_parallel_cli_test.json";
  const auto tp = run_pipeworks(kSimulate + "--tp 8 --json " + json);
  INFO(tp.output);
  REQUIRE(tp.exit_code == 0);
  CHECK_THAT(tp.output, Catch::Contains("\nlayout tp 8 x pp 8 x dp 1 (64 devices, 8 stages)\n"));
  CHECK_THAT(tp.output, Catch::Contains("memory       fits on every device"));
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  CHECK(report["layout"]["tp"] == 8);
  CHECK(report["layout"]["devices"] == 64);
  // Without tensor parallelism the same pipeline needs about 8 times the parameters a rank.
  const auto whole = run_pipeworks(kSimulate);
  CHECK_THAT(whole.output, Catch::Contains("DOES NOT FIT"));
  CHECK(peak_gib(whole.output) > 4 * peak_gib(tp.output));
  // Without re-materialization, sequence parallelism divides the rest of the stash too: less memory.
  const std::string keep = "simulate --model gpt3-175b --cluster multinode --nodes 8 --pp 8 -M 16 --schedule 1f1b --batch 16 --tp 8";
  const auto kept = run_pipeworks(keep);
  const auto sp = run_pipeworks(keep + " --sequence-parallel");
  REQUIRE(sp.exit_code == 0);
  CHECK(peak_gib(sp.output) < peak_gib(kept.output));
  // Collectives overlapped with their GEMMs: a shorter step.
  const auto overlapped = run_pipeworks(keep + " --tp-comm-overlap");
  REQUIRE(overlapped.exit_code == 0);
  CHECK(step_s(overlapped.output) < step_s(kept.output));
}

TEST_CASE("sweep --tp compares tensor-parallel counts and shows their column", "[cli][tp]") {
  const auto r = run_pipeworks(
      "sweep --model gpt2-medium --cluster dgx-h100 --pp 1,2 --tp 1,2 --batch 16 --microbatches 4 --schedule 1f1b "
      "--recompute off");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("4 configurations simulated"));
  CHECK_THAT(r.output, Catch::Contains("  MFU  tp\n"));
  const auto plain = run_pipeworks(
      "sweep --model gpt2-medium --cluster dgx-h100 --pp 1,2 --batch 16 --microbatches 4 --schedule 1f1b --recompute off");
  CHECK_THAT(plain.output, !Catch::Contains("  MFU  tp\n"));
}

TEST_CASE("tensor parallelism refused: a model that does not split, SP alone, a group across nodes", "[cli][tp]") {
  const std::pair<std::string, std::string> refused[] = {
      {"simulate --model uniform --tp 2", "layer 0 ('layer0') does not say how it splits over tensor-parallel ranks"},
      {"simulate --model gpt2-small --sequence-parallel", "--sequence-parallel needs --tp above 1"},
      {"simulate --model gpt2-small --tp-comm-overlap", "--tp-comm-overlap needs --tp above 1"},
      {"simulate --model uniform --attention flash", "--attention does not apply to model preset 'uniform'"},
      {"simulate --model gpt2-small --attention fused", "--attention: fused not in {stored,selective-recompute,flash}"},
      {"simulate --model gpt2-small --tp 3 -K 2", "a tensor-parallel group of 3 does not fit evenly in nodes of 8"},
      {"sweep --model uniform --cluster dgx-h100 --pp 1 --tp 1,2 --batch 4 --microbatches 4", "does not say how it splits"},
      {"sweep --model gpt2-small --cluster dgx-h100 --pp 1 --tp 3 --batch 4 --microbatches 4",
       "tensor parallelism 3 on cluster 'dgx-h100': layout: a tensor-parallel group of 3 does not fit evenly in nodes of 8"},
      {"plan --model gpt2-small --cluster dgx-h100 --devices 8 --batch 8 --sequence-parallel --tp 1",
       "sequence parallelism and overlapped tensor-parallel collectives need a tensor-parallel count above 1"}};
  for (const auto& [arguments, message] : refused) {
    const auto r = run_pipeworks(arguments);
    INFO(arguments << "\n" << r.output);
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.output, Catch::Contains(message));
  }
}
