// `pipeworks validate FILE`: load a CSV or JSON schedule and report every diagnostic as
// `FILE:ROW:COL: error: ...` (or a JSON pointer) followed by the program grid with the cell
// marked. Exit 0 when valid, 1 when the file is unreadable, malformed or invalid.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "sched/schedule_file.h"
#include "sched/units_text.h"
#include "sched/validate.h"

namespace pipeworks::cli {
namespace {

struct ValidateOptions {
  std::string path;
  std::string format;
  int max_errors = 20;
};

int run(const ValidateOptions& options) {
  std::optional<sched::ScheduleFormat> forced;
  if (!options.format.empty()) forced = *sched::parse_schedule_format(options.format);
  const auto loaded = sched::load_schedule(options.path, forced);
  if (!loaded) {
    std::cerr << loaded.error().message << "\n";
    return kExitInvalid;
  }
  const sched::Schedule& schedule = loaded->schedule;
  const std::vector<sched::Diagnostic> diagnostics =
      sched::validate(schedule, sched::ValidateOptions{loaded->placement_inferred});
  if (diagnostics.empty()) {
    const std::string composites =
        schedule.composites.empty() ? "" : ", " + sched::counted(static_cast<std::int64_t>(schedule.composites.size()),
                                                                 "OVERLAP_F_B composite");
    std::cout << fmt::format("{}: ok: {} stages, {} micro-batches, {} devices, {} actions{}{}{}{}\n", options.path,
                             schedule.num_stages, schedule.num_microbatches, schedule.num_devices(),
                             schedule.num_actions(), schedule.has_recompute() ? ", recompute" : "",
                             schedule.has_comm() ? ", comm lowered" : "",
                             schedule.has_stage_level() ? ", stage-level actions" : "", composites);
    return kExitOk;
  }
  const auto shown = std::min(diagnostics.size(), static_cast<std::size_t>(options.max_errors));
  for (std::size_t i = 0; i < shown; ++i) {
    std::cerr << sched::format_diagnostic(*loaded, diagnostics[i]) << "\n" << sched::render(schedule, diagnostics[i]);
  }
  if (shown < diagnostics.size()) {
    std::cerr << fmt::format("{}: {} more errors not shown (--max-errors {})\n", options.path,
                             diagnostics.size() - shown, options.max_errors);
  }
  std::cerr << fmt::format("{}: {} error{}\n", options.path, diagnostics.size(), diagnostics.size() == 1 ? "" : "s");
  return kExitInvalid;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand(
      "validate", "Check a CSV or JSON schedule file and report every problem with its location");
  command->add_option("file", options->path, "Schedule file (.csv in torch.distributed.pipelining's layout, or .json)")
      ->required();
  command->add_option("--format", options->format, "Read the file as this format (default: by extension or content)")
      ->check(CLI::IsMember(std::vector<std::string>{"csv", "json"}));
  command->add_option("--max-errors", options->max_errors, "Show at most N diagnostics in full")
      ->check(integer_from(0, 1'000'000));
  command->callback([options, &context] { context.exit_code = run(*options); });
}

}  // namespace pipeworks::cli
