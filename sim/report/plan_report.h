// A plan as people read it: the chosen configuration as a summary table, then one line per
// runner-up family with its verdict. When nothing fits, the closest configuration and why.
//
//   best: 8 stages, 64 micro-batches of 8 samples, 1f1b, recompute off
//     step time     3.06 s
//     ...
//   runners-up:
//     gpipe, recompute off  slower by 3.1% (...), mostly bubble: ...
//     1 stage               does not fit: device 0 needs 1.2 TiB, ...
#pragma once

#include <string>

#include "sim/plan/planner.h"

namespace pipeworks::sim {

std::string plan_report(const Plan& plan);

}  // namespace pipeworks::sim
