// The per-stage in-flight limits a memory cap allows (in_flight_limits.h).
#include "sim/synth/in_flight_limits.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/schedule.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

// min(M, floor(room / each)) per micro-batch, M when each is 0; room >= each was checked.
int limit(Bytes room, Bytes each, int num_microbatches) {
  const Bytes fit = each > 0 ? room / each : num_microbatches;
  return static_cast<int>(std::min<Bytes>(fit, num_microbatches));
}

// "its stage holds" on a device of one stage, "its stages 0, 7 hold" on a shared one.
std::string holders(const std::vector<int>& placement, int device) {
  const std::vector<int> stages = stages_on_device(placement, device);
  if (stages.size() == 1) return "its stage holds";
  return fmt::format("its stages {} hold", fmt::join(stages, ", "));
}

// One micro-batch's bytes on every stage of the device (its hold: device_memory.h).
Bytes one_of_each(const DeviceMemory& memory, int device) {
  Bytes sum = 0;
  for (const int s : stages_on_device(memory.device_of, device)) sum += memory.hold_bytes[static_cast<std::size_t>(s)];
  return sum;
}

// The error for device d where not one micro-batch fits (the first such device).
sched::Error no_fit(const CostModel& costs, const DeviceMemory& memory, const std::vector<Bytes>& caps_bytes,
                    int d, bool recompute) {
  const auto i = static_cast<std::size_t>(d);
  const std::vector<int>& placement = memory.device_of;
  Bytes stash = 0;
  for (const int s : stages_on_device(placement, d)) {
    stash = std::max(stash, costs.stages[static_cast<std::size_t>(s)].stash_bytes);
  }
  if (!recompute) {
    return sched::Error{fmt::format(
        "no schedule fits a memory cap of {} on device {}: {} {} of parameters, gradients and optimizer state, and "
        "one micro-batch's activations take {} more",
        format_bytes(caps_bytes.at(i)), d, holders(placement, d), format_bytes(memory.static_bytes[i]),
        format_bytes(one_of_each(memory, d)))};
  }
  return sched::Error{fmt::format(
      "no schedule fits a memory cap of {} on device {}, even re-materializing: {} {} of parameters, gradients and "
      "optimizer state, one micro-batch's activations take {} and its stage input {}",
      format_bytes(caps_bytes.at(i)), d, holders(placement, d), format_bytes(memory.static_bytes[i]),
      format_bytes(stash), format_bytes(one_of_each(memory, d)))};
}

sched::Result<std::vector<int>> limits_of(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                          int num_microbatches, const std::vector<int>& placement, bool recompute) {
  const DeviceMemory memory = device_memory(costs, caps_bytes, placement, recompute);
  std::vector<int> limits;
  for (std::size_t s = 0; s < placement.size(); ++s) {
    const auto d = static_cast<std::size_t>(placement[s]);
    const Bytes room = memory.room_bytes[d] - memory.reserve_bytes[s];
    if (room < memory.hold_bytes[s] || memory.room_bytes[d] < 0) {
      return no_fit(costs, memory, caps_bytes, placement[s], recompute);
    }
    limits.push_back(limit(room, memory.hold_bytes[s], num_microbatches));
  }
  return limits;
}

std::vector<int> stage_on_own_device(const CostModel& costs) {
  return sched::identity_placement(static_cast<int>(costs.stages.size()));
}

}  // namespace

sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches) {
  return limits_of(costs, caps_bytes, num_microbatches, stage_on_own_device(costs), false);
}

sched::Result<std::vector<int>> recompute_in_flight_limits(const CostModel& costs,
                                                           const std::vector<Bytes>& caps_bytes,
                                                           int num_microbatches) {
  return limits_of(costs, caps_bytes, num_microbatches, stage_on_own_device(costs), true);
}

sched::Result<std::vector<int>> in_flight_limits(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                                                 int num_microbatches, const std::vector<int>& placement,
                                                 bool recompute) {
  return limits_of(costs, caps_bytes, num_microbatches, placement, recompute);
}

}  // namespace pipeworks::sim
