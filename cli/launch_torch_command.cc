// `pipeworks launch -n K -- COMMAND ...`: runs K ranks of a multi-process run on this machine
// (hw/dist/launcher.h), e.g. `pipeworks launch -n 4 -- pipeworks run -K 4 --distributed`.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "hw/dist/launcher.h"

namespace pipeworks::cli {

void add_launch_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<hw::LaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Run K ranks of a multi-process command on this machine (sets RANK, WORLD_SIZE, MASTER_ADDR, ...)");
  cmd->add_option("-n,--nproc", options->num_processes, "number of ranks")
      ->check(integer_from(1, hw::kMaxLaunchProcesses))
      ->capture_default_str();
  cmd->add_option("--master-addr", options->master_addr, "rendezvous address (IPv4)")->capture_default_str();
  cmd->add_option("--master-port", options->master_port, "rendezvous port (0: a free one)")
      ->check(integer_from(0, 65535))
      ->capture_default_str();
  cmd->add_flag("--keep-going", options->keep_going, "do not stop the other ranks when one fails");
  cmd->add_option("--kill-after", options->kill_after_s, "stop every rank after this many seconds (0: never)")
      ->check(number_from(0, 1e7))
      ->capture_default_str();
  cmd->add_option("--grace", options->grace_s, "seconds between SIGTERM and SIGKILL")
      ->check(number_from(0, 3600))
      ->capture_default_str();
  cmd->add_option("command", options->command, "the command each rank runs (after --)")->required();
  cmd->callback([options, &context] {
    auto result = hw::launch(*options);
    if (!result) {
      std::cerr << "pipeworks launch: error: " << result.error().message << "\n";
      context.exit_code = kExitUsage;
      return;
    }
    if (!result->output_error.empty()) std::cerr << "pipeworks launch: error: " << result->output_error << "\n";
    if (result->exit_code != 0) {
      if (result->timed_out) std::cerr << fmt::format("pipeworks launch: stopped after {} s\n", options->kill_after_s);
      if (result->signaled) std::cerr << "pipeworks launch: interrupted; stopped every rank\n";
      for (const hw::RankExit& e : result->exits) {
        std::cerr << fmt::format("pipeworks launch: rank {} exited with code {}{}{}\n", e.rank, e.exit_code,
                                 e.stopped_by_launcher ? " (stopped by the launcher)" : "",
                                 e.seconds_after_first_failure >= 0
                                     ? fmt::format(", {:.2f} s after the first failure", e.seconds_after_first_failure)
                                     : "");
      }
    }
    context.exit_code = result->exit_code == 0 ? kExitOk : kExitInvalid;
  });
}

}  // namespace pipeworks::cli
