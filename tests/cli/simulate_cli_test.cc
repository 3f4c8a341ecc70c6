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
  CHECK(run_simulate("--model /nonexistent/model.json").exit_code == 1);
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
