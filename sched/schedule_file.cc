// Loading and saving schedule files by extension or content (see schedule_file.h).
#include "sched/schedule_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/csv_io.h"
#include "sched/json_io.h"
#include "sched/text_file.h"

namespace pipeworks::sched {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), text.rbegin(),
                    [](char x, char y) { return x == (y >= 'A' && y <= 'Z' ? static_cast<char>(y - 'A' + 'a') : y); });
}

}  // namespace

std::string_view schedule_format_name(ScheduleFormat format) { return format == ScheduleFormat::kCsv ? "csv" : "json"; }

Result<ScheduleFormat> parse_schedule_format(std::string_view name) {
  if (name == "csv") return ScheduleFormat::kCsv;
  if (name == "json") return ScheduleFormat::kJson;
  return Error{fmt::format("unknown schedule format '{}' (expected csv or json)", name)};
}

Result<ScheduleFormat> format_from_extension(std::string_view path) {
  if (ends_with(path, ".csv")) return ScheduleFormat::kCsv;
  if (ends_with(path, ".json")) return ScheduleFormat::kJson;
  return Error{fmt::format("{}: cannot tell the schedule format from the extension (expected .csv or .json)", path)};
}

Result<LoadedSchedule> parse_schedule(std::string_view text, std::string_view source_name,
                                      std::optional<ScheduleFormat> format) {
  if (!format) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    format = first != std::string_view::npos && text[first] == '{' ? ScheduleFormat::kJson : ScheduleFormat::kCsv;
  }
  return *format == ScheduleFormat::kJson ? parse_json(text, source_name) : parse_csv(text, source_name);
}

Result<LoadedSchedule> load_schedule(const std::string& path, std::optional<ScheduleFormat> format) {
  auto text = read_text_file(path, std::max(kMaxCsvBytes, kMaxJsonBytes));
  if (!text) return text.error();
  if (!format) {
    if (auto by_extension = format_from_extension(path)) format = *by_extension;
  }
  return parse_schedule(*text, path, format);
}

std::string format_schedule(const Schedule& schedule, ScheduleFormat format) {
  return format == ScheduleFormat::kJson ? to_json(schedule) : to_csv(schedule);
}

Status save_schedule(const Schedule& schedule, const std::string& path) {
  auto format = format_from_extension(path);
  if (!format) return format.error();
  return write_text_file(path, format_schedule(schedule, *format));
}

}  // namespace pipeworks::sched
