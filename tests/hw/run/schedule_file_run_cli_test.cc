// `pipeworks run --schedule-file FILE`: any valid schedule file runs with the gradient check --
// compute-only files lowered by our passes, files with their SEND/RECV as written, in threads and
// in processes -- and a file that is invalid or contradicts the options is a named error.
#include <filesystem>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

const std::string kMlp = "--model mlp --depth 4 --width 8 --intra-op-threads 1 --batch 8 --steps 2 ";

// A schedule file written by `pipeworks schedule` with `arguments`.
std::string schedule_file(const fs::path& dir, const std::string& name, const std::string& arguments) {
  const std::string path = (dir / name).string();
  const test::CliRun written = test::run_pipeworks("schedule " + arguments + " -o " + path);
  INFO(written.output);
  REQUIRE(written.exit_code == 0);
  return path;
}

fs::path fresh_dir() {
  const fs::path dir = test::temp_path("schedule_file");
  fs::create_directories(dir);
  return dir;
}

TEST_CASE("run --schedule-file trains any valid file and its gradients equal the reference's") {
  const fs::path dir = fresh_dir();
  const std::string compute_only = schedule_file(dir, "zbh1.csv", "--schedule zb-h1 -K 2 -M 4 --format csv");
  const std::string lowered = schedule_file(dir, "gpipe.csv", "--schedule gpipe -K 2 -M 4 --recompute --comm --format csv");
  const std::string json = schedule_file(dir, "zbv.json", "--schedule zb-v -K 4 -M 4 --format json");
  for (const std::string& file : {compute_only, lowered, json}) {
    const test::CliRun run = test::run_pipeworks("run " + kMlp + "--check --schedule-file " + file);
    INFO(run.output);
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.output, Catch::Contains(file) && Catch::Contains("PASS"));
  }
  const test::CliRun launched = test::run_pipeworks("launch -n 2 --kill-after 120 -- " + PIPEWORKS_EXE + " run " +
                                                    kMlp + "--check --distributed --schedule-file " + compute_only);
  INFO(launched.output);
  CHECK(launched.exit_code == 0);
  CHECK_THAT(launched.output, Catch::Contains("PASS"));
  fs::remove_all(dir);
}

TEST_CASE("run --schedule-file trains a schedule `synthesize` searched on the model's own profile") {
  const fs::path dir = fresh_dir();
  const std::string spec = (dir / "mlp.json").string();
  const test::CliRun profiled = test::run_pipeworks(
      "profile --model mlp --depth 4 --width 8 --intra-op-threads 1 --microbatch-sizes 2 --repetitions 2 --no-machine -o " +
      spec);
  INFO(profiled.output);
  REQUIRE(profiled.exit_code == 0);
  // One stage per device, and a V: four stages on two devices, each device's two sharing its cap.
  for (const auto& [name, shape, stages] : {std::tuple{"synthesized.csv", "-K 2", "-K 2"},
                                            std::tuple{"synthesized_v.csv", "--placement 0,1,1,0", "-K 4"}}) {
    const std::string file = (dir / name).string();
    const test::CliRun synthesized =
        test::run_pipeworks("synthesize --model-spec " + spec + " --cluster cpu2 " + shape +
                            " -M 4 --batch 8 --memory-cap 1GiB --max-evaluations 200 -o " + file);
    INFO(synthesized.output);
    REQUIRE(synthesized.exit_code == 0);
    const std::string options = kMlp + stages + " -M 4 --check --schedule-file " + file;
    const test::CliRun threads = test::run_pipeworks("run " + options);
    INFO(threads.output);
    CHECK(threads.exit_code == 0);
    CHECK_THAT(threads.output, Catch::Contains("PASS"));
    const test::CliRun launched = test::run_pipeworks("launch -n 2 --kill-after 120 -- " + PIPEWORKS_EXE + " run " +
                                                      options + " --distributed");
    INFO(launched.output);
    CHECK(launched.exit_code == 0);
    CHECK_THAT(launched.output, Catch::Contains("PASS"));
  }
  fs::remove_all(dir);
}

TEST_CASE("run --schedule-file: a bad file is exit 1, a contradicting option exit 2, each named") {
  const fs::path dir = fresh_dir();
  const std::string file = schedule_file(dir, "1f1b.csv", "--schedule 1f1b -K 2 -M 4 --format csv");
  const test::CliRun stages = test::run_pipeworks("run " + kMlp + "-K 3 --schedule-file " + file);
  CHECK(stages.exit_code == 2);
  CHECK_THAT(stages.output, Catch::Contains("--stages 3 but " + file + " has 2 stages"));
  const test::CliRun kind = test::run_pipeworks("run " + kMlp + "--schedule gpipe --schedule-file " + file);
  CHECK(kind.exit_code == 2);
  CHECK_THAT(kind.output, Catch::Contains("--schedule and --schedule-file"));
  const std::string broken = (dir / "broken.csv").string();
  {
    std::FILE* f = std::fopen(broken.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("0F0,0B0\n1F0,1B1\n", f);  // stage 1's B of micro-batch 1 has no forward
    std::fclose(f);
  }
  const test::CliRun invalid = test::run_pipeworks("run " + kMlp + "--schedule-file " + broken);
  CHECK(invalid.exit_code == 1);
  CHECK_THAT(invalid.output, Catch::Contains(broken) && Catch::Contains("pipeworks validate"));
  const test::CliRun missing = test::run_pipeworks("run " + kMlp + "--schedule-file " + (dir / "none.csv").string());
  CHECK(missing.exit_code == 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipeworks::hw
