// Diagnostic names and the marked program grid (see diagnostic.h).
#include "sched/diagnostic.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "sched/cells.h"

namespace pipeworks::sched {
namespace {

constexpr std::array<std::string_view, kNumDiagnosticKinds> kKindNames = {
    "bad-shape",        "bad-placement",       "out-of-range",     "duplicate",
    "wrong-count",      "wrong-device",        "stage-on-two-devices",
    "backward-before-forward",                 "weight-before-input",
    "mixed-backward",   "recompute-before-forward",                "orphan-recompute",
    "unmatched-send",   "unmatched-recv",      "local-comm",       "missing-comm",
    "comm-order",       "deadlock",            "bad-composite",    "shard-order",
    "sharded-compute",  "reduce-grad-order"};

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

// The action's token, opened with '(' or closed with ')' when it is a composite's sub-action.
std::string cell_token(const Action& action, CellPart part) {
  const std::string token = to_string(action);
  if (part == CellPart::kFirst) return "(" + token;
  if (part == CellPart::kSecond) return token + ")";
  return token;
}

}  // namespace

std::string_view diagnostic_kind_name(DiagnosticKind kind) {
  return kKindNames.at(static_cast<std::size_t>(kind));
}

namespace {

// The cell the grid centres on: the diagnostic's own, else its first related cell, else (device
// of its stage, -1).
Location focus_of(const Schedule& schedule, const Diagnostic& diagnostic) {
  Location focus{diagnostic.device, diagnostic.position};
  if (focus.device < 0 && diagnostic.stage >= 0 && diagnostic.stage < static_cast<int>(schedule.placement.size())) {
    focus.device = schedule.placement[static_cast<std::size_t>(diagnostic.stage)];
  }
  if (focus.device >= schedule.num_devices()) focus.device = -1;
  if (focus.position < 0 && !diagnostic.related.empty()) focus = diagnostic.related.front();
  return focus;
}

// The tokens of the window's cells, per row of `rows` and column of `cols` that the program has.
std::vector<std::vector<std::string>> window_tokens(const Schedule& schedule, Window rows, Window cols) {
  std::vector<std::vector<std::string>> tokens;
  for (int d = rows.begin; d < rows.end; ++d) {
    const Program& program = schedule.programs[static_cast<std::size_t>(d)];
    const std::vector<CellPart> parts = cell_parts(schedule, d);
    std::vector<std::string>& row = tokens.emplace_back();
    for (int p = cols.begin; p < std::min(cols.end, static_cast<int>(program.size())); ++p) {
      row.push_back(cell_token(program[static_cast<std::size_t>(p)], parts[static_cast<std::size_t>(p)]));
    }
  }
  return tokens;
}

}  // namespace

std::string render(const Schedule& schedule, const Diagnostic& diagnostic) {
  const int num_devices = schedule.num_devices();
  if (num_devices == 0) return "(no device programs)\n";
  const Location focus = focus_of(schedule, diagnostic);
  std::size_t longest = 0;
  for (const Program& p : schedule.programs) longest = std::max(longest, p.size());
  const Window rows = window_around(std::max(focus.device, 0), num_devices, kFullRows, kRowsAround);
  const Window cols = window_around(std::max(focus.position, 0), static_cast<int>(longest), kFullColumns, kColumnsAround);

  auto mark_of = [&](int d, int p) {
    if (d == diagnostic.device && p == diagnostic.position) return Mark::kPrimary;
    const bool related = std::any_of(diagnostic.related.begin(), diagnostic.related.end(),
                                     [&](const Location& l) { return l.device == d && l.position == p; });
    return related ? Mark::kRelated : Mark::kNone;
  };

  const std::vector<std::vector<std::string>> tokens = window_tokens(schedule, rows, cols);
  std::size_t width = fmt::formatted_size("{}", std::max(cols.end - 1, 0));
  for (const auto& row : tokens) {
    for (const std::string& token : row) width = std::max(width, token.size());
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
    const std::vector<std::string>& row = tokens[static_cast<std::size_t>(d - rows.begin)];
    const bool row_marked = diagnostic.position < 0 && d == focus.device && diagnostic.related.empty();
    out += fmt::format("{} {:<{}} {}", row_marked ? '>' : ' ', fmt::format("d{}", d), label, cut_left ? "..." : "");
    for (int p = cols.begin; p < cols.end; ++p) {
      const auto c = static_cast<std::size_t>(p - cols.begin);
      if (c >= row.size()) {
        out += fmt::format(" {:>{}} ", "", width);
        continue;
      }
      const Mark mark = mark_of(d, p);
      const std::string cell = mark == Mark::kPrimary   ? fmt::format("[{}]", row[c])
                               : mark == Mark::kRelated ? fmt::format("<{}>", row[c])
                                                        : fmt::format("{} ", row[c]);
      out += fmt::format("{:>{}}", cell, width + 2);
    }
    if (cut_right && cols.end < static_cast<int>(schedule.programs[static_cast<std::size_t>(d)].size())) out += "...";
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  if (rows.end < num_devices) out += fmt::format("  {:<{}}\n", "...", label);
  return out;
}

}  // namespace pipeworks::sched
