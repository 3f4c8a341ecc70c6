// `pipeworks run --partition balanced`: the cells are cut by the simulator's balanced
// partitioner over a model spec (--model-spec, e.g. from `pipeworks profile`), resolved to
// per-stage layer counts before the run starts so every run path cuts the same layers.
// LibTorch-free header.
#pragma once

#include <string>

#include "hw/run.h"
#include "sched/result.h"

namespace pipeworks::cli {

// When config.partition is "balanced": loads `model_spec_path` (an error saying a model spec is
// needed when it is empty), cuts with hw::run_partition and rewrites config.partition as the
// layer counts ("3,3,2"); returns the counts. Any other partition is left as it is.
sched::Result<std::string> resolve_run_partition(hw::RunConfig& config, const std::string& model_spec_path);

}  // namespace pipeworks::cli
