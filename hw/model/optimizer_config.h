// Which optimizer a run uses (LibTorch-free, so the CLI and run.h can hold it).
#pragma once

#include "sim/spec/optimizer.h"

namespace pipeworks::hw {

// The learning rate a run takes when none is given: Adam's steps are scaled per parameter, so it
// starts an order of magnitude lower than plain SGD.
inline double default_learning_rate(sim::OptimizerKind kind) { return kind == sim::OptimizerKind::kAdam ? 0.001 : 0.01; }

struct OptimizerConfig {
  sim::OptimizerKind kind = sim::OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;  // kMomentum only
};

}  // namespace pipeworks::hw
