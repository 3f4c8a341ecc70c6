// What the executor requires of a Schedule before it runs one: per (stage, micro-batch) one F,
// the backward as one B or as one I and one W, at most one R, a SEND/RECV pair for every
// dependency that crosses devices (run sched::lower_comm first), and a program order that can
// make progress. Checked up front so a bad schedule is an error, never a hang.
#pragma once

#include "sched/schedule.h"

namespace pipeworks::hw {

sched::Status check_executable(const sched::Schedule& schedule);

}  // namespace pipeworks::hw
