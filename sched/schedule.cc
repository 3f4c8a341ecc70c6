// Small queries over a Schedule and placement resolution for generators.
#include "sched/schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/limits.h"
#include "sched/placement.h"

namespace pipeworks::sched {

bool Schedule::has_comm() const {
  return std::any_of(programs.begin(), programs.end(), [](const Program& p) {
    return std::any_of(p.begin(), p.end(), [](const Action& a) { return is_comm(a.kind); });
  });
}

bool Schedule::has_recompute() const {
  return std::any_of(programs.begin(), programs.end(), [](const Program& p) {
    return std::any_of(p.begin(), p.end(), [](const Action& a) { return a.kind == ActionKind::kRecompute; });
  });
}

bool Schedule::has_stage_level() const {
  return std::any_of(programs.begin(), programs.end(), [](const Program& p) {
    return std::any_of(p.begin(), p.end(), [](const Action& a) { return is_stage_level(a.kind); });
  });
}

std::size_t Schedule::num_actions() const {
  std::size_t n = 0;
  for (const Program& p : programs) n += p.size();
  return n;
}

std::vector<int> identity_placement(int num_stages) {
  std::vector<int> placement(static_cast<std::size_t>(std::max(num_stages, 0)));
  for (int s = 0; s < num_stages; ++s) placement[static_cast<std::size_t>(s)] = s;
  return placement;
}

std::vector<int> peak_in_flight(const Schedule& schedule) {
  const std::size_t stages = static_cast<std::size_t>(std::max(schedule.num_stages, 0));
  std::vector<int> held(stages, 0);
  std::vector<int> peak(stages, 0);
  for (const Program& program : schedule.programs) {
    for (const Action& a : program) {
      if (a.stage < 0 || static_cast<std::size_t>(a.stage) >= stages) continue;
      const auto s = static_cast<std::size_t>(a.stage);
      if (a.kind == ActionKind::kForward) peak[s] = std::max(peak[s], ++held[s]);
      if (a.kind == ActionKind::kBackward || a.kind == ActionKind::kBackwardWeight) --held[s];
    }
  }
  return peak;
}

Result<std::vector<int>> resolve_placement(const ScheduleShape& shape) {
  if (auto size = check_schedule_size(shape.num_stages, shape.num_microbatches); !size) return size.error();
  if (shape.placement.empty()) return identity_placement(shape.num_stages);
  // A shape's devices are the ones its placement names, 0 up to the largest, and K stages can
  // keep at most K of them busy.
  const int largest = *std::max_element(shape.placement.begin(), shape.placement.end());
  const auto devices = std::min<std::int64_t>(std::int64_t{std::max(largest, 0)} + 1, shape.num_stages);
  auto problems = placement_problems(shape.placement, shape.num_stages, static_cast<int>(devices));
  if (!problems.empty()) return Error{std::move(problems.front().message)};
  return shape.placement;
}

}  // namespace pipeworks::sched
