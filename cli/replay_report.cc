// Text and JSON of the stage replay (see replay_report.h).
#include "cli/replay_report.h"

#include <fmt/format.h>

#include "sim/units.h"

namespace pipeworks::cli {
namespace {

std::string timing_text(const hw::Timing& t) {
  if (t.median_ns == 0 && t.max_ns == 0) return "-";
  return fmt::format("{} [{} .. {}]", sim::format_duration(t.median_ns), sim::format_duration(t.min_ns),
                     sim::format_duration(t.max_ns));
}

nlohmann::json timing_json(const hw::Timing& t) {
  return {{"median", t.median_ns}, {"min", t.min_ns}, {"max", t.max_ns}};
}

}  // namespace

std::string replay_summary(const hw::ScheduleReplay& replay) {
  std::string out = fmt::format("stage replay in schedule order ({} rounds, each device alone, then all at once)\n",
                                replay.rounds);
  for (std::size_t s = 0; s < replay.stages.size(); ++s) {
    const hw::StageTimes& t = replay.stages[s];
    out += fmt::format("  stage {}: F {}  R {}  B {}\n", s, timing_text(t.forward), timing_text(t.recompute),
                       timing_text(t.backward));
    if (t.forward_first.median_ns > 0) {
      out += fmt::format("           first of a step: F {}  R {}  B {}\n", timing_text(t.forward_first),
                         timing_text(t.recompute_first), timing_text(t.backward_first));
    }
    if (t.forward_resumed.median_ns > 0) {
      out += fmt::format("           after a {} sleep: F {}  R {}  B {}\n",
                         sim::format_duration(std::chrono::nanoseconds(hw::kResumePause).count()),
                         timing_text(t.forward_resumed), timing_text(t.recompute_resumed),
                         timing_text(t.backward_resumed));
    }
  }
  for (std::size_t d = 0; d < replay.device_contention.size(); ++d) {
    out += fmt::format("  device {}: compute {} alone", d, sim::format_duration(replay.device_alone[d].median_ns));
    if (d < replay.device_together.size()) {
      out += fmt::format(", {} with every device at once: contention {:.3f}x",
                         sim::format_duration(replay.device_together[d].median_ns), replay.device_contention[d]);
    }
    out += "\n";
  }
  return out;
}

nlohmann::json replay_json(const hw::ScheduleReplay& replay) {
  nlohmann::json stages = nlohmann::json::array();
  for (const hw::StageTimes& t : replay.stages) {
    stages.push_back({{"forward_ns", timing_json(t.forward)},
                      {"recompute_ns", timing_json(t.recompute)},
                      {"backward_ns", timing_json(t.backward)},
                      {"resumed_forward_ns", timing_json(t.forward_resumed)},
                      {"resumed_recompute_ns", timing_json(t.recompute_resumed)},
                      {"resumed_backward_ns", timing_json(t.backward_resumed)},
                      {"first_forward_ns", timing_json(t.forward_first)},
                      {"first_recompute_ns", timing_json(t.recompute_first)},
                      {"first_backward_ns", timing_json(t.backward_first)}});
  }
  return {{"rounds", replay.rounds}, {"stages", stages}, {"device_contention", replay.device_contention}};
}

}  // namespace pipeworks::cli
