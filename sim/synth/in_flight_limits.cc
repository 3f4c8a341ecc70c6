// The per-stage in-flight limits a memory cap allows (in_flight_limits.h).
#include "sim/synth/in_flight_limits.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

Bytes static_bytes(const StageCost& c) { return c.param_bytes + c.grad_bytes + c.optimizer_bytes; }

// min(M, floor(room / each)) per micro-batch, M when each is 0; room >= each was checked.
int limit(Bytes room, Bytes each, int num_microbatches) {
  const Bytes fit = each > 0 ? room / each : num_microbatches;
  return static_cast<int>(std::min<Bytes>(fit, num_microbatches));
}

}  // namespace

sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches) {
  std::vector<int> limits;
  for (std::size_t s = 0; s < costs.stages.size(); ++s) {
    const StageCost& c = costs.stages[s];
    const Bytes cap = caps_bytes.at(s);
    const Bytes room = cap - static_bytes(c);
    if (room < c.stash_bytes || room < 0) {
      return sched::Error{fmt::format(
          "no schedule fits a memory cap of {} on device {}: its stage holds {} of parameters, gradients and "
          "optimizer state, and one micro-batch's activations take {} more",
          format_bytes(cap), s, format_bytes(static_bytes(c)), format_bytes(c.stash_bytes))};
    }
    limits.push_back(limit(room, c.stash_bytes, num_microbatches));
  }
  return limits;
}

sched::Result<std::vector<int>> recompute_in_flight_limits(const CostModel& costs,
                                                           const std::vector<Bytes>& caps_bytes,
                                                           int num_microbatches) {
  std::vector<int> limits;
  for (std::size_t s = 0; s < costs.stages.size(); ++s) {
    const StageCost& c = costs.stages[s];
    const Bytes cap = caps_bytes.at(s);
    const Bytes room = cap - static_bytes(c) - c.stash_bytes;
    if (room < c.input_bytes || room < 0) {
      return sched::Error{fmt::format(
          "no schedule fits a memory cap of {} on device {}, even re-materializing: its stage holds {} of "
          "parameters, gradients and optimizer state, one micro-batch's activations take {} and its stage input {}",
          format_bytes(cap), s, format_bytes(static_bytes(c)), format_bytes(c.stash_bytes),
          format_bytes(c.input_bytes))};
    }
    limits.push_back(limit(room, c.input_bytes, num_microbatches));
  }
  return limits;
}

}  // namespace pipeworks::sim
