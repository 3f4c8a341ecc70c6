// Interleaved 1F1B and looped BFS device programs, and the looped placement and chunk rounds every
// virtual-stage kind shares (see virtual_stages.h).
#include "sched/virtual_stages.h"

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

struct Layout {
  int devices = 1;  // p
  int chunks = 1;   // v
  int microbatches = 1;
};

// Checks the shape and returns p, v and M: the looped placement, M a multiple of p.
Result<Layout> layout_of(const ScheduleShape& shape, int v) {
  auto p = looped_devices(shape, v);
  if (!p) return p.error();
  if (shape.num_microbatches % *p != 0) {
    return Error{fmt::format("{} micro-batches is not a multiple of the {} devices", shape.num_microbatches, *p)};
  }
  return Layout{*p, v, shape.num_microbatches};
}

}  // namespace

Result<int> looped_devices(const ScheduleShape& shape, int virtual_stages) {
  auto resolved = resolve_placement(ScheduleShape{shape.num_stages, shape.num_microbatches, {}});
  if (!resolved) return resolved.error();
  if (virtual_stages < 1 || shape.num_stages % virtual_stages != 0) {
    return Error{fmt::format("{} stages cannot be cut into {} virtual stages per device", shape.num_stages,
                             virtual_stages)};
  }
  const int p = shape.num_stages / virtual_stages;
  for (int s = 0; s < static_cast<int>(shape.placement.size()); ++s) {
    if (shape.placement[static_cast<std::size_t>(s)] != s % p) {
      return Error{fmt::format("virtual stages place stage s on device s mod {}; the placement puts stage {} on {}", p,
                               s, shape.placement[static_cast<std::size_t>(s)])};
    }
  }
  return p;
}

Schedule looped_schedule(const ScheduleShape& shape, int num_devices) {
  Schedule schedule;
  schedule.num_stages = shape.num_stages;
  schedule.num_microbatches = shape.num_microbatches;
  for (int s = 0; s < shape.num_stages; ++s) schedule.placement.push_back(s % num_devices);
  schedule.programs.assign(static_cast<std::size_t>(num_devices), {});
  return schedule;
}

Action interleaved_action(const ChunkRounds& rounds, int r, int k, ActionKind kind) {
  const int group = rounds.round * rounds.chunks;
  const int chunk_in_order = (k % group) / rounds.round;
  const int chunk = kind == ActionKind::kForward ? chunk_in_order : rounds.chunks - 1 - chunk_in_order;
  const int microbatch = (k / group) * rounds.round + k % rounds.round;
  return Action{chunk * rounds.devices + r, kind, microbatch};
}

Result<Schedule> interleaved_1f1b(const ScheduleShape& shape, int virtual_stages) {
  auto layout = layout_of(shape, virtual_stages);
  if (!layout) return layout.error();
  const Layout& l = *layout;
  Schedule schedule = looped_schedule(shape, l.devices);
  const int total = l.microbatches * l.chunks;
  for (int r = 0; r < l.devices; ++r) {
    Program& program = schedule.programs[static_cast<std::size_t>(r)];
    const int warmup = std::min(2 * (l.devices - 1 - r) + (l.chunks - 1) * l.devices, total);
    const ChunkRounds megatron{l.devices, l.chunks, l.devices};  // chunks advance every p micro-batches
    const auto f = [&](int k) { return interleaved_action(megatron, r, k, ActionKind::kForward); };
    const auto b = [&](int k) { return interleaved_action(megatron, r, k, ActionKind::kBackward); };
    for (int k = 0; k < warmup; ++k) program.push_back(f(k));
    for (int k = 0; k + warmup < total; ++k) {
      program.push_back(f(warmup + k));
      program.push_back(b(k));
    }
    for (int k = total - warmup; k < total; ++k) program.push_back(b(k));
  }
  return schedule;
}

Result<Schedule> looped_bfs(const ScheduleShape& shape, int virtual_stages) {
  auto layout = layout_of(shape, virtual_stages);
  if (!layout) return layout.error();
  const Layout& l = *layout;
  Schedule schedule = looped_schedule(shape, l.devices);
  for (int r = 0; r < l.devices; ++r) {
    Program& program = schedule.programs[static_cast<std::size_t>(r)];
    for (int c = 0; c < l.chunks; ++c) {
      for (int m = 0; m < l.microbatches; ++m) program.push_back({c * l.devices + r, ActionKind::kForward, m});
    }
    for (int c = l.chunks - 1; c >= 0; --c) {
      for (int m = l.microbatches - 1; m >= 0; --m) program.push_back({c * l.devices + r, ActionKind::kBackward, m});
    }
  }
  return schedule;
}

}  // namespace pipeworks::sched
