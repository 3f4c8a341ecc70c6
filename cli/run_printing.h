// What `pipeworks run` prints: the header, one line per step as it ends, and the summary (the
// partition, the workers, the mean step after the first, the gradient check). LibTorch-free header.
#pragma once

#include <string>

#include "hw/run/run.h"

namespace pipeworks::cli {

void print_run_header(const std::string& model, const hw::RunConfig& config, bool distributed);
// Flushes, so a run's progress shows as it happens.
void print_step(const hw::StepStats& step);
// False when the gradient check ran and failed.
bool print_summary(const hw::RunReport& report, const hw::RunConfig& config);

}  // namespace pipeworks::cli
