// `pipeworks run --predict` end to end on a tiny model: the JSON report holds both timelines with
// the same actions and the stage replay's figures; bad options are refused before anything runs.
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "hw/exec/cpu_affinity.h"

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

const std::string kTiny = "run --predict --model mlp --depth 4 --width 16 -K 2 -M 16 --batch 16 --schedule 1f1b "
                          "--steps 2 --warmup 1 --intra-op-threads 1 --profile-repetitions 2 --replay-rounds 2";

TEST_CASE("run --predict: a JSON report with both timelines and the stage replay") {
  REQUIRE(fs::exists(PIPEWORKS_EXE));  // build the `pipeworks` target with the hw tests
  const fs::path dir = test::temp_path("run_predict_cli_test");
  fs::create_directories(dir);
  const std::string json = (dir / "report.json").string();
  const std::string svg = (dir / "chart.svg").string();
  const std::string trace = (dir / "trace.json").string();
  const test::CliRun run = test::run_pipeworks(kTiny + " --json " + json + " --svg " + svg + " --trace " + trace);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // The picture names the configuration and each stage's layers, and colours the measured spans
  // by their error; the trace's measured spans hold their predictions.
  const std::string chart = test::read_text_file(svg);
  CHECK(chart.find(">mlp on cpu: 1f1b, K=2, M=16, batch 16, recompute off (predicted vs measured)</text>") !=
        std::string::npos);
  CHECK(chart.find(">d0 s0 [0,") != std::string::npos);
  CHECK(chart.find(">measured, predicted low -50%</text>") != std::string::npos);
  CHECK(chart.find(": measured ") != std::string::npos);
  const nlohmann::json events = nlohmann::json::parse(test::read_text_file(trace))["traceEvents"];
  std::size_t with_prediction = 0;
  for (const nlohmann::json& e : events) with_prediction += e.contains("args") && e["args"].contains("predicted_us");
  CHECK(with_prediction > 0);
  CHECK(run.output.find("stage replay in schedule order (2 rounds") != std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(test::read_text_file(json));
  CHECK(report["schema"] == "pipeworks.predict_report/1");
  CHECK(report["errors"]["same_actions"] == true);
  CHECK(report["predicted"].size() == report["measured"].size());
  const nlohmann::json& replay = report["cost_model"]["stage_replay"];
  REQUIRE(replay.is_object());
  CHECK(replay["rounds"] == 2);
  REQUIRE(replay["stages"].size() == 2);
  CHECK(replay["stages"][0]["forward_ns"]["median"].get<long long>() > 0);
  CHECK(replay["stages"][1]["backward_ns"]["median"].get<long long>() > 0);
  REQUIRE(replay["device_contention"].size() == 2);
  CHECK(replay["device_contention"][0].get<double>() >= 1.0);
  CHECK(report["cost_model"]["relative_speed"] == 1.0);
  CHECK(report["cost_model"]["idle_slowdown"].get<double>() >= 1.0);  // measured by the run's profile
  CHECK(report["cost_model"]["idle_slowdown_after_ns"].is_number_integer());
  CHECK(report["worker_cpus"].is_array());  // empty (auto on 2 cores, K = 2) or a core list per device
  CHECK(run.output.find("workers: ") != std::string::npos);

  const test::CliRun layers_only = test::run_pipeworks(kTiny + " --no-stage-replay --json " + json);
  INFO(layers_only.output);
  REQUIRE(layers_only.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_text_file(json))["cost_model"]["stage_replay"].is_null());
  fs::remove_all(dir);
}

TEST_CASE("run --predict --model-spec: a spec of another model is refused before any step runs") {
  const fs::path dir = test::temp_path("run_predict_spec_cli_test");
  fs::create_directories(dir);
  const std::string spec = (dir / "mlp_4x16.json").string();
  const test::CliRun profiled = test::run_pipeworks("profile --model mlp --depth 4 --width 16 --microbatch-sizes 8 "
                                                    "--warmup 0 --repetitions 1 --no-machine --intra-op-threads 1 "
                                                    "-o " + spec);
  INFO(profiled.output);
  REQUIRE(profiled.exit_code == 0);
  const std::string predict = "run --predict --model mlp -K 2 -M 2 --batch 16 --steps 2 --intra-op-threads 1 "
                              "--no-stage-replay --model-spec " + spec;
  const test::CliRun deeper = test::run_pipeworks(predict + " --depth 5 --width 16");
  CHECK(deeper.exit_code != 0);
  CHECK_THAT(deeper.output, Catch::Contains("--model-spec describes 'mlp' with 5 layers; the model to run (mlp) has 6"));
  const test::CliRun wider = test::run_pipeworks(predict + " --depth 4 --width 32");
  CHECK(wider.exit_code != 0);
  CHECK_THAT(wider.output, Catch::Contains("--model-spec describes 'mlp' with 1360 parameters; the model to run (mlp) "
                                           "has 5280"));
  for (const test::CliRun* refused : {&deeper, &wider}) CHECK_THAT(refused->output, !Catch::Contains("step  "));
  const test::CliRun same = test::run_pipeworks(predict + " --depth 4 --width 16");
  INFO(same.output);
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.output, !Catch::Contains("warning: "));
  // Profiled at 8 samples a micro-batch, run at 16: the prediction says it extrapolates.
  const std::string json = (dir / "report.json").string();
  const test::CliRun beyond = test::run_pipeworks("run --predict --model mlp -K 2 -M 2 --batch 32 --steps 2 "
                                                  "--intra-op-threads 1 --no-stage-replay --depth 4 --width 16 "
                                                  "--model-spec " + spec + " --json " + json);
  INFO(beyond.output);
  CHECK(beyond.exit_code == 0);
  const std::string line = "micro-batch size 16 is outside the profiled sizes 8..8 (2x the largest)";
  CHECK_THAT(beyond.output, Catch::Contains("warning: " + line));
  const nlohmann::json report = nlohmann::json::parse(test::read_text_file(json));
  REQUIRE(report["warnings"].size() == 1);
  CHECK_THAT(report["warnings"][0].get<std::string>(), Catch::StartsWith(line));
  fs::remove_all(dir);
}

TEST_CASE("run --predict: bad replay rounds are refused with a message") {
  const test::CliRun run = test::run_pipeworks(kTiny + " --replay-rounds 0");
  CHECK(run.exit_code != 0);
  CHECK(run.output.find("--replay-rounds") != std::string::npos);
}

TEST_CASE("run --pin-workers: the plan is printed and reported, a bad value or an impossible plan is refused") {
  const std::string one = "run --model mlp --depth 4 --width 16 -K 1 -M 2 --batch 4 --steps 1";
  const fs::path dir = test::temp_path("pin_workers_cli_test");
  fs::create_directories(dir);
  const std::string json = (dir / "run.json").string();
  const test::CliRun pinned = test::run_pipeworks(one + " --intra-op-threads 1 --pin-workers on --json " + json);
  INFO(pinned.output);
  REQUIRE(pinned.exit_code == 0);
  CHECK(pinned.output.find("workers device 0 on core ") != std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(test::read_text_file(json));
  REQUIRE(report["worker_cpus"].size() == 1);
  CHECK(report["worker_cpus"][0].size() == 1);
  const test::CliRun off = test::run_pipeworks(one + " --intra-op-threads 1 --pin-workers off");
  CHECK(off.exit_code == 0);
  CHECK(off.output.find("workers not pinned") != std::string::npos);
  const test::CliRun bad = test::run_pipeworks(one + " --pin-workers maybe");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--pin-workers: worker pinning 'maybe' is not one of off, auto, on") != std::string::npos);
  // One thread more than the usable cores: within what a run accepts (run_resources.h), beyond
  // what pinning can place.
  const std::string threads = std::to_string(hw::usable_cpus().size() + 1);
  const test::CliRun too_many = test::run_pipeworks(one + " --pin-workers on --intra-op-threads " + threads);
  INFO(too_many.output);
  CHECK(too_many.exit_code != 0);
  CHECK(too_many.output.find("cannot pin 1 workers x " + threads + " threads") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipeworks::hw
