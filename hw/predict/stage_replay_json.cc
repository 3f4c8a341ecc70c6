// replay_json (see stage_replay_json.h).
#include "hw/predict/stage_replay_json.h"

#include <string>

namespace pipeworks::hw {
namespace {

nlohmann::json timing_json(const Timing& t) { return {{"median", t.median_ns}, {"min", t.min_ns}, {"max", t.max_ns}}; }

// "forward", "recompute", "backward", "backward_input", "backward_weight": a replayed kind's part
// of a key.
std::string kind_key(sched::ActionKind kind) {
  switch (kind) {
    case sched::ActionKind::kForward: return "forward";
    case sched::ActionKind::kRecompute: return "recompute";
    case sched::ActionKind::kBackwardInput: return "backward_input";
    case sched::ActionKind::kBackwardWeight: return "backward_weight";
    default: return "backward";
  }
}

// "", "first_", "resumed_": the condition's prefix of a key.
std::string condition_prefix(ReplayCondition condition) {
  switch (condition) {
    case ReplayCondition::kAlone: return "";
    case ReplayCondition::kFirst: return "first_";
    case ReplayCondition::kResumed: break;
  }
  return "resumed_";
}

}  // namespace

nlohmann::json replay_json(const ScheduleReplay& replay) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageTimes& t : replay.stages) {
    nlohmann::json stage = nlohmann::json::object();
    for (sched::ActionKind kind : kReplayedKinds) {
      for (ReplayCondition condition : kReplayConditions) {
        stage[condition_prefix(condition) + kind_key(kind) + "_ns"] = timing_json((*t.of(kind))[condition]);
      }
    }
    stages.push_back(std::move(stage));
  }
  return {{"rounds", replay.rounds}, {"stages", stages}, {"device_contention", replay.device_contention}};
}

}  // namespace pipeworks::hw
