// Whether a run's measured steps fall into two modes, a fast and a slow one: the signature of
// the machine or of the workers' placement (two workers sharing a core for a while), not of the
// schedule, so a report must say so rather than average over it (bench/README.md, "accuracy").
//
//   sorted steps (ms):  26.3 26.5 26.9 27.1 27.4 27.7 | 41.5 41.9
//                                                    ^ the widest gap between neighbours; two
//   modes when it is over kModeGap of the step below it and each side holds kModeSteps or more.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/run/run.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

inline constexpr double kModeGap = 0.25;
inline constexpr int kModeSteps = 2;

struct StepModes {
  int fast_steps = 0;
  sched::Nanoseconds fast_min_ns = 0;
  sched::Nanoseconds fast_max_ns = 0;
  int slow_steps = 0;
  sched::Nanoseconds slow_min_ns = 0;
  sched::Nanoseconds slow_max_ns = 0;
};

// None when the steps make one mode (or are too few to tell).
std::optional<StepModes> two_modes(std::vector<sched::Nanoseconds> steps);

// "steps fall into two modes: 26.30 ms-27.70 ms (6 steps) and 41.50 ms-41.90 ms (2 steps)".
std::string describe(const StepModes& modes);

// The modes of a run's measured steps: every step but the first, which warms up (as the run's
// mean leaves it out).
std::optional<StepModes> run_step_modes(const std::vector<StepStats>& steps);

}  // namespace pipeworks::hw
