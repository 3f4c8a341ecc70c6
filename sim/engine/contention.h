// Devices that share a machine slow each other down while they compute at the same time (CPU
// pipeline workers share cores, caches and memory bandwidth). The simulator applies a measured
// factor only to the share of a device's compute that overlaps another device of its group: a
// worker alone in a bubble runs at the speed measured alone.
//
//   d0 |==F0==|==F1==|.......|==B1==|==B0==|     overlap(d0) = time d0 computes while d1 does
//   d1        |==F0==|==F1==|==B1==|==B0==|                    / time d0 computes
//             <------ shared ------>
//   slowdown(d) = 1 + (factor(d) - 1) x overlap(d); every compute op of d takes slowdown(d) x
//   its cost. The overlap moves once ops are slower, so simulate() refines it: simulate at full
//   speed, slow each device by its overlap, simulate again, kContentionRounds times.
#pragma once

#include <vector>

#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

inline constexpr int kContentionRounds = 2;

struct BusyInterval {
  Nanoseconds start_ns = 0;
  Nanoseconds end_ns = 0;
};

// Per device: the share of its busy time during which another device of the same group is busy
// too (0 when it is never busy). `busy[d]` may be unsorted; `group` empty: one group.
std::vector<double> overlap_fractions(const std::vector<std::vector<BusyInterval>>& busy,
                                      const std::vector<int>& group);

// True when some device's factor is above 1 and there are at least two devices.
bool has_contention(const CostModel& model);

// Per device: 1 + (factor - 1) x overlap (1 where the model has no factor).
std::vector<double> contention_slowdowns(const CostModel& model, const std::vector<double>& overlap);

}  // namespace pipeworks::sim
