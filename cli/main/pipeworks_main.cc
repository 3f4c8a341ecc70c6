// Entry point of the `pipeworks` command: registers each subcommand and maps errors to exit codes
// (0 ok, 1 invalid input or failed check, 2 bad usage).
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/command_list.h"

int main(int argc, char** argv) {
  using namespace pipeworks::cli;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    // The error, then the usage of the subcommand that was being parsed.
    std::cerr << "pipeworks: error: " << e.what() << "\n\n";
    const CLI::App* failing = &app;
    while (!failing->get_subcommands().empty()) failing = failing->get_subcommands().back();
    std::cerr << failing->help();
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "pipeworks: error: " << e.what() << "\n";
    return kExitInvalid;
  }
  return context.exit_code;
}
