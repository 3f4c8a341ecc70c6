// Data parallelism from the command line: simulate --dp/--zero (the layout line, the step with its
// collectives, throughput over replicas, the JSON report's layout), the layouts a cluster cannot
// hold and flags that contradict each other, and plan using every device.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_pipeworks.h"

namespace {

using pipeworks::test::run_pipeworks;

const std::string kSimulate = "simulate --model gpt3-1.3b --cluster dgx-h100 -K 4 -M 8 --schedule 1f1b --batch 32 ";

// `arguments` fail with `exit_code` and say `message`.
void check_refused(const std::string& arguments, int exit_code, const std::string& message) {
  const auto r = run_pipeworks(arguments);
  INFO(arguments << "\n" << r.output);
  CHECK(r.exit_code == exit_code);
  CHECK_THAT(r.output, Catch::Contains(message));
}

}  // namespace

TEST_CASE("simulate --dp times the replica's collectives and reports over all replicas", "[cli][dp]") {
  const std::string json = std::string(PIPEWORKS_BINARY_DIR) + "/data_parallel_cli_test.json";
  const auto r = run_pipeworks(kSimulate + "--dp 2 --zero 1 --json " + json);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nlayout pp 4 x dp 2 (8 devices, 4 stages; ZeRO-1)\n"));
  CHECK_THAT(r.output, Catch::Contains("\ncollectives  "));
  CHECK_THAT(r.output, Catch::Contains("the optimizer step and ZeRO's parameter all-gather after each device's last"));
  // --batch is the whole mini-batch: 32 samples, 16 a replica.
  CHECK_THAT(r.output, Catch::Contains(" samples/s over 2 replicas (32 samples per iteration, 16 samples each)"));
  CHECK_THAT(r.output, !Catch::Contains("cost nothing"));
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  CHECK(report["layout"]["dp"] == 2);
  CHECK(report["layout"]["pp"] == 4);
  CHECK(report["layout"]["zero"] == "1");
  CHECK(report["layout"]["rank_order"] == "tp-dp-pp");
  CHECK(report["global_batch_size"] == 32);
  CHECK(report["batch_size"] == 16);
  CHECK(report["num_stage_level_actions"] == 4);  // one REDUCE_GRAD a stage
  CHECK(report["step_ns"].get<std::int64_t>() > report["makespan_ns"].get<std::int64_t>());
  for (const auto& device : report["devices"]) CHECK(device["collective_ns"].get<std::int64_t>() > 0);
  // ZeRO-1 shards the optimizer state: less memory on every device than without sharding.
  const std::string plain_json = std::string(PIPEWORKS_BINARY_DIR) + "/data_parallel_cli_test_zero0.json";
  REQUIRE(run_pipeworks(kSimulate + "--dp 2 --json " + plain_json).exit_code == 0);
  std::ifstream plain_in(plain_json);
  const auto plain = nlohmann::json::parse(plain_in);
  for (std::size_t d = 0; d < 4; ++d) {
    CHECK(report["devices"][d]["optimizer_bytes"].get<std::int64_t>() * 2 ==
          plain["devices"][d]["optimizer_bytes"].get<std::int64_t>());
  }
}

TEST_CASE("simulate refuses a layout the cluster cannot hold and flags that contradict each other", "[cli][dp]") {
  check_refused(kSimulate + "--dp 4", 1,
                "pp 4 x dp 4 (16 devices, 4 stages) on cluster 'dgx-h100': layout: tp 1 x pp 4 x dp 4 needs 16 "
                "devices, the cluster has 8");
  check_refused(kSimulate + "--zero 1", 2, "--zero 1 shards over data-parallel replicas, but --dp is 1");
  check_refused(kSimulate + "--dp 2 --grad-bucket 0B", 2, "--grad-bucket must be at least 1 byte");
  check_refused(kSimulate + "--dp 2 --rank-order pp-dp-tp", 2, "--rank-order");
}

TEST_CASE("simulate --pp counts pipeline ranks: K follows from the schedule", "[cli][dp]") {
  const std::string base = "simulate --model gpt3-1.3b --cluster dgx-h100 -M 8 --batch 32 ";
  const auto v = run_pipeworks(base + "--pp 2 --schedule zb-v");
  INFO(v.output);
  REQUIRE(v.exit_code == 0);
  CHECK_THAT(v.output, Catch::Contains("(2 devices, 4 stages"));
  const auto interleaved = run_pipeworks(base + "--pp 2 --schedule interleaved-1f1b --virtual-stages 2 --dp 2");
  INFO(interleaved.output);
  REQUIRE(interleaved.exit_code == 0);
  CHECK_THAT(interleaved.output, Catch::Contains("\nlayout pp 2 x dp 2 (4 devices, 4 stages: 2 a pipeline rank)\n"));
  check_refused(base + "--pp 2 -K 3 --schedule 1f1b", 2, "--pp 2 means 2 stages for 1f1b, but --stages is 3");
  check_refused(base + "--pp 2 --placement 0,1", 2, "--pp and --placement: give one");
  check_refused(base + "--pp 2 --dp 3", 2, "--batch 32 and 8 micro-batches x 3 replicas");
}

TEST_CASE("without --dp the simulate output is one pipeline's", "[cli][dp]") {
  const auto r = run_pipeworks(kSimulate);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nlayout pp 4 x dp 1 (4 devices, 4 stages)\n"));
  CHECK_THAT(r.output, !Catch::Contains("collectives") && !Catch::Contains("replicas"));
}

TEST_CASE("plan uses every device: plain data parallelism beats a deep pipeline for a small model", "[cli][dp][plan]") {
  const auto r = run_pipeworks("plan --model gpt3-1.3b --cluster dgx-h100 --devices 8 --batch 256");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nbest: pp 1 x dp 8 (8 devices, 1 stage"));
  CHECK_THAT(r.output, Catch::Contains(", MFU "));
  CHECK_THAT(r.output, Catch::Contains("\n  tp 1 x pp 8 x dp 1 ") && Catch::Contains("slower by "));
  // Tensor parallelism over 8 GPUs pays two all-reduces a block each way for GEMMs this small.
  CHECK_THAT(r.output, Catch::Contains("\n  tp 8 x pp 1 x dp 1    tp=8 K=1 ") && Catch::Contains("slower by "));
  // Every row uses the 8 devices.
  CHECK_THAT(r.output, !Catch::Contains("uses 4 of the best's 8 devices"));
}

TEST_CASE("simulate --partition balanced counts each replica's sharded training state", "[cli][dp]") {
  // GPT-3 XL on 12 GiB devices, pp 2 x dp 4, recompute: unsharded Adam state needs 16.3 GiB on a
  // stage; ZeRO-1 over 4 replicas leaves about 10 GiB, which the balanced partition finds.
  const std::string spec = std::string(PIPEWORKS_BINARY_DIR) + "/data_parallel_cli_small.json";
  std::ofstream(spec) << R"({"name": "small", "devices": 8, "device": {"memory_bytes": "12GiB",
    "flops_per_s": "100TFLOP/s"}, "devices_per_node": 8,
    "intra_node": {"bandwidth_bytes_per_s": "100GB/s", "latency": "3us"}})";
  const std::string args = "simulate --model gpt3-1.3b --cluster-spec " + spec +
                           " --pp 2 --dp 4 -M 8 --batch 32 --recompute --partition balanced";
  const auto sharded = run_pipeworks(args + " --zero 1");
  INFO(sharded.output);
  CHECK(sharded.exit_code == 0);
  CHECK_THAT(sharded.output, Catch::Contains("memory       fits on every device"));
  check_refused(args + " --zero 0", 1, "no partition into 2 stages fits in memory");
  std::remove(spec.c_str());
}
