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

namespace {

// What stage s's device holds beside its stashes and static state at the stage's worst moment:
// its largest temporaries (the first backward's less the gradients it makes, which the static
// state counts), and the gradient of its input it made (the previous stage's output).
Bytes headroom(const CostModel& costs, std::size_t s) {
  const StageCost& c = costs.stages[s];
  const StageExtraBytes& e = c.extra;
  const Bytes input_gradient = s > 0 ? costs.stages[s - 1].output_bytes : 0;
  return std::max({e.first - c.grad_bytes, e.later, e.forward, e.forward_no_grad, Bytes{0}}) + input_gradient;
}

// The rule of device_memory.h, with the executor's bytes (headroom, split_held) or without them.
DeviceMemory memory_by_rule(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                            const std::vector<int>& placement, bool recompute, bool executor) {
  DeviceMemory out;
  out.device_of = placement;
  out.room_bytes = caps_bytes;
  out.static_bytes.assign(caps_bytes.size(), 0);
  out.headroom_bytes.assign(caps_bytes.size(), 0);
  std::vector<Bytes> largest_stash(caps_bytes.size(), 0);
  for (std::size_t s = 0; s < placement.size(); ++s) {
    const StageCost& c = costs.stages[s];
    const auto d = static_cast<std::size_t>(placement[s]);
    out.static_bytes[d] += c.param_bytes + c.grad_bytes + c.optimizer_bytes;
    const Bytes held_for_w = executor ? c.extra.split_held : 0;
    if (executor) out.headroom_bytes[d] = std::max(out.headroom_bytes[d], headroom(costs, s));
    largest_stash[d] = std::max(largest_stash[d], c.stash_bytes + held_for_w);
    out.hold_bytes.push_back(recompute ? c.input_bytes : c.stash_bytes + held_for_w);
  }
  for (std::size_t d = 0; d < out.room_bytes.size(); ++d) {
    out.room_bytes[d] -= out.static_bytes[d] + out.headroom_bytes[d] + (recompute ? largest_stash[d] : 0);
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

// True when every stage has room for one micro-batch beside its device's later stages' reserve.
bool holds_one_each(const DeviceMemory& m) {
  for (std::size_t s = 0; s < m.device_of.size(); ++s) {
    const auto d = static_cast<std::size_t>(m.device_of[s]);
    if (m.room_bytes[d] < 0 || m.room_bytes[d] - m.reserve_bytes[s] < m.hold_bytes[s]) return false;
  }
  return true;
}

}  // namespace

DeviceMemory device_memory(const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                           const std::vector<int>& placement, bool recompute) {
  DeviceMemory with_executor = memory_by_rule(costs, caps_bytes, placement, recompute, true);
  if (holds_one_each(with_executor)) return with_executor;
  return memory_by_rule(costs, caps_bytes, placement, recompute, false);
}

}  // namespace pipeworks::sim
