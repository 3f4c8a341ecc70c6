// Entry point of the `pipeworks` command: registers each subcommand and maps errors to exit codes
// (0 ok, 1 invalid input or failed check, 2 bad usage). What a command printed must reach its
// reader: a failed write to standard output (a full disk) is an error too.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/torch_sibling.h"
#ifdef PIPEWORKS_HAVE_TORCH
#include "cli/model_options.h"
#endif
#ifdef PIPEWORKS_HAVE_TORCH
#include "hw/model/torch_errors.h"
#endif

namespace {

using namespace pipeworks::cli;

// A library exception's message; LibTorch's without its call stack (hw/model/torch_errors.h).
std::string exception_message(const std::exception& e) {
#ifdef PIPEWORKS_HAVE_TORCH
  return pipeworks::hw::torch_error_message(e);
#else
  return e.what();
#endif
}

// The error and where to read more: the subcommand's usage line, or the whole help when no
// subcommand was chosen.
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* failing = &app;
  while (!failing->get_subcommands().empty()) failing = failing->get_subcommands().back();
  std::cerr << "pipeworks: error: " << e.what() << "\n";
  if (failing == &app) {
    std::cerr << "\n" << app.help();
  } else {
    std::cerr << "Run 'pipeworks " << failing->get_name() << " --help' for usage.\n";
  }
  return kExitUsage;
}

// Exit code once standard output is flushed: a failed write turns success into 1.
// The reason is errno only when the flush itself set it: a failure reported earlier by ferror()
// would otherwise be named by whatever call last set errno ("No such process" after a kill()).
int flushed(int exit_code) {
  errno = 0;
  std::cout.flush();
  const bool written = std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (written) return exit_code;
  const int reason = errno;
  std::cerr << "pipeworks: error: cannot write standard output" << (reason != 0 ? std::string(": ") + std::strerror(reason) : std::string()) << "\n";
  return exit_code == kExitOk ? kExitInvalid : exit_code;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef PIPEWORKS_TORCH_SIBLING
  if (!runs_without_torch(argc, argv)) return exec_sibling(PIPEWORKS_TORCH_SIBLING, argv);
#endif
  CLI::App app{"pipeworks: plan, simulate, run and compare pipeline-parallel training schedules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pipeworks 0.1.0");
  CommandContext context;
#define PIPEWORKS_ADD_COMMAND(name) add_##name##_command(app, context);
  PIPEWORKS_CLI_COMMANDS(PIPEWORKS_ADD_COMMAND)
#ifdef PIPEWORKS_HAVE_TORCH
  PIPEWORKS_CLI_TORCH_COMMANDS(PIPEWORKS_ADD_COMMAND)
#endif
#undef PIPEWORKS_ADD_COMMAND
  // Checks over every option of the chosen command, after parsing and before it runs.
  app.parse_complete_callback([&app] {
    if (auto empty = check_no_empty_values(app); !empty) throw CLI::ValidationError(empty.error().message);
#ifdef PIPEWORKS_HAVE_TORCH
    for (const CLI::App* command : app.get_subcommands()) {
      if (auto kind = check_model_kind_flags(*command); !kind) throw CLI::ValidationError(kind.error().message);
    }
#endif
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return flushed(app.exit(e));  // --help, --version
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  } catch (const std::exception& e) {
    std::cerr << "pipeworks: error: " << exception_message(e) << "\n";
    return flushed(kExitInvalid);
  }
  return flushed(context.exit_code);
}
