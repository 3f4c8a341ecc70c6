// `run --distributed --predict` end to end (hw/dist/distributed_prediction.h): the ranks measure
// the hand-off over their group and each stage's collectives and optimizer step, rank 0 profiles
// and predicts one replica, and the report holds both steps with what they were made from. Its
// accuracy is a benchmark's (bench/README.md), not a test's.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hw/dist/launch_support.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

nlohmann::json predicted(int ranks, const std::vector<std::string>& layout, const std::string& name) {
  const fs::path dir = testing::fresh_dir(name);
  std::vector<std::string> args = {"--model", "mlp", "--depth", "4", "--width", "16", "-M", "4", "--steps", "2",
                                   "--warmup", "1", "--profile-repetitions", "2", "--timeout", "60", "--predict",
                                   "--json", (dir / "prediction.json").string()};
  args.insert(args.end(), layout.begin(), layout.end());
  const testing::Launched launched = testing::launch_run(ranks, args);
  INFO(launched.out << launched.err);
  REQUIRE(launched.result.exit_code == 0);
  // The headline gives the measured steps' range beside their median.
  const std::regex headline(
      R"(\[rank 0\] step: predicted [0-9.]+ ms, measured ([0-9.]+) ms \(median of 2 steps, ([0-9.]+) to ([0-9.]+) ms\))");
  std::smatch parts;
  REQUIRE(std::regex_search(launched.out, parts, headline));
  CHECK(std::stod(parts[2]) <= std::stod(parts[1]));
  CHECK(std::stod(parts[1]) <= std::stod(parts[3]));
  CHECK_THAT(launched.out, Catch::Contains("[rank 0] measured by the ranks before the first step"));
  CHECK_THAT(launched.out, !Catch::Contains("[rank 1] step: predicted"));
  std::ifstream in(dir / "prediction.json");
  const auto report = nlohmann::json::parse(in);
  fs::remove_all(dir);
  CHECK(report.at("processes").get<int>() == ranks);
  // Threads beyond the cores: with two pipeline ranks or more the ranks measure the time slice a
  // woken rank waits for, and the slots hold it; with one, a warning names it as left out.
  const int threads = ranks * report.at("threads_per_process").get<int>();
  const int cores = report.at("cores").get<int>();
  CHECK(cores >= 1);
  const auto pp = std::find(layout.begin(), layout.end(), "--pp");
  REQUIRE(pp != layout.end());
  const bool probed = threads > cores && std::stoi(*std::next(pp)) >= 2;
  CHECK(report.at("core_slice_ns").is_number() == probed);
  if (probed) CHECK(report.at("core_slice_ns").get<std::int64_t>() >= 0);
  // With replicas, a warning says they are simulated in step (no straggler).
  const auto dp = std::find(layout.begin(), layout.end(), "--dp");
  const bool replicas = dp != layout.end() && std::stoi(*std::next(dp)) >= 2;
  const std::string warnings = report.at("warnings").dump();
  CHECK(report.at("warnings").size() == (threads <= cores || probed ? 0U : 1U) + (replicas ? 1U : 0U));
  CHECK((threads <= cores || probed || warnings.find("time slice") != std::string::npos));
  CHECK((!replicas || warnings.find("a REDUCE_GRAD that waits for a slower replica is not modelled") != std::string::npos));
  CHECK(report.at("predicted_step_ns").get<std::int64_t>() > 0);
  CHECK(report.at("measured_step_ns").get<std::int64_t>() > 0);
  CHECK(report.at("measured_steps_ns").size() == 2);  // the warm-up step is not measured
  // One peak per pipeline rank, the walked prediction beside the last measured step's.
  const auto& predicted_peaks = report.at("predicted_peak_activation_bytes");
  CHECK(predicted_peaks.size() == report.at("measured_peak_activation_bytes").size());
  for (const auto& peak : predicted_peaks) CHECK(peak.get<std::int64_t>() > 0);
  return report;
}

TEST_CASE("distributed prediction: pp 2 x dp 2 times the Gloo hand-off and each stage's collectives",
          "[distributed]") {
  const auto report = predicted(4, {"--pp", "2", "--dp", "2", "--zero", "1"}, "predict_pp2_dp2");
  CHECK(report.at("handoff_bandwidth_bytes_per_s").get<double>() > 0);
  REQUIRE(report.at("stages").size() == 2);
  for (const auto& stage : report.at("stages")) {
    CHECK(stage.at("reduce_grad_ns").get<std::int64_t>() > 0);
    CHECK(stage.at("param_gather_ns").get<std::int64_t>() > 0);  // ZeRO-1
    CHECK(stage.at("optimizer_step_ns").get<std::int64_t>() > 0);
  }
}

TEST_CASE("distributed prediction: one pipeline has hand-offs and no reductions, replicas alone the reverse",
          "[distributed]") {
  const auto pipeline = predicted(2, {"--pp", "2"}, "predict_pp2");
  CHECK(pipeline.at("handoff_bandwidth_bytes_per_s").get<double>() > 0);
  CHECK(pipeline.at("send_overhead_ns").get<std::int64_t>() > 0);  // a Gloo send writes in its caller
  for (const auto& stage : pipeline.at("stages")) CHECK(stage.at("reduce_grad_ns").get<std::int64_t>() == 0);
  const auto replicas = predicted(2, {"--pp", "1", "--dp", "2"}, "predict_dp2");
  CHECK(replicas.at("handoff_bandwidth_bytes_per_s").get<double>() == 0);
  CHECK(replicas.at("send_overhead_ns").get<std::int64_t>() == 0);
  REQUIRE(replicas.at("stages").size() == 1);
  CHECK(replicas.at("stages")[0].at("reduce_grad_ns").get<std::int64_t>() > 0);
  CHECK(replicas.at("stages")[0].at("param_gather_ns").get<std::int64_t>() == 0);  // no sharding
}

TEST_CASE("distributed prediction: tp 2 times the tensor group's all-reduce and simulates it on its link",
          "[distributed]") {
  const auto report = predicted(2, {"--tp", "2", "--pp", "1"}, "predict_tp2");
  REQUIRE(report.contains("tensor_all_reduce"));
  const auto& tensor = report.at("tensor_all_reduce");
  CHECK(tensor.at("bytes").get<std::int64_t>() == 4 * 16 * 4);  // micro-batches of 4 samples, 16 floats each
  CHECK(tensor.at("small_ns").get<std::int64_t>() > 0);
  CHECK(tensor.at("link_bandwidth_bytes_per_s").get<double>() > 0);
  CHECK_THAT(report.at("notes").dump(), Catch::Contains("tensor-parallel all-reduce over Gloo (2 ranks)"));
  CHECK_THAT(report.at("notes").dump(), Catch::Contains("2 processes x 1 threads"));
  CHECK_THAT(report.at("notes").dump(), Catch::Contains("the replica's 1 device never waits for a core"));
  const auto both = predicted(4, {"--tp", "2", "--pp", "2"}, "predict_tp2_pp2");
  CHECK(both.contains("tensor_all_reduce"));
  CHECK(both.at("handoff_bandwidth_bytes_per_s").get<double>() > 0);
  CHECK(both.at("stages").size() == 2);
}

// --trace and --svg were once ignored here: both timelines now reach both files, and the JSON.
TEST_CASE("distributed prediction: the trace, the chart and the JSON hold the predicted and the measured step",
          "[distributed]") {
  const fs::path dir = testing::fresh_dir("predict_pictures");
  const std::string trace = (dir / "trace.json").string();
  const std::string svg = (dir / "chart.svg").string();
  const auto report = predicted(2, {"--pp", "2", "--trace", trace, "--svg", svg}, "predict_pictures_json");
  REQUIRE(report.at("predicted").size() == report.at("measured").size());
  CHECK(!report.at("measured").empty());
  std::ifstream trace_in(trace);
  REQUIRE(trace_in);
  const nlohmann::json events = nlohmann::json::parse(trace_in).at("traceEvents");
  std::size_t with_prediction = 0;
  for (const nlohmann::json& e : events) with_prediction += e.contains("args") && e["args"].contains("predicted_us");
  CHECK(with_prediction > 0);
  std::ifstream svg_in(svg);
  REQUIRE(svg_in);
  const std::string chart((std::istreambuf_iterator<char>(svg_in)), std::istreambuf_iterator<char>());
  CHECK(chart.find(">mlp on cpu: 1f1b, K=2, M=4, batch ") != std::string::npos);
  CHECK(chart.find("(predicted vs measured)</text>") != std::string::npos);
  CHECK(chart.find(">d0 s0 [0,") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("distributed prediction: given specs are refused, the ranks measure their own costs", "[distributed]") {
  LaunchOptions options;
  options.keep_going = true;  // each rank refuses on its own (the launcher would stop the other)
  const testing::Launched launched =
      testing::launch_run(2, {"--pp", "2", "--predict", "--model-spec", "spec.json", "--timeout", "10"}, options);
  INFO(launched.out << launched.err);
  CHECK(launched.result.exit_code != 0);
  for (const RankExit& e : launched.result.exits) CHECK(e.exit_code == 2);  // usage
  CHECK_THAT(launched.err, Catch::Contains("--distributed --predict measures its own costs"));
}

}  // namespace
}  // namespace pipeworks::hw
