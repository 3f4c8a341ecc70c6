// A schedule read from a file, with where each action came from, so that validation
// diagnostics point into the file: `FILE:ROW:COL` for CSV, `FILE: /programs/1/3` for JSON.
#pragma once

#include <string>
#include <vector>

#include "sched/diagnostic.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

enum class ScheduleFormat { kCsv, kJson };

// 1-based line and column of a CSV token (0 when unknown).
struct TextPosition {
  int line = 0;
  int column = 0;
  friend bool operator==(const TextPosition&, const TextPosition&) = default;
};

struct LoadedSchedule {
  Schedule schedule;
  std::string source_name;
  ScheduleFormat format = ScheduleFormat::kCsv;
  // CSV files carry no placement: each stage is placed on the row of its first action.
  bool placement_inferred = false;
  // CSV only: row_lines[device] is the line of that device's row, cells[device][position] the
  // position of that action's token (idle cells are skipped, so positions need not be columns;
  // a composite's sub-actions point at their own text inside it).
  std::vector<int> row_lines;
  std::vector<std::vector<TextPosition>> cells;
  // JSON only: entries[device][position] is the index of the string holding that action in
  // programs[device] (a composite's two sub-actions share one).
  std::vector<std::vector<int>> entries;
};

// Where a diagnostic points: "FILE:ROW:COL" (CSV), "FILE: /programs/1/3" (JSON), or "FILE"
// when it concerns the whole schedule.
std::string diagnostic_location(const LoadedSchedule& loaded, const Diagnostic& diagnostic);

// "<location>: error: <message> [<class>]", one line.
std::string format_diagnostic(const LoadedSchedule& loaded, const Diagnostic& diagnostic);

}  // namespace pipeworks::sched
