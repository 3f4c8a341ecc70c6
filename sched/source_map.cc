// Maps diagnostics back to file locations (see source_map.h).
#include "sched/source_map.h"

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

bool valid_device(const LoadedSchedule& loaded, int device) {
  return device >= 0 && device < loaded.schedule.num_devices();
}

std::string csv_location(const LoadedSchedule& loaded, const Diagnostic& diagnostic) {
  const auto d = static_cast<std::size_t>(diagnostic.device);
  if (diagnostic.has_cell() && d < loaded.cells.size() &&
      static_cast<std::size_t>(diagnostic.position) < loaded.cells[d].size()) {
    const TextPosition at = loaded.cells[d][static_cast<std::size_t>(diagnostic.position)];
    return fmt::format("{}:{}:{}", loaded.source_name, at.line, at.column);
  }
  int device = diagnostic.device;
  if (device < 0 && diagnostic.stage >= 0 &&
      static_cast<std::size_t>(diagnostic.stage) < loaded.schedule.placement.size()) {
    device = loaded.schedule.placement[static_cast<std::size_t>(diagnostic.stage)];
  }
  if (valid_device(loaded, device) && static_cast<std::size_t>(device) < loaded.row_lines.size()) {
    return fmt::format("{}:{}:1", loaded.source_name, loaded.row_lines[static_cast<std::size_t>(device)]);
  }
  return loaded.source_name;
}

// The entry of programs[device] holding the action at `position`: the position itself unless the
// file wrote composites before it.
int json_entry(const LoadedSchedule& loaded, int device, int position) {
  const auto d = static_cast<std::size_t>(device);
  if (d < loaded.entries.size() && static_cast<std::size_t>(position) < loaded.entries[d].size()) {
    return loaded.entries[d][static_cast<std::size_t>(position)];
  }
  return position;
}

std::string json_location(const LoadedSchedule& loaded, const Diagnostic& diagnostic) {
  if (diagnostic.has_cell()) {
    return fmt::format("{}: /programs/{}/{}", loaded.source_name, diagnostic.device,
                       json_entry(loaded, diagnostic.device, diagnostic.position));
  }
  const bool stage_known =
      diagnostic.stage >= 0 && static_cast<std::size_t>(diagnostic.stage) < loaded.schedule.placement.size();
  if (stage_known && diagnostic.kind == DiagnosticKind::kBadPlacement) {
    return fmt::format("{}: /placement/{}", loaded.source_name, diagnostic.stage);
  }
  // A stage-level problem (a missing forward) points at the program of the stage's device.
  const int device =
      stage_known ? loaded.schedule.placement[static_cast<std::size_t>(diagnostic.stage)] : diagnostic.device;
  if (valid_device(loaded, device)) return fmt::format("{}: /programs/{}", loaded.source_name, device);
  if (stage_known) return fmt::format("{}: /placement/{}", loaded.source_name, diagnostic.stage);
  if (diagnostic.kind == DiagnosticKind::kBadPlacement) return fmt::format("{}: /placement", loaded.source_name);
  return loaded.source_name;
}

}  // namespace

std::string diagnostic_location(const LoadedSchedule& loaded, const Diagnostic& diagnostic) {
  return loaded.format == ScheduleFormat::kCsv ? csv_location(loaded, diagnostic) : json_location(loaded, diagnostic);
}

std::string format_diagnostic(const LoadedSchedule& loaded, const Diagnostic& diagnostic) {
  return fmt::format("{}: error: {} [{}]", diagnostic_location(loaded, diagnostic), diagnostic.message,
                     diagnostic_kind_name(diagnostic.kind));
}

}  // namespace pipeworks::sched
