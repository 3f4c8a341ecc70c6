// The clocks an executor times its devices with (see action_clock.h).
#include "hw/exec/action_clock.h"

#include <exception>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "hw/model/torch_errors.h"

namespace pipeworks::hw {
sched::Result<std::vector<std::unique_ptr<ActionClock>>> make_action_clocks(const ActionClockFactory& factory,
                                                                            int num_devices,
                                                                            const std::vector<int>& local_devices) {
  std::vector<std::unique_ptr<ActionClock>> clocks(static_cast<std::size_t>(num_devices));
  for (int d : local_devices) {
    auto& clock = clocks[static_cast<std::size_t>(d)];
    if (!factory) {
      clock = std::make_unique<HostClock>();
      continue;
    }
    try {
      clock = factory(d);
    } catch (const std::exception& e) {
      return sched::Error{fmt::format("executor: cannot make the clock of device {}: {}", d, torch_error_message(e))};
    }
    if (!clock) return sched::Error{fmt::format("executor: the clock factory gave no clock for device {}", d)};
  }
  return clocks;
}

}  // namespace pipeworks::hw
