// Harness: schedule JSON text (sched/json_io.h). Properties: a syntax error's line and column
// lie inside the text and any other error's JSON pointer names a member that exists (but for
// "missing member"); what parses writes back and reads back as the same Schedule; what parses
// also validates (shapes up to kMaxValidatedCells), and every diagnostic's pointer exists and,
// for a cell, names that action (or the composite that holds it).
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sched/cells.h"
#include "sched/json_io.h"
#include "sched/validate.h"
#include "tests/fuzz/diagnostic_checks.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/json_pointers.h"
#include "tests/fuzz/text_location.h"

namespace {

using namespace pipeworks;
using fuzz::require;

constexpr std::string_view kSource = "fuzz.json";

void check_error(std::string_view text, const std::string& message) {
  require(message.rfind(kSource, 0) == 0, "a JSON error names its source", [&] { return message; });
  if (const auto lc = fuzz::leading_line_column(message, kSource)) {
    require(fuzz::offset_of(text, lc->line, lc->column, false).has_value(), "a JSON syntax error lies inside the text",
            [&] { return message; });
    return;
  }
  if (message.find(": error: missing member") != std::string::npos) return;
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return;  // an error about the text as a whole (a number too large, ...)
  }
  require(fuzz::message_pointer_resolves(message, kSource, document), "a JSON error's pointer exists in the input",
          [&] { return message; });
}

void check_diagnostic_location(const nlohmann::json& document, const sched::LoadedSchedule& loaded,
                               const sched::Diagnostic& d) {
  const std::string location = sched::diagnostic_location(loaded, d);
  if (location == kSource) return;
  const std::string prefix = fmt::format("{}: ", kSource);
  require(location.rfind(prefix, 0) == 0, "a JSON diagnostic location is FILE or FILE: POINTER",
          [&] { return location; });
  const nlohmann::json* value = fuzz::resolve_pointer(document, std::string_view(location).substr(prefix.size()));
  require(value != nullptr, "a JSON diagnostic's pointer exists in the input",
          [&] { return sched::format_diagnostic(loaded, d); });
  if (!d.has_cell()) return;
  const sched::Action& expected =
      loaded.schedule.programs[static_cast<std::size_t>(d.device)][static_cast<std::size_t>(d.position)];
  auto named = value->is_string() ? sched::parse_cell(value->get<std::string>()) : sched::Error{"not a string"};
  require(named && (named->actions[0] == expected || (named->size == 2 && named->actions[1] == expected)),
          "a JSON diagnostic's pointer names its action (or the composite holding it)",
          [&] { return sched::format_diagnostic(loaded, d); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = sched::parse_json(text, kSource);
  if (!loaded) {
    check_error(text, loaded.error().message);
    return 0;
  }
  const sched::Schedule& schedule = loaded->schedule;
  auto again = sched::parse_json(sched::to_json(schedule), kSource);
  require(again && again->schedule == schedule, "JSON parse -> write -> parse gives the same schedule",
          [&] { return again ? sched::to_json(again->schedule) : again.error().message; });
  if (!fuzz::worth_validating(schedule)) return 0;
  const auto document = nlohmann::json::parse(text);  // parse_json accepted it
  const auto diagnostics = sched::validate(schedule);
  for (std::size_t i = 0; i < diagnostics.size() && i < fuzz::kMaxCheckedDiagnostics; ++i) {
    fuzz::check_diagnostic(schedule, diagnostics[i]);
    check_diagnostic_location(document, *loaded, diagnostics[i]);
  }
  return 0;
}
