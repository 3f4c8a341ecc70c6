// The step x device picture of a Timeline for a terminal (`pipeworks simulate --grid`): one
// column per time slot, one row per device, idle slots as '.', so bubbles show at a glance.
#pragma once

#include <string>

#include "sched/timeline.h"

namespace pipeworks::viz {

//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0: F0 F1 F2 F3  .  .  .  .  .  . B0 B1 B2 B3
//   d1:  . F0 F1 F2 F3  .  .  .  . B0 B1 B2 B3  .
//   1 slot = 1 ms; . = idle; makespan 14 ms, bubble 42.9%
//
// Only compute-lane actions are drawn; where a device runs more than one stage (interleaved,
// V-shaped) each cell names its stage too, "2F3", as `pipeworks schedule` does. The slot is the greatest common divisor of all compute
// span boundaries (after rebasing to the first span), so unit-cost schedules print one cell per
// action; an action longer than a slot continues as "--". If that needs more slots than fit in
// 4 blocks of `max_width` columns (measured times rarely share a divisor), the slot becomes the
// shortest action, and if still too many, k slots are merged into one (compressed). Inexact
// cells show the action covering most of them. A grid wider than `max_width` is folded into
// blocks of columns. The footer says which of these happened.
std::string terminal_grid(const sched::Timeline& timeline, int max_width = 160);

}  // namespace pipeworks::viz
