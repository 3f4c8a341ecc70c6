// What `pipeworks run --predict` prints and writes about the stage replay (hw/stage_replay.h):
// each stage's F, R and B in schedule order with their spread, and each device's contention.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hw/stage_replay.h"

namespace pipeworks::cli {

std::string replay_summary(const hw::ScheduleReplay& replay);

// {"rounds", "stages": [{"forward_ns", "recompute_ns", "backward_ns"} as {median, min, max}],
//  "device_contention": [...]} (docs/accuracy.md)
nlohmann::json replay_json(const hw::ScheduleReplay& replay);

}  // namespace pipeworks::cli
