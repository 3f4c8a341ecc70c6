// `pipeworks` without LibTorch in its process (cli/torch_sibling.h): it runs the other commands
// itself, hands run, profile and launch to `pipeworks-torch` beside it, and names that file when
// it cannot start it. Skipped in a build without LibTorch, which has no sibling.
#include <filesystem>
#include <iostream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace {

namespace fs = std::filesystem;
using pipeworks::test::run_command;
using pipeworks::test::run_pipeworks;

bool links_libtorch(const fs::path& binary) {
  return pipeworks::test::read_text_file(binary.string()).find("libtorch_cpu.so") != std::string::npos;
}

}  // namespace

TEST_CASE("pipeworks runs its commands without LibTorch and hands run, profile and launch to pipeworks-torch") {
  const fs::path exe = PIPEWORKS_EXE;
  const fs::path sibling = exe.parent_path() / "pipeworks-torch";
  if (!fs::exists(sibling)) {
    std::cout << "SKIPPED: a build without LibTorch has no pipeworks-torch\n";
    return;
  }
  CHECK_FALSE(links_libtorch(exe));
  CHECK(links_libtorch(sibling));
  const auto run_help = run_pipeworks("run --help");
  CHECK(run_help.exit_code == 0);
  CHECK_THAT(run_help.output, Catch::Contains("--schedule"));
  const auto help = run_pipeworks("--help");
  CHECK_THAT(help.output, Catch::Contains("simulate") && Catch::Contains("launch"));

  // A copy alone in a directory: its own commands run, the others name the missing file.
  const fs::path dir = pipeworks::test::temp_path("torch_sibling");
  fs::create_directories(dir);
  const fs::path alone = dir / "pipeworks";
  fs::copy_file(exe, alone, fs::copy_options::overwrite_existing);
  CHECK(run_command(alone.string() + " presets 2>&1").exit_code == 0);
  const auto missing = run_command(alone.string() + " run --help 2>&1");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.output, Catch::Contains("cannot start " + (dir / "pipeworks-torch").string()) &&
                                 Catch::Contains("No such file or directory"));
  fs::remove_all(dir);
}
