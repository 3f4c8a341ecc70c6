// What the multi-process tests share: `pipeworks run --distributed` started by the launcher
// (hw/dist/launcher.h) with every rank's lines collected, and a fresh directory for its files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hw/dist/launcher.h"
#include "temp_path.h"

namespace pipeworks::hw::testing {

inline std::string pipeworks_exe() { return std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks"; }

struct Launched {
  LaunchResult result;
  std::string out, err;  // every rank's lines, prefixed "[rank r] "
};

inline Launched launch_run(int ranks, const std::vector<std::string>& run_args, LaunchOptions options = {}) {
  REQUIRE(std::filesystem::exists(pipeworks_exe()));  // build the `pipeworks` target with the hw tests
  options.num_processes = ranks;
  options.kill_after_s = options.kill_after_s > 0 ? options.kill_after_s : 120;
  options.command = {pipeworks_exe(), "run", "--distributed"};
  options.command.insert(options.command.end(), run_args.begin(), run_args.end());
  Launched launched;
  auto result = launch(options, [&](int rank, bool is_stderr, std::string_view line) {
    (is_stderr ? launched.err : launched.out) += "[rank " + std::to_string(rank) + "] " + std::string(line) + "\n";
  });
  REQUIRE(result.ok());
  launched.result = *result;
  return launched;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = test::temp_path("dist_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace pipeworks::hw::testing
