// What a generator's parameters make of its schedule when that is not what its name promises,
// said once here for every command that generates one (simulate, sweep, plan, run):
//
//   interleaved-1f1b, v = 1, K = 4, M = 8:   d0: F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 ...
//   1f1b,                    K = 4, M = 8:   d0: F0 F1 F2 F3 B0 F4 B1 F5 ...
//
// Megatron's interleaved warm-up, 2 (K - d - 1) forwards on device d before its first backward,
// keeps twice 1F1B's in flight when there is nothing to interleave: the same step, more memory.
#pragma once

#include <optional>
#include <string>

#include "sched/generators.h"

namespace pipeworks::sched {

// One sentence, or none when the schedule is what its kind says.
std::optional<std::string> degenerate_schedule_note(ScheduleKind kind, int virtual_stages);

}  // namespace pipeworks::sched
