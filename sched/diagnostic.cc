// Diagnostic names and the marked program grid (see diagnostic.h).
#include "sched/diagnostic.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

constexpr std::array<std::string_view, kNumDiagnosticKinds> kKindNames = {
    "bad-shape",        "bad-placement",       "out-of-range",     "duplicate",
    "wrong-count",      "wrong-device",        "stage-on-two-devices",
    "backward-before-forward",                 "weight-before-input",
    "mixed-backward",   "recompute-before-forward",                "orphan-recompute",
    "unmatched-send",   "unmatched-recv",      "local-comm",       "missing-comm",
    "comm-order",       "deadlock"};

// Programs or device lists longer than this are cut to a window around the marked cell.
constexpr int kFullColumns = 16;
constexpr int kColumnsAround = 6;
constexpr int kFullRows = 16;
constexpr int kRowsAround = 4;

struct Window {
  int begin = 0;
  int end = 0;  // exclusive
};

Window window_around(int focus, int size, int full, int around) {
  if (size <= full) return {0, size};
  const int begin = std::clamp(focus - around, 0, std::max(size - 2 * around - 1, 0));
  return {begin, std::min(size, begin + 2 * around + 1)};
}

enum class Mark { kNone, kPrimary, kRelated };

}  // namespace

std::string_view diagnostic_kind_name(DiagnosticKind kind) {
  return kKindNames.at(static_cast<std::size_t>(kind));
}

std::string render(const Schedule& schedule, const Diagnostic& diagnostic) {
  const int num_devices = schedule.num_devices();
  if (num_devices == 0) return "(no device programs)\n";
  int focus_device = diagnostic.device;
  int focus_position = diagnostic.position;
  if (focus_device < 0 && diagnostic.stage >= 0 && diagnostic.stage < static_cast<int>(schedule.placement.size())) {
    focus_device = schedule.placement[static_cast<std::size_t>(diagnostic.stage)];
  }
  if (focus_device >= num_devices) focus_device = -1;
  if (focus_position < 0 && !diagnostic.related.empty()) {
    focus_device = diagnostic.related.front().device;
    focus_position = diagnostic.related.front().position;
  }
  std::size_t longest = 0;
  for (const Program& p : schedule.programs) longest = std::max(longest, p.size());
  const Window rows = window_around(std::max(focus_device, 0), num_devices, kFullRows, kRowsAround);
  const Window cols = window_around(std::max(focus_position, 0), static_cast<int>(longest), kFullColumns, kColumnsAround);

  auto mark_of = [&](int d, int p) {
    if (d == diagnostic.device && p == diagnostic.position) return Mark::kPrimary;
    const bool related = std::any_of(diagnostic.related.begin(), diagnostic.related.end(),
                                     [&](const Location& l) { return l.device == d && l.position == p; });
    return related ? Mark::kRelated : Mark::kNone;
  };

  std::size_t width = fmt::formatted_size("{}", std::max(cols.end - 1, 0));
  for (int d = rows.begin; d < rows.end; ++d) {
    const Program& program = schedule.programs[static_cast<std::size_t>(d)];
    for (int p = cols.begin; p < std::min(cols.end, static_cast<int>(program.size())); ++p) {
      width = std::max(width, to_string(program[static_cast<std::size_t>(p)]).size());
    }
  }
  const std::size_t label = fmt::formatted_size("d{}", num_devices - 1);
  const bool cut_left = cols.begin > 0;
  const bool cut_right = cols.end < static_cast<int>(longest);

  std::string out = fmt::format("  {:<{}} {}", "", label, cut_left ? "..." : "");
  for (int p = cols.begin; p < cols.end; ++p) out += fmt::format(" {:>{}} ", p, width);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += '\n';
  if (rows.begin > 0) out += fmt::format("  {:<{}}\n", "...", label);
  for (int d = rows.begin; d < rows.end; ++d) {
    const Program& program = schedule.programs[static_cast<std::size_t>(d)];
    const bool row_marked = diagnostic.position < 0 && d == focus_device && diagnostic.related.empty();
    out += fmt::format("{} {:<{}} {}", row_marked ? '>' : ' ', fmt::format("d{}", d), label, cut_left ? "..." : "");
    for (int p = cols.begin; p < cols.end; ++p) {
      if (p >= static_cast<int>(program.size())) {
        out += fmt::format(" {:>{}} ", "", width);
        continue;
      }
      const std::string token = to_string(program[static_cast<std::size_t>(p)]);
      const Mark mark = mark_of(d, p);
      const std::string cell = mark == Mark::kPrimary   ? fmt::format("[{}]", token)
                               : mark == Mark::kRelated ? fmt::format("<{}>", token)
                                                        : fmt::format("{} ", token);
      out += fmt::format("{:>{}}", cell, width + 2);
    }
    if (cut_right && cols.end < static_cast<int>(program.size())) out += "...";
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  if (rows.end < num_devices) out += fmt::format("  {:<{}}\n", "...", label);
  return out;
}

}  // namespace pipeworks::sched
