// Runs the built `pipeworks` binary (PIPEWORKS_EXE) as a process for the CLI tests: exit code
// plus stdout and stderr together. Shared by every tests/cli/*_test.cc.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "golden_file.h"  // read_text_file

namespace pipeworks::test {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together (unless redirected elsewhere)
};

// Runs a shell command line; its output is stdout and stderr as `command` redirects them.
inline CliRun run_command(const std::string& command) {
  CliRun result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// `arguments` is appended to the binary's path as shell words; `redirections` says where the
// output goes (by default stdout and stderr both to `output`).
inline CliRun run_pipeworks(const std::string& arguments, const std::string& redirections = "2>&1") {
  return run_command(std::string(PIPEWORKS_EXE) + " " + arguments + " " + redirections);
}

// A command line and a part of the output it must print.
struct CliCase {
  std::string arguments;
  std::string expected;
};

// Runs every case, expecting `exit_code` and the expected text in the output.
inline void check_cli_cases(const std::vector<CliCase>& cases, int exit_code) {
  for (const CliCase& c : cases) {
    const CliRun run = run_pipeworks(c.arguments);
    INFO(c.arguments << "\n" << run.output);
    CHECK(run.exit_code == exit_code);
    CHECK_THAT(run.output, Catch::Contains(c.expected));
  }
}

}  // namespace pipeworks::test
