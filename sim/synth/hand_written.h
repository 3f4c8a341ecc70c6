// The hand-written families a synthesized schedule is measured against, on the same costs and
// cap: gpipe, 1f1b, zb-h1 and zb-h2 (its rule run on the stage times, sim/engine/timed_orders.h),
// one stage per device, or the families of the given placement (interleaved, V), evaluated as
// the search evaluates its own candidates; where the search re-materializes, each of them with
// an R before every backward too (sched::add_recompute).
#pragma once

#include <string>
#include <vector>

#include "sched/generators.h"
#include "sim/synth/evaluation.h"

namespace pipeworks::sim {

struct HandWritten {
  sched::ScheduleKind kind = sched::ScheduleKind::kGPipe;
  bool recompute = false;  // an R before every backward
  Evaluation evaluation;
  std::string label() const;  // "1f1b", "1f1b + recompute"
};

// The four families in the order above, then (with `recompute`) the four re-materialized; an
// error when one cannot be generated or simulated. With a `placement` that shares devices, the
// families written for several stages a device whose placement it is instead, in this order:
// interleaved-1f1b, looped-bfs and interleaved-zb (the looped placement s mod p, v = K / p, M a
// multiple of p), zb-v and dualpipe-v (the V placement); those that do not generate on it are
// left out (the list may be empty). One stage per device (empty: stage s on device s): the four.
sched::Result<std::vector<HandWritten>> hand_written_families(int num_stages, int num_microbatches,
                                                              const CostModel& costs,
                                                              const std::vector<Bytes>& caps_bytes,
                                                              bool recompute = false,
                                                              const std::vector<int>& placement = {});

// The family that fits with the shortest step (the first on ties); nullptr when none fits.
const HandWritten* best_fitting(const std::vector<HandWritten>& families);

}  // namespace pipeworks::sim
