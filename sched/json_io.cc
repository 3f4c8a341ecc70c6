// Reading and writing the pipeworks.schedule JSON format (see json_io.h).
#include "sched/json_io.h"

#include <algorithm>
#include <array>
#include <climits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sched/cells.h"

namespace pipeworks::sched {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 6> kMembers = {"format",    "version",   "num_stages",
                                                      "num_microbatches", "placement", "programs"};

Error at_pointer(std::string_view source, std::string_view pointer, std::string_view message) {
  return Error{fmt::format("{}: {}: error: {}", source, pointer, message)};
}

Result<int> get_int(const json& value, std::string_view source, const std::string& pointer) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(INT_MAX)) {
      return at_pointer(source, pointer, fmt::format("{} is out of range (at most {})", v, INT_MAX));
    }
    return static_cast<int>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (v < INT_MIN || v > INT_MAX) return at_pointer(source, pointer, fmt::format("{} is out of range", v));
    return static_cast<int>(v);
  }
  return at_pointer(source, pointer, fmt::format("expected an integer, got {}", value.type_name()));
}

// 1-based line and column of byte `offset` (the byte nlohmann reports, 1-based) in `text`. A
// UTF-8 byte order mark (which the parser skips) is no column, as in the CSV reader.
std::pair<int, int> line_column(std::string_view text, std::size_t byte) {
  int line = 1;
  int column = 1;
  const std::size_t first = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  for (std::size_t i = first; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return {line, column};
}

// programs[device] read from `value`: its actions go to the schedule, a composite's mark to its
// composites, and each action's entry index to loaded.entries.
Status get_program(const json& value, std::string_view source, std::size_t device, LoadedSchedule& loaded) {
  const std::string pointer = fmt::format("/programs/{}", device);
  if (!value.is_array()) return at_pointer(source, pointer, fmt::format("expected an array of actions, got {}", value.type_name()));
  Program& program = loaded.schedule.programs.emplace_back();
  std::vector<int>& entries = loaded.entries.emplace_back();
  program.reserve(value.size());
  for (std::size_t p = 0; p < value.size(); ++p) {
    const std::string here = fmt::format("{}/{}", pointer, p);
    const json& token = value[p];
    if (!token.is_string()) return at_pointer(source, here, fmt::format("expected an action string, got {}", token.type_name()));
    auto cell = parse_cell(token.get_ref<const std::string&>());
    if (!cell) {
      return at_pointer(source, here,
                        fmt::format("{} (at character {})", cell.error().message, cell.error().column.value_or(0) + 1));
    }
    if (cell->size == 2) loaded.schedule.composites.push_back({static_cast<int>(device), static_cast<int>(program.size())});
    for (int i = 0; i < cell->size; ++i) {
      program.push_back(cell->actions[static_cast<std::size_t>(i)]);
      entries.push_back(static_cast<int>(p));
    }
  }
  return Ok{};
}

}  // namespace

Result<LoadedSchedule> parse_json(std::string_view text, std::string_view source) {
  if (text.size() > kMaxJsonBytes) {
    return Error{fmt::format("{}: error: file is {} bytes; the largest JSON schedule read is {} bytes", source,
                             text.size(), kMaxJsonBytes)};
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte);
    return Error{fmt::format("{}:{}:{}: error: invalid JSON: {}", source, line, column, e.what())};
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    return Error{fmt::format("{}: error: invalid JSON: {}", source, e.what())};
  }
  if (!doc.is_object()) {
    return at_pointer(source, "(root)", fmt::format("expected an object, got {}", doc.type_name()));
  }
  for (const auto& item : doc.items()) {
    if (std::find(kMembers.begin(), kMembers.end(), item.key()) == kMembers.end()) {
      return at_pointer(source, (json::json_pointer() / item.key()).to_string(),
                        "unknown member (expected format, version, num_stages, num_microbatches, placement, programs)");
    }
  }
  for (std::string_view member : kMembers) {
    if (!doc.contains(member)) return at_pointer(source, fmt::format("/{}", member), "missing member");
  }
  if (!doc["format"].is_string() || doc["format"].get<std::string>() != kScheduleJsonFormat) {
    return at_pointer(source, "/format", fmt::format("expected \"{}\", got {}", kScheduleJsonFormat, doc["format"].dump()));
  }
  auto version = get_int(doc["version"], source, "/version");
  if (!version) return version.error();
  if (*version != kScheduleJsonVersion) {
    return at_pointer(source, "/version", fmt::format("unsupported version {} (this reader knows {})", *version, kScheduleJsonVersion));
  }
  LoadedSchedule loaded;
  loaded.source_name = std::string(source);
  loaded.format = ScheduleFormat::kJson;
  Schedule& schedule = loaded.schedule;
  auto stages = get_int(doc["num_stages"], source, "/num_stages");
  if (!stages) return stages.error();
  auto microbatches = get_int(doc["num_microbatches"], source, "/num_microbatches");
  if (!microbatches) return microbatches.error();
  schedule.num_stages = *stages;
  schedule.num_microbatches = *microbatches;
  const json& placement = doc["placement"];
  if (!placement.is_array()) return at_pointer(source, "/placement", fmt::format("expected an array, got {}", placement.type_name()));
  for (std::size_t s = 0; s < placement.size(); ++s) {
    auto device = get_int(placement[s], source, fmt::format("/placement/{}", s));
    if (!device) return device.error();
    schedule.placement.push_back(*device);
  }
  const json& programs = doc["programs"];
  if (!programs.is_array()) return at_pointer(source, "/programs", fmt::format("expected an array, got {}", programs.type_name()));
  for (std::size_t d = 0; d < programs.size(); ++d) {
    if (auto program = get_program(programs[d], source, d, loaded); !program) return program.error();
  }
  return loaded;
}

std::string to_json(const Schedule& schedule) {
  std::string out = fmt::format(
      "{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"num_stages\": {},\n  \"num_microbatches\": {},\n"
      "  \"placement\": {},\n  \"programs\": [",
      kScheduleJsonFormat, kScheduleJsonVersion, schedule.num_stages, schedule.num_microbatches,
      json(schedule.placement).dump());
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const json cells = program_cells(schedule.programs[d], parts[d]);
    out += fmt::format("{}\n    {}", d == 0 ? "" : ",", cells.dump());
  }
  out += schedule.programs.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace pipeworks::sched
