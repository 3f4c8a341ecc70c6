// The executor's preconditions on its inputs (see executor_inputs.h).
#include "hw/exec/executor_inputs.h"

#include <fmt/format.h>

#include "hw/exec/counting_allocator.h"
#include "hw/exec/schedule_checks.h"

namespace pipeworks::hw {

sched::Status check_executor_inputs(const sched::Schedule& schedule, const std::vector<StageCell>& cells,
                                    const ExecutorOptions& options) {
  if (auto status = check_executable(schedule); !status) return sched::Error{"executor: " + status.error().message};
  const int k = schedule.num_stages;
  if (static_cast<int>(cells.size()) != k) {
    return sched::Error{fmt::format("executor: {} cells for {} stages", cells.size(), k)};
  }
  for (int s = 0; s < k; ++s) {
    const StageCell& c = cells[static_cast<std::size_t>(s)];
    if (c.stage != s || c.device != schedule.device_of(s) || c.is_last != (s + 1 == k)) {
      return sched::Error{fmt::format("executor: cell {} is stage {} on device {}, the schedule has stage {} on "
                                      "device {}",
                                      s, c.stage, c.device, s, schedule.device_of(s))};
    }
  }
  if (options.measure_memory && schedule.num_devices() > kMaxCountedDevices) {
    return sched::Error{fmt::format("executor: memory is counted for at most {} devices", kMaxCountedDevices)};
  }
  if (options.only_device && (*options.only_device < 0 || *options.only_device >= schedule.num_devices())) {
    return sched::Error{fmt::format("executor: only_device {} is not one of the {} devices", *options.only_device,
                                    schedule.num_devices())};
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
