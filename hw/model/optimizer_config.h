// Which optimizer a run uses (LibTorch-free, so the CLI and run.h can hold it).
#pragma once

#include "sim/optimizer.h"

namespace pipeworks::hw {

struct OptimizerConfig {
  sim::OptimizerKind kind = sim::OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;  // kMomentum only
};

}  // namespace pipeworks::hw
