// Schedules that are another one in disguise (see schedule_notes.h).
#include "sched/schedule_notes.h"

namespace pipeworks::sched {

std::optional<std::string> degenerate_schedule_note(ScheduleKind kind, int virtual_stages) {
  if (kind == ScheduleKind::kInterleaved1F1B && virtual_stages == 1) {
    return "interleaved-1f1b with one virtual stage per device interleaves nothing: it runs 1F1B's order with "
           "Megatron's interleaved warm-up (2 (K - d - 1) forwards on device d before its first backward), as fast "
           "as 1f1b for more activation memory; give --virtual-stages 2 or more, or use 1f1b";
  }
  return std::nullopt;
}

}  // namespace pipeworks::sched
