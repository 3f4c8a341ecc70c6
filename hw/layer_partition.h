// Parses `--partition uniform|N,N,...` (per-stage layer counts) into the simulator's
// Partition, so the run and a prediction cut the model at the same layers. LibTorch-free.
#pragma once

#include <string_view>

#include "sched/result.h"
#include "sim/partition.h"

namespace pipeworks::hw {

// "uniform" (sim::uniform_partition) or K layer counts "3,3,2" summing to the number of layers.
sched::Result<sim::Partition> parse_partition(std::string_view text, int num_layers, int num_stages);

}  // namespace pipeworks::hw
