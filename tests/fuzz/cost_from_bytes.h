// Cost models decoded from fuzz bytes for the simulator harness: per-stage costs (including
// first-of-step and resume costs and every memory figure), device capacities, links (some
// shared by several senders, as a node's egress link is), comm mode and dispatch overhead.
#pragma once

#include "sim/engine/cost_model.h"
#include "tests/fuzz/byte_source.h"

namespace pipeworks::fuzz {

struct CostShape {
  int num_stages = 1;   // >= 1
  int num_devices = 1;  // >= 1
  // Costs range up to the cost model's limit (2^50) and bandwidths down to a byte per second,
  // so sums may overflow and the simulator must say so; otherwise every total stays far inside
  // its range.
  bool huge = false;
  // Some device pairs may have no link (a schedule sending between them cannot simulate).
  bool missing_links = false;
};

sim::CostModel cost_model_from_bytes(ByteSource& bytes, const CostShape& shape);

}  // namespace pipeworks::fuzz
