// The JSON of a ScheduleReplay (stage_replay.h), as `run --predict --json` writes it under
// "cost_model"/"stage_replay" (docs/accuracy.md):
//   {"rounds": N, "device_contention": [per device],
//    "stages": [per stage {"forward_ns", "recompute_ns", "backward_ns",            (alone)
//                          "first_forward_ns", "first_recompute_ns", "first_backward_ns",
//                          "resumed_forward_ns", "resumed_recompute_ns", "resumed_backward_ns"}]}
// each timing as {"median", "min", "max"} in nanoseconds.
#pragma once

#include <nlohmann/json.hpp>

#include "hw/predict/stage_replay.h"

namespace pipeworks::hw {

nlohmann::json replay_json(const ScheduleReplay& replay);

}  // namespace pipeworks::hw
