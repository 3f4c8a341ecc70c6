// The per-stage in-flight limits a memory cap allows (in_flight_limits.h).
#include "sim/synth/in_flight_limits.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/spec/units.h"

namespace pipeworks::sim {

sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches) {
  std::vector<int> limits;
  for (std::size_t s = 0; s < costs.stages.size(); ++s) {
    const StageCost& c = costs.stages[s];
    const Bytes static_bytes = c.param_bytes + c.grad_bytes + c.optimizer_bytes;
    const Bytes cap = caps_bytes.at(s);
    const Bytes room = cap - static_bytes;
    if (room < c.stash_bytes || room < 0) {
      return sched::Error{fmt::format(
          "no schedule fits a memory cap of {} on device {}: its stage holds {} of parameters, gradients and "
          "optimizer state, and one micro-batch's activations take {} more",
          format_bytes(cap), s, format_bytes(static_bytes), format_bytes(c.stash_bytes))};
    }
    const Bytes fit = c.stash_bytes > 0 ? room / c.stash_bytes : num_microbatches;
    limits.push_back(static_cast<int>(std::min<Bytes>(fit, num_microbatches)));
  }
  return limits;
}

}  // namespace pipeworks::sim
