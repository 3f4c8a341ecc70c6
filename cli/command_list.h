// Every subcommand, declared once. To add one: put its name in a list below and define
// `void add_<name>_command(CLI::App&, CommandContext&)` in cli/<name>_command.cc (LibTorch
// commands: the TORCH list and cli/<name>_torch_command.cc).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

#define PIPEWORKS_CLI_COMMANDS(X) X(schedule) X(validate) X(sweep) X(plan) X(simulate) X(synthesize) X(presets) X(kernels)
#define PIPEWORKS_CLI_TORCH_COMMANDS(X) X(run) X(profile) X(launch)

namespace pipeworks::cli {
#define PIPEWORKS_DECLARE_COMMAND(name) void add_##name##_command(CLI::App& app, CommandContext& context);
PIPEWORKS_CLI_COMMANDS(PIPEWORKS_DECLARE_COMMAND)
PIPEWORKS_CLI_TORCH_COMMANDS(PIPEWORKS_DECLARE_COMMAND)
#undef PIPEWORKS_DECLARE_COMMAND
}  // namespace pipeworks::cli
