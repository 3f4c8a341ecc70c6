// Small queries over a Schedule and placement resolution for generators.
#include "sched/schedule.h"

#include <algorithm>

#include <fmt/format.h>

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

Result<std::vector<int>> resolve_placement(const ScheduleShape& shape) {
  if (shape.num_stages < 1) return Error{fmt::format("number of stages must be at least 1, got {}", shape.num_stages)};
  if (shape.num_microbatches < 1) {
    return Error{fmt::format("number of micro-batches must be at least 1, got {}", shape.num_microbatches)};
  }
  if (shape.placement.empty()) return identity_placement(shape.num_stages);
  if (static_cast<int>(shape.placement.size()) != shape.num_stages) {
    return Error{fmt::format("placement names {} stages but the schedule has {}", shape.placement.size(),
                             shape.num_stages)};
  }
  const int max_device = *std::max_element(shape.placement.begin(), shape.placement.end());
  const int min_device = *std::min_element(shape.placement.begin(), shape.placement.end());
  if (min_device < 0) return Error{fmt::format("placement has a negative device index {}", min_device)};
  std::vector<bool> used(static_cast<std::size_t>(max_device) + 1, false);
  for (int d : shape.placement) used[static_cast<std::size_t>(d)] = true;
  for (int d = 0; d <= max_device; ++d) {
    if (!used[static_cast<std::size_t>(d)]) {
      return Error{fmt::format("placement leaves device {} without a stage (devices must be 0..{})", d, max_device)};
    }
  }
  return shape.placement;
}

}  // namespace pipeworks::sched
