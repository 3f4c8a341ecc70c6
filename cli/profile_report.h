// What `pipeworks profile` and `pipeworks run --predict` print about a profile: per layer and
// size the timings with their spread, the hand-off, dispatch and contention figures, the notes.
#pragma once

#include <string>

#include "hw/predict/profiler.h"

namespace pipeworks::cli {

std::string profile_summary(const hw::Profile& profile);

}  // namespace pipeworks::cli
