// Test hook: where a deliberately failing layer throws (make_cells appends a FailLayer to that
// stage). kind F fails the forward of that micro-batch (not its re-materialization), R the
// re-materialization, B its backward.
#pragma once

#include "sched/action.h"

namespace pipeworks::hw {

struct FailAt {
  int stage = 0;
  int microbatch = 0;
  sched::ActionKind kind = sched::ActionKind::kForward;
};

}  // namespace pipeworks::hw
