// What `pipeworks run --predict` prints about the stage replay (hw/predict/stage_replay.h): each
// stage's F, R and B in schedule order with their spread, and each device's contention. Its JSON
// is hw::replay_json (hw/predict/stage_replay_json.h).
#pragma once

#include <string>

#include "hw/predict/stage_replay.h"

namespace pipeworks::cli {

std::string replay_summary(const hw::ScheduleReplay& replay);

}  // namespace pipeworks::cli
