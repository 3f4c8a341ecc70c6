// What `pipeworks run --predict` prints while it works: the plan's headline, the profiler's
// lines and summary, a line per measured step (warm-ups marked) and the stage replay's summary.
#pragma once

#include "hw/predict/run_prediction.h"
#include "hw/run/run.h"

namespace pipeworks::cli {

// Progress lines on standard output as each phase of hw::run_with_prediction happens; `warmup`
// is --warmup's count (the steps after a stage-replay round are marked too).
hw::PredictionObserver printing_observer(const hw::RunConfig& c, int warmup);

}  // namespace pipeworks::cli
