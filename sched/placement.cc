// The placement rule and its messages (see placement.h).
#include "sched/placement.h"

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::sched {

std::vector<PlacementProblem> placement_problems(const std::vector<int>& placement, int num_stages,
                                                 int num_devices) {
  using Rule = PlacementProblem::Rule;
  std::vector<PlacementProblem> out;
  if (static_cast<int>(placement.size()) != num_stages) {
    out.push_back({Rule::kLength, -1, -1,
                   fmt::format("placement names {} stages but the schedule has {}", placement.size(), num_stages)});
    return out;
  }
  std::vector<bool> hosts_a_stage(static_cast<std::size_t>(std::max(num_devices, 0)), false);
  for (int stage = 0; stage < num_stages; ++stage) {
    const int d = placement[static_cast<std::size_t>(stage)];
    if (d >= 0 && d < num_devices) {
      hosts_a_stage[static_cast<std::size_t>(d)] = true;
    } else {
      out.push_back({Rule::kOffDevices, stage, d,
                     fmt::format("stage {} is placed on device {}, outside 0..{}", stage, d, num_devices - 1)});
    }
  }
  for (int d = 0; d < num_devices; ++d) {
    if (hosts_a_stage[static_cast<std::size_t>(d)]) continue;
    out.push_back({Rule::kIdleDevice, -1, d,
                   fmt::format("placement leaves device {} without a stage (devices must be 0..{})", d,
                               num_devices - 1)});
  }
  return out;
}

Status check_placement(const Schedule& schedule) {
  for (PlacementProblem& p : placement_problems(schedule.placement, schedule.num_stages, schedule.num_devices())) {
    if (p.rule != PlacementProblem::Rule::kIdleDevice) return Error{std::move(p.message)};
  }
  return Ok{};
}

}  // namespace pipeworks::sched
