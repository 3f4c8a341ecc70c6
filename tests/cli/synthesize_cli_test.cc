// `pipeworks synthesize` run as a process: its summary, the schedule file read back by validate
// and simulate (same step), the same output for the same seed, and hostile inputs refused.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_pipeworks.h"

namespace {

using pipeworks::test::CliRun;
using pipeworks::test::run_pipeworks;

const std::string kScratch = std::string(PIPEWORKS_BINARY_DIR) + "/synthesize_cli_test_";
const std::string kProblem = "--model uniform --cluster dgx-h100 -K 4 -M 8 --max-evaluations 300 ";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("synthesize prints the step the bound the gap and the best hand-written family", "[synthesize]") {
  const CliRun r = run_pipeworks("synthesize " + kProblem + "--memory-cap 80GiB");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* line : {"step ", "bubble ", "lower bound ", "gap to bound ", "memory against the cap",
                           "best hand-written under the cap: ", "zb-h1", "zb-h2", "gpipe", "1f1b"}) {
    CHECK_THAT(r.output, Catch::Contains(line));
  }
}

TEST_CASE("synthesize searches re-materialization under a binding cap unless told not to", "[synthesize]") {
  // uniform on cpu2, K 2, M 8: 128 MiB of static state and 32 MiB a micro-batch on each device;
  // 200 MiB hold 2 micro-batches plainly and 8 with R (4 MiB of stage input each).
  const std::string problem = "--model uniform --layers 4 --cluster cpu2 -K 2 -M 8 --max-evaluations 100 --memory-cap 200MiB";
  const CliRun searched = run_pipeworks("synthesize " + problem + " --json " + kScratch + "r.json");
  INFO(searched.output);
  REQUIRE(searched.exit_code == 0);
  CHECK_THAT(searched.output, Catch::Contains("2 (8 with R)") && Catch::Contains("zb-h1 + recompute"));
  const nlohmann::json report = read_json(kScratch + "r.json");
  CHECK(report["devices"][0]["in_flight_limit_recompute"] == 8);
  CHECK(report["hand_written"].size() == 8);
  const CliRun plain = run_pipeworks("synthesize " + problem + " --no-recompute");
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.output, !Catch::Contains("with R") && !Catch::Contains("+ recompute"));
  std::remove((kScratch + "r.json").c_str());
}

TEST_CASE("synthesize writes a CSV and a JSON schedule that validate and simulate to its step", "[synthesize]") {
  for (const std::string ext : {"csv", "json"}) {
    const std::string schedule = kScratch + "schedule." + ext;
    const std::string report = kScratch + "report.json";
    const std::string simulated = kScratch + "simulated.json";
    const CliRun made = run_pipeworks("synthesize " + kProblem + "--memory-cap 2GiB -o " + schedule + " --json " + report);
    INFO(made.output);
    REQUIRE(made.exit_code == 0);
    CHECK(run_pipeworks("validate " + schedule).exit_code == 0);
    const CliRun sim = run_pipeworks("simulate --model uniform --cluster dgx-h100 --schedule-file " + schedule +
                                     " --json " + simulated);
    INFO(sim.output);
    REQUIRE(sim.exit_code == 0);
    const auto j = read_json(report);
    CHECK(j["schema"] == "pipeworks.synthesis_report/1");
    CHECK(read_json(simulated)["step_ns"] == j["step_ns"]);
    CHECK(j["step_ns"].get<std::int64_t>() >= j["lower_bound_ns"].get<std::int64_t>());
    for (const auto& d : j["devices"]) CHECK(d["peak_bytes"].get<std::int64_t>() <= d["cap_bytes"].get<std::int64_t>());
    for (const std::string& path : {schedule, report, simulated}) std::remove(path.c_str());
  }
}

TEST_CASE("synthesize --placement shares devices: a V file names its placement and simulates to its step",
          "[synthesize]") {
  const std::string schedule = kScratch + "v.json";
  const std::string report = kScratch + "v_report.json";
  const CliRun made = run_pipeworks("synthesize --model uniform --cluster dgx-h100 --placement 0,1,1,0 -M 8 "
                                    "--max-evaluations 100 --memory-cap 80GiB -o " + schedule + " --json " + report);
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  for (const char* line : {"K=4 stages on 2 devices (placement 0,1,1,0)", "s0: ", "s3: ", "zb-v", "dualpipe-v"}) {
    CHECK_THAT(made.output, Catch::Contains(line));
  }
  const auto j = read_json(report);
  CHECK(j["placement"] == nlohmann::json::array({0, 1, 1, 0}));
  CHECK(j["devices"][0]["stages"] == nlohmann::json::array({0, 3}));
  const std::string simulated = kScratch + "v_simulated.json";
  const CliRun sim =
      run_pipeworks("simulate --model uniform --cluster dgx-h100 --schedule-file " + schedule + " --json " + simulated);
  INFO(sim.output);
  REQUIRE(sim.exit_code == 0);
  CHECK(read_json(simulated)["step_ns"] == j["step_ns"]);
  CHECK(read_json(schedule)["placement"] == nlohmann::json::array({0, 1, 1, 0}));
  const std::string base = "synthesize --model uniform --cluster dgx-h100 -M 8 --memory-cap 80GiB ";
  pipeworks::test::check_cli_cases({{base + "--placement 0,2", "placement 0,2: placement leaves device 1 without a stage"},
                                    {base + "--placement 0,1,1,0 -K 3", "placement names 4 stages but the schedule has 3"}},
                                   1);
  for (const std::string& path : {schedule, report, simulated}) std::remove(path.c_str());
}

TEST_CASE("synthesize --search-placement tries the V and the loop and keeps the faster", "[synthesize]") {
  const std::string report = kScratch + "searched_report.json";
  const std::string base = "synthesize --model uniform --cluster dgx-h100 -K 4 -M 8 --memory-cap 80GiB ";
  const CliRun made = run_pipeworks(base + "--search-placement 2 --max-evaluations 100 --json " + report);
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  for (const char* line : {"placement V (0,1,1,0): step ", "placement loop of 2 (0,1,0,1): step "}) {
    CHECK_THAT(made.output, Catch::Contains(line));
  }
  const auto j = read_json(report);
  REQUIRE(j["placements_tried"].size() == 2);
  const auto& v = j["placements_tried"][0];
  const auto& loop = j["placements_tried"][1];
  CHECK(v["name"] == "V");
  CHECK(loop["placement"] == nlohmann::json::array({0, 1, 0, 1}));
  const auto faster = v["step_ns"].get<std::int64_t>() <= loop["step_ns"].get<std::int64_t>() ? v : loop;
  CHECK(j["placement"] == faster["placement"]);
  CHECK(j["step_ns"] == faster["step_ns"]);
  pipeworks::test::check_cli_cases({{base + "--search-placement 3", "no placement of 4 stages on 3 devices to search"}}, 1);
  pipeworks::test::check_cli_cases({{base + "--search-placement 2 --placement 0,1,1,0", "--search-placement"}}, 2);
  std::remove(report.c_str());
}

TEST_CASE("synthesize gives the same output twice for one seed", "[synthesize]") {
  const std::string args = "synthesize " + kProblem + "--memory-cap 1GiB --seed 5 -o ";
  const CliRun a = run_pipeworks(args + kScratch + "a.csv");
  const CliRun b = run_pipeworks(args + kScratch + "b.csv");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  // All but the last line, which names the file.
  CHECK(a.output.substr(0, a.output.find("\nschedule ")) == b.output.substr(0, b.output.find("\nschedule ")));
  CHECK_THAT(a.output, Catch::Contains("of 300 local-search evaluations"));
  CHECK(pipeworks::test::read_text_file(kScratch + "a.csv") == pipeworks::test::read_text_file(kScratch + "b.csv"));
  for (const std::string& path : {kScratch + "a.csv", kScratch + "b.csv"}) std::remove(path.c_str());
}

TEST_CASE("synthesize refuses hostile inputs with one clear line", "[synthesize]") {
  const std::string base = "synthesize --model uniform --cluster dgx-h100 ";
  pipeworks::test::check_cli_cases({{base + "-K 4 -M 8 --memory-cap 1KiB", "no schedule fits a memory cap of 1.00 KiB"},
                                    {base + "-K 9 -M 8 --memory-cap 40GiB", "9 stages do not fit on cluster"},
                                    {base + "-K 8 -M 500000 --memory-cap 40GiB --time-limit 1", "more than the time limit"}},
                                   1);
  pipeworks::test::check_cli_cases({{base + "-K 4 -M 8", "--memory-cap is required"},
                                    {base + "-K 4 -M 8 --memory-cap lots", "--memory-cap"},
                                    {base + "-K 4 -M 8 --memory-cap 0GiB", "--memory-cap must be positive"},
                                    {base + "-K 0 -M 8 --memory-cap 40GiB", "--stages"},
                                    {base + "-K 4 -M 0 --memory-cap 40GiB", "--microbatches"},
                                    {base + "-K 4 -M 8 --memory-cap 40GiB --time-limit 0", "--time-limit"},
                                    {base + "-K 4 -M 8 --memory-cap 40GiB --time-limit nan", "--time-limit"},
                                    {base + "-K 4 -M 8 --memory-cap 40GiB --seed -1", "--seed"},
                                    {base + "-K 4 -M 8 --memory-cap 40GiB --batch 12", "--batch 12"},
                                    {base + "-K 4 -M 8 --memory-cap 40GiB -o out.txt", "--output"}},
                                   2);
}
