// Overlap of devices' busy intervals and the slow-down it implies (see contention.h).
#include "sim/engine/contention.h"

#include <algorithm>

namespace pipeworks::sim {
namespace {

// The union of the intervals, sorted and merged.
std::vector<BusyInterval> merged(std::vector<BusyInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const BusyInterval& a, const BusyInterval& b) { return a.start_ns < b.start_ns; });
  std::vector<BusyInterval> out;
  for (const BusyInterval& i : intervals) {
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Time of `own` covered by `others` (sorted, disjoint).
Nanoseconds covered(const BusyInterval& own, const std::vector<BusyInterval>& others) {
  const auto first = std::lower_bound(others.begin(), others.end(), own.start_ns,
                                      [](const BusyInterval& o, Nanoseconds t) { return o.end_ns <= t; });
  Nanoseconds shared = 0;
  for (auto it = first; it != others.end() && it->start_ns < own.end_ns; ++it) {
    shared += std::max<Nanoseconds>(0, std::min(own.end_ns, it->end_ns) - std::max(own.start_ns, it->start_ns));
  }
  return shared;
}

}  // namespace

std::vector<double> overlap_fractions(const std::vector<std::vector<BusyInterval>>& busy,
                                      const std::vector<int>& group) {
  const std::size_t devices = busy.size();
  const auto group_of = [&](std::size_t d) { return d < group.size() ? group[d] : 0; };
  std::vector<double> fractions(devices, 0.0);
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<BusyInterval> others;
    for (std::size_t o = 0; o < devices; ++o) {
      if (o != d && group_of(o) == group_of(d)) others.insert(others.end(), busy[o].begin(), busy[o].end());
    }
    const std::vector<BusyInterval> union_of_others = merged(std::move(others));
    Nanoseconds total = 0;
    Nanoseconds shared = 0;
    for (const BusyInterval& own : busy[d]) {
      if (own.end_ns <= own.start_ns) continue;
      total += own.end_ns - own.start_ns;
      shared += covered(own, union_of_others);
    }
    fractions[d] = total > 0 ? static_cast<double>(shared) / static_cast<double>(total) : 0.0;
  }
  return fractions;
}

bool has_contention(const CostModel& model) {
  return model.num_devices > 1 &&
         std::any_of(model.contention_factor.begin(), model.contention_factor.end(), [](double f) { return f > 1.0; });
}

std::vector<double> contention_slowdowns(const CostModel& model, const std::vector<double>& overlap) {
  std::vector<double> slowdown(overlap.size(), 1.0);
  for (std::size_t d = 0; d < overlap.size() && d < model.contention_factor.size(); ++d) {
    slowdown[d] = 1.0 + (model.contention_factor[d] - 1.0) * overlap[d];
  }
  return slowdown;
}

}  // namespace pipeworks::sim
