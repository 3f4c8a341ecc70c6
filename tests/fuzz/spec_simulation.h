// Where a parsed spec goes next: partition, cost model, GPipe schedule, lowering, simulation.
// The spec harnesses run it so that whatever a spec file says (huge sizes, tiny speeds) either
// becomes an error value on the way or a sane simulation; the sanitizers catch an overflow.
#pragma once

#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::fuzz {

// A 4-device cluster (2 per node, NVLink-like inside, Ethernet-like between) and an 8-layer
// model with ordinary costs: the fixed partner of the spec under test.
sim::ClusterSpec reference_cluster();
sim::ModelSpec reference_model();

// For 1 and up to 4 stages, micro-batch sizes 1 and 4096, uniform and balanced partitions:
// builds the cost model and simulates lowered GPipe with 3 micro-batches when every step
// succeeds. A balanced partition is refused for memory only when a device has a capacity; a
// simulation that succeeds has makespan >= 0, bubbles in [0, 1] and each device's memory peak
// >= its static part.
void simulate_specs(const sim::ModelSpec& model, const sim::ClusterSpec& cluster);

}  // namespace pipeworks::fuzz
