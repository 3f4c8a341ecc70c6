// Schedule files: load and save CSV or JSON, choosing the format by extension (".csv",
// ".json") or, for other names, by content (a leading '{' means JSON).
#pragma once

#include <string>
#include <optional>
#include <string_view>

#include "sched/source_map.h"

namespace pipeworks::sched {

std::string_view schedule_format_name(ScheduleFormat format);  // "csv", "json"
Result<ScheduleFormat> parse_schedule_format(std::string_view name);

// Format by extension; an error for other extensions.
Result<ScheduleFormat> format_from_extension(std::string_view path);

// Parses text in the given format, or by content when `format` is not given.
Result<LoadedSchedule> parse_schedule(std::string_view text, std::string_view source_name,
                                      std::optional<ScheduleFormat> format = std::nullopt);

// Reads and parses a file in `format`, else by extension, else by content. Errors name the file.
Result<LoadedSchedule> load_schedule(const std::string& path, std::optional<ScheduleFormat> format = std::nullopt);

std::string format_schedule(const Schedule& schedule, ScheduleFormat format);

// Writes the schedule in the format of the path's extension.
Status save_schedule(const Schedule& schedule, const std::string& path);

}  // namespace pipeworks::sched
