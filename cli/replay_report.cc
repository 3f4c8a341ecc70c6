// The text of the stage replay (see replay_report.h).
#include "cli/replay_report.h"

#include <chrono>

#include <fmt/format.h>

#include "sim/spec/units.h"

namespace pipeworks::cli {
namespace {

std::string timing_text(const hw::Timing& t) {
  if (t.median_ns == 0 && t.max_ns == 0) return "-";
  return fmt::format("{} [{} .. {}]", sim::format_duration(t.median_ns), sim::format_duration(t.min_ns),
                     sim::format_duration(t.max_ns));
}

// "F ...  R ...  B ..." under one condition, and "  I ...  W ..." where the stage splits its
// backwards.
std::string kinds_text(const hw::StageTimes& t, hw::ReplayCondition c) {
  std::string out = fmt::format("F {}  R {}  B {}", timing_text(t.forward[c]), timing_text(t.recompute[c]),
                                timing_text(t.backward[c]));
  if (t.backward_input.alone.median_ns > 0) {
    out += fmt::format("  I {}  W {}", timing_text(t.backward_input[c]), timing_text(t.backward_weight[c]));
  }
  return out;
}

}  // namespace

std::string replay_summary(const hw::ScheduleReplay& replay) {
  std::string out = fmt::format("stage replay in schedule order ({} rounds, each device alone, then all at once)\n",
                                replay.rounds);
  const std::string pause = sim::format_duration(std::chrono::nanoseconds(hw::kResumePause).count());
  for (std::size_t s = 0; s < replay.stages.size(); ++s) {
    const hw::StageTimes& t = replay.stages[s];
    out += fmt::format("  stage {}: {}\n", s, kinds_text(t, hw::ReplayCondition::kAlone));
    if (t.forward.first.median_ns > 0) {
      out += fmt::format("           first of a step: {}\n", kinds_text(t, hw::ReplayCondition::kFirst));
    }
    if (t.forward.resumed.median_ns > 0) {
      out += fmt::format("           after a {} sleep: {}\n", pause, kinds_text(t, hw::ReplayCondition::kResumed));
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

}  // namespace pipeworks::cli
