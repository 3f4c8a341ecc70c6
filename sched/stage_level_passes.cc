// add_reduce_grad and add_unshard_reshard (the rules and pictures are in stage_level_passes.h).
#include "sched/stage_level_passes.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sched/cells.h"

namespace pipeworks::sched {
namespace {

// A program cut into cells: one action, or the two of a composite.
struct Cell {
  std::size_t begin = 0;
  std::size_t size = 1;
};

std::vector<Cell> cells_of(const std::vector<CellPart>& parts) {
  std::vector<Cell> cells;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::size_t size = cell_size(parts[p]);
    cells.push_back({p, size});
    p += size - 1;
  }
  return cells;
}

// An error naming the first action that `refused` says the pass cannot take.
template <class Refused>
Status check_takes(const Schedule& schedule, const char* pass, const char* takes, Refused refused) {
  for (const Program& program : schedule.programs) {
    for (const Action& a : program) {
      if (refused(a.kind)) return Error{fmt::format("{}: the schedule already holds {} (it takes {})", pass, to_string(a), takes)};
    }
  }
  return Ok{};
}

// Rebuilds `schedule` device by device: `emit(d, cells, out, composites)` writes device d's new
// program, and marks where each composite now starts.
template <class Emit>
Schedule rewritten(const Schedule& schedule, Emit emit) {
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  Schedule out = schedule;
  out.composites.clear();
  for (std::size_t d = 0; d < out.programs.size(); ++d) {
    Program program;
    emit(d, cells_of(parts[d]), program, out.composites);
    out.programs[d] = std::move(program);
  }
  return out;
}

// The first `count` distinct stages the cells from `first` on compute, in the order they appear
// (a composite's two stages together, as torch's next_stage_indices takes them).
std::vector<int> next_stages(const Program& program, const std::vector<Cell>& cells, std::size_t first, int count) {
  std::vector<int> stages;
  for (std::size_t c = first; c < cells.size() && static_cast<int>(stages.size()) < count; ++c) {
    for (std::size_t i = cells[c].begin; i < cells[c].begin + cells[c].size; ++i) {
      if (std::find(stages.begin(), stages.end(), program[i].stage) == stages.end()) stages.push_back(program[i].stage);
    }
  }
  return stages;
}

}  // namespace

Result<Schedule> add_reduce_grad(const Schedule& schedule) {
  const auto refused = [](ActionKind k) { return is_comm(k) || k == ActionKind::kReduceGrad; };
  if (auto s = check_takes(schedule, "add_reduce_grad", "no SEND/RECV and no REDUCE_GRAD", refused); !s) {
    return s.error();
  }
  return rewritten(schedule, [&](std::size_t d, const std::vector<Cell>& cells, Program& out,
                                 std::vector<Composite>& marks) {
    const Program& program = schedule.programs[d];
    std::map<int, int> gradients;  // per stage: B and W seen so far
    for (const Cell& cell : cells) {
      append_cell(program, cell.begin, cell.size, static_cast<int>(d), out, marks);
      for (std::size_t i = cell.begin; i < cell.begin + cell.size; ++i) {
        const Action& a = program[i];
        if (is_weight_gradient(a.kind) && ++gradients[a.stage] == schedule.num_microbatches) {
          out.push_back({a.stage, ActionKind::kReduceGrad, 0});
        }
      }
    }
  });
}

Result<Schedule> add_unshard_reshard(const Schedule& schedule, int max_active) {
  if (max_active < 1) return Error{fmt::format("add_unshard_reshard: at most {} stages gathered (>= 1)", max_active)};
  const auto refused = [](ActionKind k) { return is_comm(k) || is_stage_level(k); };
  if (auto s = check_takes(schedule, "add_unshard_reshard", "compute actions only", refused); !s) return s.error();
  return rewritten(schedule, [&](std::size_t d, const std::vector<Cell>& cells, Program& out,
                                 std::vector<Composite>& marks) {
    const Program& program = schedule.programs[d];
    std::set<int> gathered;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::vector<int> next = next_stages(program, cells, c, max_active);
      for (auto it = gathered.begin(); it != gathered.end();) {
        if (std::find(next.begin(), next.end(), *it) != next.end()) {
          ++it;
          continue;
        }
        out.push_back({*it, ActionKind::kReshard, 0});
        it = gathered.erase(it);
      }
      for (const int stage : next) {
        if (gathered.insert(stage).second) out.push_back({stage, ActionKind::kUnshard, 0});
      }
      append_cell(program, cells[c].begin, cells[c].size, static_cast<int>(d), out, marks);
    }
    for (const int stage : gathered) out.push_back({stage, ActionKind::kReshard, 0});
  });
}

}  // namespace pipeworks::sched
