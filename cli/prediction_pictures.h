// The pictures of a prediction beside its run, one copy for `run --predict` in one process and
// across processes: a Chrome trace of both timelines whose measured spans carry their
// predictions in their args, and an SVG Gantt chart, predicted above measured, each measured span
// coloured by its error. LibTorch-free header.
#pragma once

#include "cli/run_predict.h"
#include "hw/run/run.h"
#include "sched/result.h"
#include "sched/timeline.h"
#include "sim/plan/partition.h"

namespace pipeworks::cli {

// Writes outputs.trace and outputs.svg where set (outputs.json is the caller's); `config` and
// `partition` title the chart and name each stage's layers.
sched::Status write_prediction_pictures(const RunOutputs& outputs, const sched::Timeline& predicted,
                                        const sched::Timeline& measured, const hw::RunConfig& config,
                                        const sim::Partition& partition);

}  // namespace pipeworks::cli
