// A random topological order of a pipeline's actions, decoded from bytes (schedule_from_bytes.h).
#include "tests/fuzz/schedule_from_bytes.h"

#include <algorithm>
#include <vector>

namespace pipeworks::fuzz {
namespace {

using sched::Action;
using sched::ActionKind;

// What (stage, micro-batch) runs, and which of its actions have been placed.
struct Cell {
  bool recompute = false;
  bool split = false;
  bool forward_done = false;
  bool recompute_done = false;
  bool input_backward_done = false;  // B, or I when split
  bool weight_done = false;
};

// Devices of a placement renumbered in order of first use, so that devices 0..D-1 all hold a stage.
int compact_devices(std::vector<int>& placement) {
  std::vector<int> renamed;
  for (int& d : placement) {
    auto it = std::find(renamed.begin(), renamed.end(), d);
    if (it == renamed.end()) it = renamed.insert(renamed.end(), d);
    d = static_cast<int>(it - renamed.begin());
  }
  return static_cast<int>(renamed.size());
}

// The actions of (s, m) whose dependencies have been placed and that are not placed yet.
void ready_actions(const std::vector<Cell>& cells, int k, int s, int m, int num_microbatches,
                   std::vector<Action>& out) {
  const auto at = [&](int stage) -> const Cell& {
    return cells[static_cast<std::size_t>(stage) * static_cast<std::size_t>(num_microbatches) +
                 static_cast<std::size_t>(m)];
  };
  const Cell& c = at(s);
  if (!c.forward_done) {
    if (s == 0 || at(s - 1).forward_done) out.push_back({s, ActionKind::kForward, m});
    return;
  }
  if (c.recompute && !c.recompute_done) {
    out.push_back({s, ActionKind::kRecompute, m});
    return;
  }
  if (!c.input_backward_done) {
    if (s + 1 == k || at(s + 1).input_backward_done) {
      out.push_back({s, c.split ? ActionKind::kBackwardInput : ActionKind::kBackward, m});
    }
    return;
  }
  if (c.split && !c.weight_done) out.push_back({s, ActionKind::kBackwardWeight, m});
}

void mark_done(Cell& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: c.forward_done = true; break;
    case ActionKind::kRecompute: c.recompute_done = true; break;
    case ActionKind::kBackwardWeight: c.weight_done = true; break;
    default: c.input_backward_done = true; break;
  }
}

// 0: never, 1: always, 2: per (stage, micro-batch) from the bytes.
bool choose(int mode, ByteSource& bytes) { return mode == 2 ? bytes.flag() : mode == 1; }

}  // namespace

sched::Schedule valid_schedule_from_bytes(ByteSource& bytes, const ScheduleLimits& limits) {
  sched::Schedule schedule;
  const int k = bytes.small(1, limits.max_stages);
  const int m = bytes.small(1, limits.max_microbatches);
  schedule.num_stages = k;
  schedule.num_microbatches = m;
  const int max_devices = bytes.small(1, k);
  for (int s = 0; s < k; ++s) schedule.placement.push_back(bytes.small(0, max_devices - 1));
  schedule.programs.resize(static_cast<std::size_t>(compact_devices(schedule.placement)));

  const int recompute_mode = bytes.small(0, 2);
  const int split_mode = bytes.small(0, 2);
  std::vector<Cell> cells(static_cast<std::size_t>(k) * static_cast<std::size_t>(m));
  for (Cell& c : cells) {
    c.recompute = choose(recompute_mode, bytes);
    c.split = choose(split_mode, bytes);
  }
  std::vector<Action> ready;
  for (;;) {
    ready.clear();
    for (int s = 0; s < k; ++s) {
      for (int mb = 0; mb < m; ++mb) ready_actions(cells, k, s, mb, m, ready);
    }
    if (ready.empty()) break;
    const Action next = ready[bytes.index(ready.size())];
    schedule.programs[static_cast<std::size_t>(schedule.device_of(next.stage))].push_back(next);
    mark_done(cells[static_cast<std::size_t>(next.stage) * static_cast<std::size_t>(m) +
                    static_cast<std::size_t>(next.microbatch)],
              next.kind);
  }
  return schedule;
}

void mutate_schedule(sched::Schedule& schedule, ByteSource& bytes) {
  const int edits = bytes.small(0, 3);
  for (int e = 0; e < edits && !schedule.programs.empty(); ++e) {
    auto& program = schedule.programs[bytes.index(schedule.programs.size())];
    const int op = bytes.small(0, 9);
    if (op == 7) {
      schedule.num_stages += bytes.small(-1, 1);
      continue;
    }
    if (op == 8) {
      schedule.num_microbatches += bytes.small(-1, 1);
      continue;
    }
    if (op == 9) {
      if (!schedule.placement.empty()) {
        schedule.placement[bytes.index(schedule.placement.size())] = bytes.small(-1, schedule.num_devices());
      }
      continue;
    }
    if (program.empty()) continue;
    const std::size_t i = bytes.index(program.size());
    const std::size_t j = bytes.index(program.size());
    switch (op) {
      case 0: std::swap(program[i], program[j]); break;
      case 1: {
        const Action moved = program[i];
        program.erase(program.begin() + static_cast<std::ptrdiff_t>(i));
        auto& other = schedule.programs[bytes.index(schedule.programs.size())];
        other.insert(other.begin() + static_cast<std::ptrdiff_t>(bytes.index(other.size() + 1)), moved);
        break;
      }
      case 2: program.erase(program.begin() + static_cast<std::ptrdiff_t>(i)); break;
      case 3: {
        const Action copy = program[i];
        program.insert(program.begin() + static_cast<std::ptrdiff_t>(j), copy);
        break;
      }
      case 4: program[i].stage += bytes.small(-1, 1); break;
      case 5: program[i].microbatch += bytes.small(-1, 1); break;
      default:
        program[i].kind = sched::kAllActionKinds[bytes.index(sched::kAllActionKinds.size())];
        break;
    }
  }
}

}  // namespace pipeworks::fuzz
