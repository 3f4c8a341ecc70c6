// A program as the files write it: a row of cells, each one action (`2F0`, `0UNSHARD`) or one
// composite of two (`(0F3;3B1)OVERLAP_F_B`, composite.h). The CSV and JSON readers and writers and
// the diagnostic grid share these rules.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched {

// One cell read from a file: `size` actions (1, or 2 for a composite) and the 0-based column
// where each one's text starts in the cell.
struct ParsedCell {
  std::array<Action, 2> actions{};
  std::array<std::size_t, 2> columns{};
  int size = 1;
};

// parse_action, or parse_composite for a token that starts with '('.
Result<ParsedCell> parse_cell(std::string_view token);

// How the action at one position of a program is written.
enum class CellPart : std::uint8_t {
  kWhole,   // a cell of its own
  kFirst,   // the first sub-action of a composite
  kSecond,  // the second sub-action of a composite
};

// How many actions the cell starting at a position of this part holds: a composite's two, else one.
constexpr std::size_t cell_size(CellPart part) { return part == CellPart::kFirst ? 2 : 1; }

// Appends the `size` actions of `from` starting at `begin` (one cell) to device `device`'s
// program `to`, and a Composite mark where they land when they are a composite's two: how every
// pass that rewrites a program keeps a composite one cell.
void append_cell(const Program& from, std::size_t begin, std::size_t size, int device, Program& to,
                 std::vector<Composite>& marks);

// Per device and position of `schedule`, its CellPart. A Composite mark counts when it names two
// positions of its device's program that no earlier mark took; validate reports the others
// (kBadComposite), and every reader of the marks skips them alike.
std::vector<std::vector<CellPart>> cell_parts(const Schedule& schedule);
// The same for one device's program (the diagnostic grid draws a few rows).
std::vector<CellPart> cell_parts(const Schedule& schedule, int device);

// The cells of `program`, whose parts are `parts` (one of cell_parts' rows), in order.
std::vector<std::string> program_cells(const Program& program, const std::vector<CellPart>& parts);

}  // namespace pipeworks::sched
