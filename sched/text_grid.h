// The step x device picture of a schedule for terminals, from its unit-time execution:
//
//   t:   0  1  2  3  4  5
//   d0: F0 F1  .  . B0 B1
//   d1:  . F0 F1 B0 B1  .
//
// Compute actions take one step; SEND/RECV take none and are not drawn. A device that hosts
// one stage shows `F0`; one hosting several shows the full action (`2F0`). Idle steps are `.`.
#pragma once

#include <string>

#include "sched/schedule.h"

namespace pipeworks::sched {

// Fails when the schedule cannot be executed (see unit_timing).
Result<std::string> render_grid(const Schedule& schedule);

}  // namespace pipeworks::sched
