// Interleaved 1F1B and looped BFS device programs (see virtual_stages.h).
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

// Checks the shape and returns p, v and M; the placement is s mod p.
Result<Layout> layout_of(const ScheduleShape& shape, int v) {
  auto resolved = resolve_placement(ScheduleShape{shape.num_stages, shape.num_microbatches, {}});
  if (!resolved) return resolved.error();
  if (v < 1 || shape.num_stages % v != 0) {
    return Error{fmt::format("{} stages cannot be cut into {} virtual stages per device", shape.num_stages, v)};
  }
  const int p = shape.num_stages / v;
  if (shape.num_microbatches % p != 0) {
    return Error{fmt::format("{} micro-batches is not a multiple of the {} devices", shape.num_microbatches, p)};
  }
  for (int s = 0; s < static_cast<int>(shape.placement.size()); ++s) {
    if (shape.placement[static_cast<std::size_t>(s)] != s % p) {
      return Error{fmt::format("virtual stages place stage s on device s mod {}; the placement puts stage {} on {}", p,
                               s, shape.placement[static_cast<std::size_t>(s)])};
    }
  }
  return Layout{p, v, shape.num_microbatches};
}

Schedule empty_schedule(const ScheduleShape& shape, const Layout& l) {
  Schedule schedule;
  schedule.num_stages = shape.num_stages;
  schedule.num_microbatches = shape.num_microbatches;
  for (int s = 0; s < shape.num_stages; ++s) schedule.placement.push_back(s % l.devices);
  schedule.programs.assign(static_cast<std::size_t>(l.devices), {});
  return schedule;
}

// Megatron's k-th forward (or backward) of device r: chunks advance every p micro-batches.
Action megatron_action(const Layout& l, int r, int k, bool forward) {
  const int group = l.devices * l.chunks;
  const int chunk_in_order = (k % group) / l.devices;
  const int chunk = forward ? chunk_in_order : l.chunks - 1 - chunk_in_order;
  const int microbatch = (k / group) * l.devices + k % l.devices;
  return Action{chunk * l.devices + r, forward ? ActionKind::kForward : ActionKind::kBackward, microbatch};
}

}  // namespace

Result<Schedule> interleaved_1f1b(const ScheduleShape& shape, int virtual_stages) {
  auto layout = layout_of(shape, virtual_stages);
  if (!layout) return layout.error();
  const Layout& l = *layout;
  Schedule schedule = empty_schedule(shape, l);
  const int total = l.microbatches * l.chunks;
  for (int r = 0; r < l.devices; ++r) {
    Program& program = schedule.programs[static_cast<std::size_t>(r)];
    const int warmup = std::min(2 * (l.devices - 1 - r) + (l.chunks - 1) * l.devices, total);
    for (int k = 0; k < warmup; ++k) program.push_back(megatron_action(l, r, k, true));
    for (int k = 0; k + warmup < total; ++k) {
      program.push_back(megatron_action(l, r, warmup + k, true));
      program.push_back(megatron_action(l, r, k, false));
    }
    for (int k = total - warmup; k < total; ++k) program.push_back(megatron_action(l, r, k, false));
  }
  return schedule;
}

Result<Schedule> looped_bfs(const ScheduleShape& shape, int virtual_stages) {
  auto layout = layout_of(shape, virtual_stages);
  if (!layout) return layout.error();
  const Layout& l = *layout;
  Schedule schedule = empty_schedule(shape, l);
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
