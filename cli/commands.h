// What every `pipeworks` subcommand shares: exit codes and the context its callback reports to.
#pragma once

#include <CLI/CLI.hpp>

namespace pipeworks::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // invalid input or a failed check
inline constexpr int kExitUsage = 2;    // bad usage

// Owned by main; a command's callback stores its exit code here.
struct CommandContext {
  int exit_code = kExitOk;
};

}  // namespace pipeworks::cli
