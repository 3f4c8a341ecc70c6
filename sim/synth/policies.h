// The parameter settings of the list rule (list_rule.h) the search starts from: per-stage
// in-flight limits and W deferrals between 1F1B's and ZB-H2's, each clipped to what the memory
// cap allows, so every schedule they build fits it.
//
//   limits      K-s+e for e = 0..16 and powers of two up to K (1F1B's staggered warm-up and
//               more), K, 2K-1, M
//   deferrals   0 (W right after its I), 1, 2, K/2, K, never forced, s (ZB-H1's lag), K-1-s
#pragma once

#include <vector>

#include "sim/synth/list_rule.h"

namespace pipeworks::sim {

// Every distinct setting, in a fixed order; `memory_limits` from in_flight_limits.h.
std::vector<ListPolicy> list_policies(const std::vector<int>& memory_limits, int num_microbatches);

}  // namespace pipeworks::sim
