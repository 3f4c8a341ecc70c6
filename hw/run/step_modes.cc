// Two modes among a run's steps (see step_modes.h).
#include "hw/run/step_modes.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/units_text.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {

std::optional<StepModes> two_modes(std::vector<sched::Nanoseconds> steps) {
  std::sort(steps.begin(), steps.end());
  const auto n = static_cast<int>(steps.size());
  int split = -1;  // first step of the slow side
  double widest = kModeGap;
  for (int i = kModeSteps; i + kModeSteps <= n; ++i) {
    const auto below = static_cast<double>(steps[static_cast<std::size_t>(i - 1)]);
    if (below <= 0) continue;
    const double gap = static_cast<double>(steps[static_cast<std::size_t>(i)]) / below - 1;
    if (gap > widest) {
      widest = gap;
      split = i;
    }
  }
  if (split < 0) return std::nullopt;
  const auto s = static_cast<std::size_t>(split);
  return StepModes{split, steps.front(), steps[s - 1], n - split, steps[s], steps.back()};
}

std::optional<StepModes> run_step_modes(const std::vector<StepStats>& steps) {
  std::vector<sched::Nanoseconds> measured;
  for (std::size_t i = 1; i < steps.size(); ++i) measured.push_back(steps[i].step_ns);
  return two_modes(std::move(measured));
}

std::string describe(const StepModes& m) {
  const auto range = [](sched::Nanoseconds lo, sched::Nanoseconds hi, int count) {
    return fmt::format("{}-{} ({})", sim::format_duration(lo), sim::format_duration(hi), sched::counted(count, "step"));
  };
  return fmt::format("steps fall into two modes: {} and {}", range(m.fast_min_ns, m.fast_max_ns, m.fast_steps),
                     range(m.slow_min_ns, m.slow_max_ns, m.slow_steps));
}

}  // namespace pipeworks::hw
