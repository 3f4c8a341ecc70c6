// `pipeworks schedule`: generate any schedule generate() knows, optionally with re-materialization
// and SEND/RECV lowering, and print it as a unit-time grid, CSV or JSON.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/renamed_option.h"
#include "sched/generators.h"
#include "sched/limits.h"
#include "sched/passes.h"
#include "sched/schedule_file.h"
#include "sched/text_file.h"
#include "sched/text_grid.h"

namespace pipeworks::cli {
namespace {

struct ScheduleOptions {
  std::string kind = "1f1b";
  int stages = 0;
  int microbatches = 0;
  std::vector<int> placement;
  int virtual_stages = 1;
  bool recompute = false;
  bool comm = false;
  std::string format;
  std::string output;
};

// The format to print: --format, else the output file's extension when there is one, else "grid".
std::string output_format(const ScheduleOptions& options) {
  if (!options.format.empty()) return options.format;
  if (!options.output.empty()) {
    if (auto by_extension = sched::format_from_extension(options.output)) {
      return std::string(sched::schedule_format_name(*by_extension));
    }
  }
  return "grid";
}

// The text to print: the grid, or the schedule in a file format.
sched::Result<std::string> render_output(const sched::Schedule& schedule, const std::string& format) {
  if (format == "grid") return sched::render_grid(schedule);
  auto file_format = sched::parse_schedule_format(format);
  if (!file_format) return file_format.error();
  return sched::format_schedule(schedule, *file_format);
}

int run(const ScheduleOptions& options) {
  auto kind = sched::parse_schedule_kind(options.kind);
  if (!kind) {
    return report_error("schedule", kExitUsage, kind.error().message);
  }
  if (auto writable = check_output_paths({{"--output", options.output}}); !writable) {
    std::cerr << "pipeworks schedule: error: " << writable.error().message << "\n";
    return kExitInvalid;
  }
  auto schedule = sched::generate(*kind, sched::ScheduleShape{options.stages, options.microbatches, options.placement},
                                  options.virtual_stages);
  if (!schedule) {
    std::cerr << "pipeworks schedule: error: " << schedule.error().message << "\n"
              << "Run 'pipeworks schedule --help' for usage.\n";
    return kExitUsage;
  }
  if (options.recompute) {
    auto recomputed = sched::add_recompute(*schedule);
    if (!recomputed) {
      std::cerr << "pipeworks schedule: error: " << recomputed.error().message << "\n";
      return kExitInvalid;
    }
    schedule = std::move(recomputed);
  }
  if (options.comm) {
    auto lowered = sched::lower_comm(*schedule);
    if (!lowered) {
      std::cerr << "pipeworks schedule: error: " << lowered.error().message << "\n";
      return kExitInvalid;
    }
    schedule = std::move(lowered);
  }
  const std::string format = output_format(options);
  if (format == "grid") {
    if (auto size = sched::check_grid_size(*schedule); !size) {
      return report_error("schedule", kExitUsage, size.error().message);
    }
  }
  auto text = render_output(*schedule, format);
  if (!text) {
    std::cerr << "pipeworks schedule: error: " << text.error().message << "\n";
    return kExitInvalid;
  }
  if (options.output.empty()) {
    std::cout << *text;
    return kExitOk;
  }
  if (auto written = sched::write_text_file(options.output, *text); !written) {
    std::cerr << "pipeworks schedule: error: " << written.error().message << "\n";
    return kExitInvalid;
  }
  return kExitOk;
}

}  // namespace

void add_schedule_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ScheduleOptions>();
  CLI::App* command = app.add_subcommand(
      "schedule", "Generate a schedule (GPipe, 1F1B, interleaved 1F1B, looped BFS, ZB-H1, ZB-H2, ZB-V, DualPipeV, interleaved "
                  "zero bubble) and print it as a unit-time grid, CSV or JSON");
  add_renamed_option(*command, "--schedule", "--kind", options->kind, "Schedule to generate",
                     [](CLI::Option& o) { o.check(CLI::IsMember(schedule_kind_choices()))->capture_default_str(); });
  command->add_option("--stages,-k,-K", options->stages, "Number of pipeline stages K")
      ->required()
      ->check(integer_from(1, sched::kMaxStages));
  command->add_option("--microbatches,-m,-M", options->microbatches, "Number of micro-batches M")
      ->required()
      ->check(integer_from(1, sched::kMaxScheduleCells));
  command->add_option("--placement", options->placement, "Device of each stage, e.g. 0,0,1 (default: stage i on device i)")
      ->delimiter(',')
      ->check(integer_from(0, sched::kMaxStages - 1));
  command->add_option("--virtual-stages,-v", options->virtual_stages,
                      "Stages per device for interleaved-1f1b, looped-bfs and interleaved-zb (K/v devices, stage s on "
                      "device s mod K/v); zb-v and dualpipe-v always have 2 (a V: device r holds stages r and K-1-r)")
      ->check(integer_from(1, sched::kMaxStages))
      ->capture_default_str();
  command->add_flag("--recompute", options->recompute, "Re-materialize each forward before its backward (R actions)");
  command->add_flag("--comm", options->comm, "Lower cross-device data movement to SEND/RECV actions");
  command->add_option("--format", options->format, "Output format (default: grid, or the -o file's extension)")
      ->check(CLI::IsMember(std::vector<std::string>{"grid", "csv", "json"}));
  command->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
  command->callback([options, &context] { context.exit_code = run(*options); });
}

}  // namespace pipeworks::cli
