// Renders the unit-time step x device grid of a schedule (see text_grid.h for the picture).
#include "sched/text_grid.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/unit_timing.h"

namespace pipeworks::sched {

namespace {

using Cells = std::vector<std::vector<std::string>>;  // [row][step]

// ">F0" for a send, "<B1" for a receive; the stage first on a device with several stages.
std::string comm_mark(const Action& a, bool with_stage) {
  const char* what = a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvF ? "F" : "B";
  return fmt::format("{}{}{}{}", with_stage ? std::to_string(a.stage) : "", is_send(a.kind) ? ">" : "<", what,
                     a.microbatch);
}

void add_mark(std::string& cell, const std::string& mark) { cell += (cell.empty() ? "" : ",") + mark; }

// Device d's transfers in the step of the compute they follow (sends) or precede (receives),
// in program order; a receive after the device's last compute goes with that compute.
void place_comm(const Program& program, const std::vector<std::int64_t>& start, bool with_stage,
                std::vector<std::string>& row) {
  std::int64_t last_compute = -1;
  std::vector<std::string> waiting;  // receives for the next compute
  const auto cell = [&](std::int64_t step) -> std::string& {
    return row[static_cast<std::size_t>(std::max<std::int64_t>(step, 0))];
  };
  for (std::size_t p = 0; p < program.size(); ++p) {
    const Action& a = program[p];
    if (is_compute(a.kind)) {
      last_compute = start[p];
      for (const std::string& mark : waiting) add_mark(cell(last_compute), mark);
      waiting.clear();
    } else if (is_send(a.kind)) {
      add_mark(cell(last_compute), comm_mark(a, with_stage));
    } else if (is_recv(a.kind)) {
      waiting.push_back(comm_mark(a, with_stage));
    }
  }
  for (const std::string& mark : waiting) add_mark(cell(last_compute), mark);
}

std::string format_rows(const Cells& cells, const std::vector<std::string>& labels, std::size_t steps) {
  std::size_t width = std::max<std::size_t>(1, fmt::formatted_size("{}", steps == 0 ? 0 : steps - 1));
  std::size_t head = 3;
  for (const auto& row : cells) {
    for (const std::string& cell : row) width = std::max(width, cell.size());
  }
  for (const std::string& label : labels) head = std::max(head, label.size());
  std::string out = fmt::format("{:<{}}", "t:", head);
  for (std::size_t t = 0; t < steps; ++t) out += fmt::format(" {:>{}}", t, width);
  out += '\n';
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::string line = fmt::format("{:<{}}", labels[r], head);
    for (std::size_t t = 0; t < steps; ++t) line += fmt::format(" {:>{}}", cells[r][t], width);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

Status check_grid_cells(const Schedule& schedule, const UnitTiming& timing) {
  const std::int64_t rows = std::int64_t{schedule.num_devices()} * (schedule.has_comm() ? 2 : 1);
  const std::int64_t cells = rows * timing.num_steps;
  if (cells <= kMaxGridCells) return Ok{};
  return Error{fmt::format("the grid would have {} rows x {} steps = {} cells, beyond the largest grid drawn ({} "
                           "cells); CSV and JSON have no such limit",
                           rows, timing.num_steps, cells, kMaxGridCells)};
}

}  // namespace

Status check_grid_size(const Schedule& schedule) {
  auto timing = unit_timing(schedule);
  if (!timing) return timing.error();
  return check_grid_cells(schedule, *timing);
}

Result<std::string> render_grid(const Schedule& schedule) {
  auto timing = unit_timing(schedule);
  if (!timing) return timing.error();
  if (auto size = check_grid_cells(schedule, *timing); !size) return size.error();
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  const bool comm = schedule.has_comm();
  std::vector<int> stages_on(num_devices, 0);
  for (int device : schedule.placement) {
    if (device >= 0 && static_cast<std::size_t>(device) < num_devices) ++stages_on[static_cast<std::size_t>(device)];
  }
  const auto steps = static_cast<std::size_t>(timing->num_steps);
  Cells cells;
  std::vector<std::string> labels;
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    std::vector<std::string> row(steps, ".");
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      if (!is_compute(a.kind)) continue;
      row[static_cast<std::size_t>(timing->start[d][p])] =
          stages_on[d] > 1 ? to_string(a) : fmt::format("{}{}", kind_name(a.kind), a.microbatch);
    }
    cells.push_back(std::move(row));
    labels.push_back(fmt::format("d{}:", d));
    if (!comm) continue;
    std::vector<std::string> transfers(steps);
    if (steps > 0) place_comm(program, timing->start[d], stages_on[d] > 1, transfers);
    cells.push_back(std::move(transfers));
    labels.emplace_back("");
  }
  std::string out = format_rows(cells, labels, steps);
  if (comm) out += "(under each device: >F0 sent after that step, <B0 received before it)\n";
  return out;
}

}  // namespace pipeworks::sched
