// Harness: schedule CSV text (sched/csv_io.h). Properties: a parse error points inside the text;
// what parses writes back (to_csv, and to_json) and reads back as the same Schedule; every
// action's recorded position points at its own token; what parses also validates (shapes up to
// kMaxValidatedCells), and every diagnostic points inside the schedule and, in the text, at the
// action it names.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sched/csv_io.h"
#include "sched/json_io.h"
#include "sched/validate.h"
#include "tests/fuzz/diagnostic_checks.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/text_location.h"

namespace {

using namespace pipeworks;
using fuzz::require;

constexpr std::string_view kSource = "fuzz.csv";

// The action at CSV position `at` in the text is `expected`.
void require_token(std::string_view text, sched::TextPosition at, const sched::Action& expected,
                   std::string_view what) {
  const auto offset = fuzz::offset_of(text, at.line, at.column, true);
  require(offset.has_value(), "a CSV position lies inside the text",
          [&] { return fmt::format("{} at {}:{}", what, at.line, at.column); });
  const std::string_view token = fuzz::token_at(text, *offset);
  auto parsed = sched::parse_action(token);
  require(parsed && *parsed == expected, "a CSV position points at its action's token", [&] {
    return fmt::format("{} at {}:{} reads '{}', expected {}", what, at.line, at.column, token,
                       sched::to_string(expected));
  });
}

void check_round_trips(const sched::Schedule& schedule) {
  auto again = sched::parse_csv(sched::to_csv(schedule), kSource);
  require(again && again->schedule == schedule, "CSV parse -> write -> parse gives the same schedule",
          [&] { return again ? sched::to_csv(again->schedule) : again.error().message; });
  auto as_json = sched::parse_json(sched::to_json(schedule), "fuzz.json");
  require(as_json && as_json->schedule == schedule, "a CSV schedule written as JSON reads back the same",
          [&] { return as_json ? sched::to_json(as_json->schedule) : as_json.error().message; });
}

void check_diagnostic_location(std::string_view text, const sched::LoadedSchedule& loaded,
                               const sched::Diagnostic& d) {
  const std::string location = sched::diagnostic_location(loaded, d);
  if (location == kSource) return;  // the whole schedule
  const auto lc = fuzz::leading_line_column(location + ":", kSource);
  require(lc.has_value(), "a CSV diagnostic location is FILE or FILE:LINE:COL", [&] { return location; });
  if (d.has_cell()) {
    const sched::Schedule& s = loaded.schedule;
    require_token(text, {static_cast<int>(lc->line), static_cast<int>(lc->column)},
                  s.programs[static_cast<std::size_t>(d.device)][static_cast<std::size_t>(d.position)],
                  sched::format_diagnostic(loaded, d));
  } else {
    require(fuzz::offset_of(text, lc->line, lc->column, true).has_value(), "a CSV row location lies inside the text",
            [&] { return sched::format_diagnostic(loaded, d); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = sched::parse_csv(text, kSource);
  if (!loaded) {
    const std::string& message = loaded.error().message;
    require(message.rfind(kSource, 0) == 0, "a CSV error names its source", [&] { return message; });
    if (const auto lc = fuzz::leading_line_column(message, kSource)) {
      require(fuzz::offset_of(text, lc->line, lc->column, true).has_value(),
              "a CSV error location lies inside the text", [&] { return message; });
    }
    return 0;
  }
  const sched::Schedule& schedule = loaded->schedule;
  require(loaded->cells.size() == schedule.programs.size(), "one position list per CSV row");
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    require(loaded->cells[d].size() == schedule.programs[d].size(), "one position per CSV action");
    for (std::size_t p = 0; p < schedule.programs[d].size(); ++p) {
      require_token(text, loaded->cells[d][p], schedule.programs[d][p], fmt::format("action d{}:{}", d, p));
    }
  }
  check_round_trips(schedule);
  if (!fuzz::worth_validating(schedule)) return 0;
  const auto diagnostics = sched::validate(schedule, sched::ValidateOptions{true});
  for (std::size_t i = 0; i < diagnostics.size() && i < fuzz::kMaxCheckedDiagnostics; ++i) {
    fuzz::check_diagnostic(schedule, diagnostics[i]);
    check_diagnostic_location(text, *loaded, diagnostics[i]);
  }
  return 0;
}
