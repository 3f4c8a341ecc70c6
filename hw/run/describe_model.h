// A model's shape as the simulator sees it (sim::ModelSpec): the bytes each layer keeps, measured
// once with the counting allocator. A measurement, so it lives above the model room.
#pragma once

#include "hw/model/model_zoo.h"
#include "sched/result.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::hw {

// The model in the simulator's shape: per layer its name, parameter bytes, output bytes and
// stash bytes (activations held from forward to backward) per sample. Bytes are measured by
// running each layer once on `probe_batch` samples under the counting allocator; times are left
// 0 (the profiler measures them).
sched::Result<sim::ModelSpec> describe_model(const Model& model, int probe_batch = 2);

}  // namespace pipeworks::hw
