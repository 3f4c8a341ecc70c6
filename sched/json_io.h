// JSON schedules (format "pipeworks.schedule", version 1; see docs/schedule_json.md):
//
//   {"format": "pipeworks.schedule", "version": 1, "num_stages": 2, "num_microbatches": 1,
//    "placement": [0, 1], "programs": [["0F0", "0SEND_F0", ...], ["1RECV_F0", "1F0", ...]]}
//
// Unlike CSV the file states K, M and the placement, so nothing is inferred.
#pragma once

#include <string>
#include <string_view>

#include "sched/limits.h"
#include "sched/source_map.h"

namespace pipeworks::sched {

inline constexpr std::string_view kScheduleJsonFormat = "pipeworks.schedule";
inline constexpr int kScheduleJsonVersion = 1;
// Largest JSON text parse_json reads.
inline constexpr std::size_t kMaxJsonBytes = static_cast<std::size_t>(kMaxScheduleFileBytes);

// Strict: every member required, no unknown members, integers that fit an int, actions in
// the strict grammar of parse_action. Errors read "SOURCE: /programs/1/3: error: ..." (a JSON
// pointer; "(root)" for the document itself, as in spec errors), or "SOURCE:LINE:COL: error:
// invalid JSON: ..." for syntax errors. Shape and placement problems are left to validate().
Result<LoadedSchedule> parse_json(std::string_view text, std::string_view source_name = "<json>");

// The schedule in the format above, one program per line.
std::string to_json(const Schedule& schedule);

}  // namespace pipeworks::sched
