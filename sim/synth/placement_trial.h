// One placement the search tried and how it fared (placement_search.h), a value of its own so
// that the report (synthesis_report.h) can list the trials without the search's headers.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

struct PlacementCandidate {
  std::string name;            // "one per device", "V", "loop of 2"
  std::vector<int> placement;  // stage -> device
};

// Its step where the search found a schedule that fits, else why not.
struct PlacementTrial {
  PlacementCandidate candidate;
  Nanoseconds step_ns = 0;  // 0 where `error` says why there is none
  std::string error;
};

}  // namespace pipeworks::sim
