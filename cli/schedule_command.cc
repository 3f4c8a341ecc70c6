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
#include "cli/schedule_flags.h"
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
  add_schedule_flags(*command,
                     {&options->kind, &options->stages, &options->microbatches, &options->placement,
                      &options->virtual_stages, &options->recompute},
                     {.shape_required = true, .max_device = sched::kMaxStages - 1, .old_kind_spelling = true});
  command->add_flag("--comm", options->comm, "Lower cross-device data movement to SEND/RECV actions");
  command->add_option("--format", options->format, "Output format (default: grid, or the -o file's extension)")
      ->check(CLI::IsMember(std::vector<std::string>{"grid", "csv", "json"}));
  command->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
  command->callback([options, &context] { context.exit_code = run(*options); });
}

}  // namespace pipeworks::cli
