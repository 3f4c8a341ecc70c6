// What `pipeworks run` prints: the header, one line per step as it ends, and the summary (the
// partition, the workers, the mean step after the first, the gradient check); and the files it
// writes of the last step. LibTorch-free header.
#pragma once

#include <string>

#include "cli/run_options.h"
#include "hw/run/run.h"
#include "sched/result.h"

namespace pipeworks::cli {

void print_run_header(const std::string& model, const hw::RunConfig& config, bool distributed);
// Flushes, so a run's progress shows as it happens.
void print_step(const hw::StepStats& step);
// False when the gradient check ran and failed.
bool print_summary(const hw::RunReport& report, const hw::RunConfig& config);
// The Chrome trace and SVG Gantt chart of the last step and the JSON report, each where asked for.
sched::Status write_run_outputs(const hw::RunReport& report, const RunOptions& options);

}  // namespace pipeworks::cli
