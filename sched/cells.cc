// Reading and writing cells, the files' unit of a program (see cells.h).
#include "sched/cells.h"

namespace pipeworks::sched {

Result<ParsedCell> parse_cell(std::string_view token) {
  ParsedCell cell;
  if (is_composite_token(token)) {
    auto composite = parse_composite(token);
    if (!composite) return composite.error();
    cell.actions = composite->actions;
    cell.columns = composite->columns;
    cell.size = 2;
    return cell;
  }
  auto action = parse_action(token);
  if (!action) return action.error();
  cell.actions[0] = *action;
  return cell;
}

namespace {

// Marks the composite's two positions in its device's `row`, unless they are not both free.
void mark(const Composite& c, std::vector<CellPart>& row) {
  if (c.position < 0) return;
  const auto p = static_cast<std::size_t>(c.position);
  if (p + 1 >= row.size() || row[p] != CellPart::kWhole || row[p + 1] != CellPart::kWhole) return;
  row[p] = CellPart::kFirst;
  row[p + 1] = CellPart::kSecond;
}

}  // namespace

std::vector<std::vector<CellPart>> cell_parts(const Schedule& schedule) {
  std::vector<std::vector<CellPart>> parts(schedule.programs.size());
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) parts[d].assign(schedule.programs[d].size(), CellPart::kWhole);
  for (const Composite& c : schedule.composites) {
    if (c.device >= 0 && static_cast<std::size_t>(c.device) < parts.size()) mark(c, parts[static_cast<std::size_t>(c.device)]);
  }
  return parts;
}

std::vector<CellPart> cell_parts(const Schedule& schedule, int device) {
  if (device < 0 || device >= schedule.num_devices()) return {};
  std::vector<CellPart> row(schedule.programs[static_cast<std::size_t>(device)].size(), CellPart::kWhole);
  for (const Composite& c : schedule.composites) {
    if (c.device == device) mark(c, row);
  }
  return row;
}

std::vector<std::string> program_cells(const Program& program, const std::vector<CellPart>& parts) {
  std::vector<std::string> cells;
  cells.reserve(program.size());
  for (std::size_t p = 0; p < program.size(); ++p) {
    if (p + 1 < program.size() && p < parts.size() && parts[p] == CellPart::kFirst) {
      cells.push_back(composite_text(program[p], program[p + 1]));
      ++p;
    } else {
      cells.push_back(to_string(program[p]));
    }
  }
  return cells;
}

void append_cell(const Program& from, std::size_t begin, std::size_t size, int device, Program& to,
                 std::vector<Composite>& marks) {
  if (size == 2) marks.push_back({device, static_cast<int>(to.size())});
  to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(begin),
            from.begin() + static_cast<std::ptrdiff_t>(begin + size));
}

}  // namespace pipeworks::sched
