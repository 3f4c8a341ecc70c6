// What `pipeworks synthesize` prints: the synthesized schedule's step, bubble and per-device peak
// against the cap, the lower bound and the gap to it, the hand-written families under the same
// cap (the best marked), and what the search did.
#pragma once

#include <string>
#include <vector>

#include "sim/synth/synthesis_report.h"

namespace pipeworks::cli {

std::string synthesis_summary(const sim::SynthesisResult& result, const sim::SynthesisInputs& inputs);

// The placements `--search-placement` tried, one line each:
//   placement V (0,1,2,3,3,2,1,0): step 659.19 ms
//   placement loop of 2 (0,1,2,3,0,1,2,3): no schedule fits a memory cap of ...
std::string placement_trials_text(const std::vector<sim::PlacementTrial>& trials);

}  // namespace pipeworks::cli
