// The engine's "cannot progress" text (see stuck_message.h).
#include "sim/engine/stuck_message.h"

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

// "3F2 on device 1" for an op id.
std::string describe(const OpTable& table, const sched::Schedule& schedule, std::int32_t op) {
  const auto it = std::upper_bound(table.device_begin.begin(), table.device_begin.end(), op);
  const auto d = static_cast<std::size_t>(it - table.device_begin.begin() - 1);
  const auto p = static_cast<std::size_t>(op - table.device_begin[d]);
  return fmt::format("{} on device {}", sched::to_string(schedule.programs[d][p]), d);
}

}  // namespace

std::string stuck_message(const StuckState& state, const OpTable& table, const sched::Schedule& schedule) {
  std::string text;
  for (std::size_t d = 0; d + 1 < table.device_begin.size(); ++d) {
    const std::int32_t p = state.cursor[d];
    if (p >= table.device_begin[d + 1]) continue;
    const std::int32_t w = state.waiting_on[d];
    const std::int32_t peer = table.peer(static_cast<std::size_t>(p));
    std::string why;
    if (w == p && peer >= 0) {
      why = fmt::format("waits for its partner {}", describe(table, schedule, peer));
    } else if (w >= 0) {
      why = fmt::format("waits for {}", describe(table, schedule, w));
    }
    text += fmt::format("{}device {} blocked at position {} ({}) {}", text.empty() ? "" : "; ", d,
                        p - table.device_begin[d], sched::to_string(schedule.programs[d][static_cast<std::size_t>(
                                                                          p - table.device_begin[d])]),
                        why);
  }
  if (text.empty()) {  // every program ran, but a posted transfer never found its partner
    for (std::size_t i = 0; i < table.size(); ++i) {
      if (!state.ended[i]) {
        text = fmt::format("the transfer of {} never started", describe(table, schedule, static_cast<std::int32_t>(i)));
        break;
      }
    }
  }
  return text;
}

}  // namespace pipeworks::sim
