// What every `pipeworks` subcommand shares: exit codes and the context its callback reports to.
#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>

namespace pipeworks::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // invalid input or a failed check
inline constexpr int kExitUsage = 2;    // bad usage

// The one error style of every command: "pipeworks CMD: error: MESSAGE" on one line, and after a
// usage error a second line pointing at the command's --help. Returns `exit_code`.
inline int report_error(std::string_view command, int exit_code, std::string_view message) {
  std::cerr << "pipeworks " << command << ": error: " << message << "\n";
  if (exit_code == kExitUsage) std::cerr << "Run 'pipeworks " << command << " --help' for usage.\n";
  return exit_code;
}

// A step of a command that failed, and the exit code it maps to; steps return std::nullopt when
// they did not fail.
struct Failure {
  int exit_code;
  std::string message;
};
inline std::optional<Failure> usage(std::string message) { return Failure{kExitUsage, std::move(message)}; }
inline std::optional<Failure> invalid(std::string message) { return Failure{kExitInvalid, std::move(message)}; }

// Owned by main; a command's callback stores its exit code here.
struct CommandContext {
  int exit_code = kExitOk;
};

}  // namespace pipeworks::cli
