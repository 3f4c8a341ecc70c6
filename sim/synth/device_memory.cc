// A device's cap shared by its stages (device_memory.h).
#include "sim/synth/device_memory.h"

#include <algorithm>

namespace pipeworks::sim {

std::vector<int> stages_on_device(const std::vector<int>& placement, int device) {
  std::vector<int> stages;
  for (std::size_t s = 0; s < placement.size(); ++s) {
    if (placement[s] == device) stages.push_back(static_cast<int>(s));
  }
  return stages;
}

DeviceMemory device_memory(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                           const std::vector<int>& placement, bool recompute) {
  DeviceMemory out;
  out.device_of = placement;
  out.room_bytes = caps_bytes;
  out.static_bytes.assign(caps_bytes.size(), 0);
  std::vector<Bytes> largest_stash(caps_bytes.size(), 0);
  for (std::size_t s = 0; s < placement.size(); ++s) {
    const StageCost& c = costs.stages[s];
    const auto d = static_cast<std::size_t>(placement[s]);
    out.static_bytes[d] += c.param_bytes + c.grad_bytes + c.optimizer_bytes;
    largest_stash[d] = std::max(largest_stash[d], c.stash_bytes);
    out.hold_bytes.push_back(recompute ? c.input_bytes : c.stash_bytes);
  }
  for (std::size_t d = 0; d < out.room_bytes.size(); ++d) {
    out.room_bytes[d] -= out.static_bytes[d] + (recompute ? largest_stash[d] : 0);
  }
  out.reserve_bytes.assign(placement.size(), 0);
  for (std::size_t s = placement.size(); s-- > 0;) {
    for (std::size_t j = s + 1; j < placement.size(); ++j) {
      if (placement[j] == placement[s]) {
        out.reserve_bytes[s] = out.hold_bytes[j] + out.reserve_bytes[j];
        break;
      }
    }
  }
  return out;
}

}  // namespace pipeworks::sim
