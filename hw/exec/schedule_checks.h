// What the executor requires of a Schedule before it runs one: every F and B exactly once per
// (stage, micro-batch), at most one R, no split backward (I/W), a SEND/RECV pair for every
// dependency that crosses devices (run sched::lower_comm first), and a program order that can
// make progress. Checked up front so a bad schedule is an error, never a hang.
#pragma once

#include "sched/schedule.h"

namespace pipeworks::hw {

sched::Status check_executable(const sched::Schedule& schedule);

}  // namespace pipeworks::hw
