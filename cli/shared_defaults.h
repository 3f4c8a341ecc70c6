// The defaults every command shares for the same idea, so that what `simulate` predicts is the
// configuration `run` measures when neither is told otherwise. scripts/cli_flags.py --check
// (a ctest test) fails when two commands' --help show different defaults for one flag.
#pragma once

#include "sim/spec/batch_split.h"

namespace pipeworks::cli {

inline constexpr const char* kDefaultSchedule = "1f1b";
inline constexpr int kDefaultStages = 4;
inline constexpr int kDefaultMicrobatches = 8;
// --batch when not given: this many samples per micro-batch (sim/spec/batch_split.h).
using sim::kDefaultSamplesPerMicrobatch;
inline constexpr const char* kDefaultOptimizer = "adam";
inline constexpr const char* kDefaultPartition = "uniform";

}  // namespace pipeworks::cli
