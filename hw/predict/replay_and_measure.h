// run --predict's two measurements of one schedule, interleaved: the stage replay's rounds (what
// the prediction is built from) and the measured run's steps (what it is compared with) take
// turns, so that a slow spell of a shared machine stretches both sides of the comparison alike
// instead of only one of them. LibTorch-free header.
//
//   replay  W          R1       R2       R3       R4       R5          5 rounds, 2 + 6 steps:
//   run        w  w s1    w s2     w s3     w s4     w s5     w s6     interleaving(5, 6) = sRsRsRsRsRs
//   warm-ups first; then each side's i-th item at about the same share of the whole; a measured
//   step right after a replay round follows one more warm-up step (w), since the round leaves its
//   own activations and buffers in the caches and training runs step after step. The replay runs
//   on the run's own cells (StageReplayer::create), so both read the same weights.
#pragma once

#include <vector>

#include "hw/predict/stage_replay.h"
#include "hw/run/measured_run.h"
#include "hw/run/run.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"

namespace pipeworks::hw {

struct ReplayAndRun {
  ScheduleReplay replay;
  MeasuredRun run;
};

// The stage replay (`rounds` measured rounds after one warm-up, stage_replay.h) and the run
// (`warmup` + config.steps steps, measured_run.h, plus the warm-up steps after replay rounds) of
// `schedule`, taking turns. `on_step` sees every run step as it ends. Errors name what failed.
sched::Result<ReplayAndRun> replay_and_measure(const RunConfig& config, const sched::Schedule& schedule,
                                               const sim::Partition& partition, int rounds, int warmup,
                                               const OnMeasuredStep& on_step = {});

// The order of the measured items: true for a replay round, false for a run step; `rounds` of
// one and `steps` of the other, each side spread evenly over the whole (the side whose share done
// is behind goes next; the replay on a tie).
std::vector<bool> interleaving(int rounds, int steps);

}  // namespace pipeworks::hw
