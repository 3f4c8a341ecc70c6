// One sort and one scan: after ordering by memory, a point is on the frontier exactly when it is
// faster than everything that needs no more memory.
#include "sim/plan/pareto.h"

#include <algorithm>
#include <cmath>

namespace pipeworks::sim {

std::vector<std::size_t> pareto_frontier(const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> order;
  order.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].samples_per_s)) order.push_back(i);
  }
  // Memory ascending; at equal memory the fastest first, then the lowest index.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].peak_bytes != points[b].peak_bytes) return points[a].peak_bytes < points[b].peak_bytes;
    if (points[a].samples_per_s != points[b].samples_per_s) return points[a].samples_per_s > points[b].samples_per_s;
    return a < b;
  });
  std::vector<std::size_t> frontier;
  for (const std::size_t i : order) {
    if (frontier.empty() || points[i].samples_per_s > points[frontier.back()].samples_per_s) frontier.push_back(i);
  }
  return frontier;
}

}  // namespace pipeworks::sim
