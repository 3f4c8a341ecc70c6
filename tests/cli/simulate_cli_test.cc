// `pipeworks simulate` run as a process: exit codes, the summary, and the JSON report's fields.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_pipeworks.h"

namespace {

pipeworks::test::CliRun run_simulate(const std::string& args) {
  return pipeworks::test::run_pipeworks("simulate " + args);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("simulate with no options runs the default example", "[simulate]") {
  const auto r = run_simulate("");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Matchers::Contains("makespan"));
  CHECK_THAT(r.output, Catch::Matchers::Contains("GPipe closed form (K-1)/(M+K-1) = 3/11"));
}

TEST_CASE("simulate --json writes the documented fields", "[simulate]") {
  const std::string path = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_test.json";
  const auto r = run_simulate("--model uniform --cluster cpu2 --stages 2 --microbatches 4 --batch 8 "
                              "--partition uniform --schedule 1f1b --json " + path);
  REQUIRE(r.exit_code == 0);
  const auto j = read_json(path);
  CHECK(j["schema"] == "pipeworks.simulate_report/1");
  CHECK(j["num_stages"] == 2);
  CHECK(j["num_microbatches"] == 4);
  CHECK(j["microbatch_size"] == 2);
  CHECK(j["schedule"] == "1f1b");
  CHECK(j["makespan_ns"].get<std::int64_t>() > 0);
  CHECK(j["bubble_fraction"].get<double>() >= 0.2);  // the closed form is a lower bound here
  CHECK(j["gpipe_closed_form_bubble_fraction"].get<double>() == Approx(0.2));
  CHECK(j["throughput_samples_per_s"].get<double>() ==
        Approx(8.0 * 1e9 / static_cast<double>(j["makespan_ns"].get<std::int64_t>())));
  REQUIRE(j["stages"].size() == 2);
  for (const auto& stage : j["stages"]) {
    CHECK(stage["peak_bytes"].get<std::int64_t>() ==
          stage["param_bytes"].get<std::int64_t>() + stage["grad_bytes"].get<std::int64_t>() +
              stage["optimizer_bytes"].get<std::int64_t>() + stage["peak_activation_bytes"].get<std::int64_t>());
    CHECK(stage["fits"].is_boolean());
    CHECK(stage["busy_ns"].get<std::int64_t>() + stage["idle_ns"].get<std::int64_t>() ==
          j["makespan_ns"].get<std::int64_t>());
  }
  CHECK(j["stages"][0]["layer_begin"] == 0);
  CHECK(j["stages"][1]["layer_end"] == 8);
  CHECK(j["devices"].size() == 2);
}

TEST_CASE("simulate warns when it reads a spec beyond its profiled sizes or interleaves nothing", "[simulate]") {
  // A profile measured at micro-batch sizes 1 and 2; the run asks for 8 samples a micro-batch.
  const std::string spec = std::string(PIPEWORKS_TEST_DATA_DIR) + "/../fuzz/corpus/model_spec/valid_profiled_tables.json";
  const std::string path = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_warnings.json";
  const auto beyond = run_simulate("--model-spec " + spec + " --cluster cpu2 -K 2 -M 2 --batch 16 --json " + path);
  REQUIRE(beyond.exit_code == 0);
  const std::string line = "micro-batch size 8 is outside the profiled sizes 1..2 (4x the largest)";
  CHECK_THAT(beyond.output, Catch::Matchers::Contains("warning      " + line));
  const auto j = read_json(path);
  REQUIRE(j["warnings"].size() == 1);
  CHECK_THAT(j["warnings"][0].get<std::string>(), Catch::Matchers::StartsWith(line));
  const auto inside = run_simulate("--model-spec " + spec + " --cluster cpu2 -K 2 -M 2 --batch 4 --json " + path);
  REQUIRE(inside.exit_code == 0);
  CHECK_THAT(inside.output, !Catch::Matchers::Contains("warning"));
  CHECK(read_json(path)["warnings"].empty());
  std::remove(path.c_str());

  const auto alone = run_simulate("--model gpt2-medium -K 4 -M 8 --schedule interleaved-1f1b");
  REQUIRE(alone.exit_code == 0);
  CHECK_THAT(alone.output, Catch::Matchers::Contains("warning      interleaved-1f1b with one virtual stage per device "
                                                     "interleaves nothing"));
  const auto interleaved = run_simulate("--model gpt2-medium -K 4 -M 8 --schedule interleaved-1f1b -v 2");
  REQUIRE(interleaved.exit_code == 0);
  CHECK_THAT(interleaved.output, !Catch::Matchers::Contains("warning"));
}

TEST_CASE("simulate --schedule-file states GPipe's closed form as a reference, not a guess from the layout",
          "[simulate]") {
  // A ZB-V file has two stages a device, as an interleaved schedule does; its closed form is not
  // the interleaved one.
  const std::string file = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_zbv.json";
  REQUIRE(pipeworks::test::run_pipeworks("schedule --schedule zb-v -K 4 -M 4 -o " + file).exit_code == 0);
  const auto r = run_simulate("--schedule-file " + file + " --model gpt2-medium");
  std::remove(file.c_str());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Matchers::Contains("(D-1)/(vM+D-1)"));
  CHECK_THAT(r.output, Catch::Matchers::Contains("GPipe closed form (K-1)/(M+K-1) = 3/7 (for reference: the file's "
                                                 "kind is unknown)"));
}

TEST_CASE("simulate writes a trace, an SVG and a grid", "[simulate]") {
  const std::string dir = PIPEWORKS_BINARY_DIR;
  const auto r = run_simulate("--model uniform --cluster cpu2 -k 2 -m 3 --recompute --grid --trace " + dir +
                              "/simulate_cli_test.trace.json --svg " + dir + "/simulate_cli_test.svg");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Matchers::Contains("d1:"));
  CHECK(std::ifstream(dir + "/simulate_cli_test.trace.json").good());
  CHECK(std::ifstream(dir + "/simulate_cli_test.svg").good());
}

TEST_CASE("simulate exit codes: 2 for bad usage, 1 for invalid input", "[simulate]") {
  CHECK(run_simulate("--schedule zigzag").exit_code == 2);
  CHECK(run_simulate("--stages 0").exit_code == 2);
  CHECK(run_simulate("--batch 7 --microbatches 8").exit_code == 2);
  CHECK(run_simulate("--partition 1,x").exit_code == 2);
  CHECK(run_simulate("--partition 7,6,6").exit_code == 2);
  CHECK(run_simulate("--partition 7,6,6,100").exit_code == 1);
  CHECK(run_simulate("--model-spec /nonexistent/model.json").exit_code == 1);
  CHECK(run_simulate("--stages 9").exit_code == 1);  // 8 devices in dgx-h100
  CHECK(run_simulate("--json /nonexistent/dir/report.json").exit_code == 1);
}

TEST_CASE("simulate takes K and M as -k/-m or -K/-M, like run and schedule", "[simulate]") {
  const auto lower = run_simulate("--model uniform --cluster cpu2 -k 2 -m 4 --schedule 1f1b");
  const auto upper = run_simulate("--model uniform --cluster cpu2 -K 2 -M 4 --schedule 1f1b");
  REQUIRE(lower.exit_code == 0);
  REQUIRE(upper.exit_code == 0);
  CHECK(lower.output == upper.output);
  CHECK_THAT(upper.output, Catch::Matchers::Contains("K=2"));
}

TEST_CASE("simulate --schedule-file: a file simulates as the schedule it holds", "[simulate]") {
  const std::string dir = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_test_";
  const std::string base = "--model gpt2-small --cluster dgx-h100 ";
  for (const std::string kind : {"gpipe", "1f1b"}) {
    // Compute-only CSV (our passes lower it) and lowered JSON (taken as written) give the
    // generated schedule's prediction exactly.
    REQUIRE(pipeworks::test::run_pipeworks("schedule --schedule " + kind + " -K 4 -M 8 -o " + dir + kind + ".csv")
                .exit_code == 0);
    REQUIRE(pipeworks::test::run_pipeworks("schedule --schedule " + kind + " -K 4 -M 8 --comm -o " + dir + kind + ".json")
                .exit_code == 0);
    REQUIRE(run_simulate(base + "--schedule " + kind + " -K 4 -M 8 --json " + dir + "generated.json").exit_code == 0);
    const auto generated = read_json(dir + "generated.json");
    for (const std::string& file : {dir + kind + ".csv", dir + kind + ".json"}) {
      const auto r = run_simulate(base + "--schedule-file " + file + " -K 4 --json " + dir + "from_file.json");
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.output, Catch::Contains(file + ", K=4 stages, M=8 micro-batches"));
      const auto from_file = read_json(dir + "from_file.json");
      CHECK(from_file["makespan_ns"] == generated["makespan_ns"]);
      CHECK(from_file["stages"] == generated["stages"]);
    }
  }
}

TEST_CASE("simulate --schedule-file and --placement: contradictions and bad files", "[simulate]") {
  const std::string csv = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_test_contradiction.csv";
  REQUIRE(pipeworks::test::run_pipeworks("schedule --schedule gpipe -K 2 -M 4 -o " + csv).exit_code == 0);
  const std::vector<std::pair<std::string, std::string>> usage = {
      {"--schedule-file " + csv + " -K 3", "--stages 3 but " + csv + " has 2 stages"},
      {"--schedule-file " + csv + " -M 2", "--microbatches 2 but " + csv + " has 4 micro-batches"},
      {"--schedule-file " + csv + " --schedule 1f1b", "--schedule and --schedule-file: give one"},
      {"--schedule-file " + csv + " --placement 0,0", "--placement and --schedule-file"},
      {"--schedule-file " + csv + " --partition 1,1,1", "--partition names 3 stages but the schedule has 2"},
      {"-K 2 --placement 0,2", "stage 1 is placed on device 2, outside 0..1"},
      {"-K 3 --placement 0,2,2", "placement leaves device 1 without a stage (devices must be 0..2)"}};
  for (const auto& [arguments, expected] : usage) {
    const auto r = run_simulate(arguments);
    INFO(arguments << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(expected));
  }
  const std::string deadlock = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid/deadlock.csv";
  const auto bad = run_simulate("--schedule-file " + deadlock);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains(deadlock + ":1:5: error: deadlock") &&
                             Catch::Contains("`pipeworks validate " + deadlock + "` lists them"));
  const auto too_many = run_simulate("--cluster cpu2 -K 4 --placement 0,1,2,3 --partition uniform --model uniform");
  CHECK(too_many.exit_code == 1);
  CHECK_THAT(too_many.output, Catch::Contains("the schedule uses 4 devices but cluster 'cpu2' has 2"));
  // Two stages per device: the placement reaches the simulator.
  const auto shared = run_simulate("--cluster cpu2 -K 4 --placement 0,1,1,0 --model uniform --json " + csv + ".json");
  INFO(shared.output);
  REQUIRE(shared.exit_code == 0);
  const auto j = read_json(csv + ".json");
  CHECK(j["stages"][0]["device"] == 0);
  CHECK(j["stages"][1]["device"] == 1);
  CHECK(j["stages"][2]["device"] == 1);
  CHECK(j["stages"][3]["device"] == 0);
}

TEST_CASE("presets lists every model and cluster preset with its description, --nodes resizes the DGX ones",
          "[simulate]") {
  const auto r = pipeworks::test::run_pipeworks("presets");
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"uniform", "gpt", "gpt2-small", "gpt2-medium", "gpt3-1.3b", "gpt3-175b", "amoeba", "cpu2",
                           "dgx-a100", "dgx-h100", "dgx-h200", "multinode"}) {
    CHECK_THAT(r.output, Catch::Contains(std::string("\n  ") + name + " "));
  }
  CHECK_THAT(r.output, Catch::Contains("GPT-2 medium, 350M"));
  for (const char* gpu : {"a100-sxm-80gb", "h100-sxm", "h200-sxm"}) {
    CHECK_THAT(r.output, Catch::Contains(std::string("\n  ") + gpu + " "));
  }
  // A GPT on a DGX preset is timed kernel by kernel on its GPU; --gpu picks another.
  const auto on_h200 = run_simulate("--model gpt3-1.3b --cluster dgx-a100 --gpu h200-sxm -K 4 -M 8 --json /dev/null");
  CHECK(on_h200.exit_code == 0);
  const auto on_a100 = run_simulate("--model gpt3-1.3b --cluster dgx-a100 -K 4 -M 8");
  CHECK(on_a100.output != on_h200.output);
  const auto both = run_simulate("--model gpt3-1.3b --gpu a100-sxm-80gb --flops 1e14 -K 4 -M 8");
  CHECK(both.exit_code != 0);
  CHECK_THAT(both.output, Catch::Contains("--gpu excludes --flops"));
  const auto big = run_simulate("--cluster multinode --nodes 8 -K 64 -M 64 --model gpt3-175b --partition uniform");
  INFO(big.output);
  CHECK(big.exit_code == 0);
  CHECK_THAT(big.output, Catch::Contains("K=64 stages"));
  const auto two = run_simulate("--cluster dgx-a100 --nodes 2 -K 16 -M 16");
  CHECK(two.exit_code == 0);
  CHECK_THAT(two.output, Catch::StartsWith("gpt2-medium on dgx-a100: 1f1b, K=16 stages"));
  CHECK(run_simulate("--cluster cpu2 --nodes 2").exit_code == 1);  // a CPU preset has no nodes
}

TEST_CASE("kernels prints a GPU cost model's GEMM and streaming predictions, bad shapes are usage errors",
          "[simulate]") {
  const auto r = pipeworks::test::run_pipeworks("kernels --gpu h200-sxm --gemm 8192x8192x8192 --stream 1GiB");
  REQUIRE(r.exit_code == 0);
  // 2048 x 1024 tiles of 128 x 256 fill 15.5 waves of 132 SMs: 80% x 2048 / (16 x 132) of peak.
  CHECK_THAT(r.output, Catch::Contains("gemm 8192x8192x8192"));
  CHECK_THAT(r.output, Catch::Contains("767.5 TFLOP/s   77.6% of peak"));
  CHECK_THAT(r.output, Catch::Contains("3360.0 GB/s"));  // 70% of 4.8 TB/s
  for (const char* bad : {"--gemm 8192x8192", "--gemm 0x1x1", "--gemm 1x1x1x1x1", "--gemm 8kx1x1", "--stream 0B"}) {
    const auto refused = pipeworks::test::run_pipeworks(std::string("kernels --gpu h200-sxm ") + bad);
    INFO(bad << ": " << refused.output);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.output, Catch::Contains("expected"));
  }
  CHECK(pipeworks::test::run_pipeworks("kernels --gpu h300 --gemm 1x1x1").exit_code == 2);
}

TEST_CASE("simulate --schedule interleaved-1f1b: v stages per device shrink the bubble to the closed form",
          "[simulate]") {
  const std::string json = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_test_interleaved.json";
  const auto r = run_simulate("--model uniform --cluster dgx-h100 --partition uniform --schedule interleaved-1f1b "
                              "-K 8 -M 8 --virtual-stages 2 --json " + json);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("closed form (D-1)/(vM+D-1) with D = 4 devices, v = 2 = 3/19"));
  const auto j = read_json(json);
  CHECK(j["devices"].size() == 4);
  CHECK(j["bubble_fraction"].get<double>() == Approx(3.0 / 19).epsilon(0.02));  // links add a little
  for (const auto& stage : j["stages"]) CHECK(stage["device"] == stage["stage"].get<int>() % 4);
  // The same model on 4 devices with 1F1B: the bubble v = 2 times larger.
  const auto plain = run_simulate("--model uniform --cluster dgx-h100 --partition uniform --schedule 1f1b -K 4 -M 8 "
                                  "--json " + json);
  REQUIRE(plain.exit_code == 0);
  CHECK(read_json(json)["bubble_fraction"].get<double>() == Approx(3.0 / 11).epsilon(0.02));
  const auto odd = run_simulate("--schedule interleaved-1f1b -K 8 -M 6 --virtual-stages 2");
  CHECK(odd.exit_code == 2);
  CHECK_THAT(odd.output, Catch::Contains("6 micro-batches is not a multiple of the 4 devices"));
}

TEST_CASE("simulate the zero-bubble schedules: ZB-H1 under 1F1B's step time, ZB-V in a V on K/2 devices",
          "[simulate]") {
  const std::string json = std::string(PIPEWORKS_BINARY_DIR) + "/simulate_cli_test_zero_bubble.json";
  const std::string common = "--model uniform --cluster dgx-h100 --partition uniform -K 4 -M 8 --json " + json;
  const auto step_time = [&](const std::string& schedule) {
    const auto r = run_simulate(common + " --schedule " + schedule);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return read_json(json)["makespan_ns"].get<double>();
  };
  const double one_f = step_time("1f1b");
  CHECK(step_time("zb-h1") < one_f);
  CHECK(step_time("zb-h2") <= step_time("zb-h1"));
  for (const std::string schedule : {"zb-v", "dualpipe-v"}) {
    INFO(schedule);
    step_time(schedule);
    const auto j = read_json(json);
    CHECK(j["devices"].size() == 2);
    for (const auto& stage : j["stages"]) {
      const int s = stage["stage"].get<int>();
      CHECK(stage["device"] == std::min(s, 3 - s));
    }
  }
  const auto odd = run_simulate("--schedule zb-v -K 3 -M 6");
  CHECK(odd.exit_code == 2);
  CHECK_THAT(odd.output, Catch::Contains("zb-v places two stages on each device; 3 stages is odd"));
}

TEST_CASE("schedule --schedule dualpipe-v prints its V, sweep searches every kind", "[simulate]") {
  const auto grid = pipeworks::test::run_pipeworks("schedule --schedule dualpipe-v -K 4 -M 4");
  REQUIRE(grid.exit_code == 0);
  CHECK_THAT(grid.output, Catch::Contains("d0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1"));
  const auto sweep = pipeworks::test::run_pipeworks(
      "sweep --model uniform --cluster dgx-h100 --batch 32 --pp 4 --microbatches 8 --schedule 1f1b,zb-h1,zb-h2");
  INFO(sweep.output);
  REQUIRE(sweep.exit_code == 0);
  CHECK_THAT(sweep.output, Catch::Contains("zb-h2"));
  // Depth 2: zb-v's 4 stages in a V, interleaved-1f1b with v = 2 and 4 stages on 2 devices each.
  const auto virtual_kinds = pipeworks::test::run_pipeworks(
      "sweep --model uniform --cluster dgx-h100 --batch 32 --pp 2 --microbatches 8 --schedule zb-v,interleaved-1f1b "
      "-v 2,4 --top 20");
  INFO(virtual_kinds.output);
  REQUIRE(virtual_kinds.exit_code == 0);
  CHECK_THAT(virtual_kinds.output, Catch::Contains(" zb-v ") && Catch::Contains("interleaved-1f1b v=2") &&
                                       Catch::Contains("interleaved-1f1b v=4"));
  CHECK_THAT(virtual_kinds.output, Catch::Contains("0 skipped"));  // uniform has 8 layers: K = 8 at v = 4 fits
  const auto refused = pipeworks::test::run_pipeworks(
      "sweep --model uniform --cluster dgx-h100 --batch 32 --pp 4 --microbatches 8 --schedule zigzag");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("'zigzag' is not one of gpipe, 1f1b, interleaved-1f1b"));
}
