// The Pareto frontier of throughput against memory: the configurations no other configuration
// beats on both (at least as fast with no more memory, and strictly better on one).
//
//   samples/s
//      |            x  <- frontier (no point is up-left of it)
//      |      x  o
//      |  x  o      o
//      +---------------- peak bytes
#pragma once

#include <cstddef>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::sim {

struct ParetoPoint {
  double samples_per_s = 0;  // higher is better
  sched::Bytes peak_bytes = 0;  // lower is better
};

// Indices of the non-dominated points, ordered by peak_bytes ascending (so throughput rises
// along the result). Of several identical points only the first (lowest index) is kept.
// Points whose throughput is not a finite number are ignored.
std::vector<std::size_t> pareto_frontier(const std::vector<ParetoPoint>& points);

}  // namespace pipeworks::sim
