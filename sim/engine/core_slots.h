// Workers that share a CPU node's cores: at most `slots` of a group's devices compute at once,
// the others wait for one to finish (the simulator serialises them rather than slowing them, as
// an OS does with compute actions shorter than its time slice). Each group holds the times its
// slots become free; a compute action takes the earliest, first come first served:
//
//   2 devices, 1 slot:   d0 |F0|F1|   |B1|B0|        start = max(ready, earliest slot free)
//                        d1    ...|F0|F1|B1|  |B0|   the slot is then free from its end
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::sim {

class CoreSlots {
 public:
  CoreSlots() = default;
  // `groups` groups of `slots` slots each, all free from time 0.
  CoreSlots(std::size_t groups, int slots)
      : slots_(static_cast<std::size_t>(slots)), free_(groups * static_cast<std::size_t>(slots), 0) {}

  // When an action ready at `ready` on `group` starts: at `ready` or when a slot frees up.
  sched::Nanoseconds start(std::size_t group, sched::Nanoseconds ready) const {
    return std::max(ready, *earliest(group));
  }
  // The action takes the group's earliest-free slot until `end` (end >= start(group, ...)).
  void hold(std::size_t group, sched::Nanoseconds end) { *earliest(group) = end; }

 private:
  std::vector<sched::Nanoseconds>::iterator earliest(std::size_t group) {
    const auto first = free_.begin() + static_cast<std::ptrdiff_t>(group * slots_);
    return std::min_element(first, first + static_cast<std::ptrdiff_t>(slots_));
  }
  std::vector<sched::Nanoseconds>::const_iterator earliest(std::size_t group) const {
    const auto first = free_.begin() + static_cast<std::ptrdiff_t>(group * slots_);
    return std::min_element(first, first + static_cast<std::ptrdiff_t>(slots_));
  }

  std::size_t slots_ = 0;
  std::vector<sched::Nanoseconds> free_;  // per group, its slots' free times
};

}  // namespace pipeworks::sim
