// What `pipeworks simulate` prints and writes of one simulation: the headline and summary table
// (and the terminal grid), the JSON report, the Chrome trace and the SVG Gantt chart.
#pragma once

#include <string>

#include "sched/result.h"
#include "sim/engine/simulator.h"
#include "sim/plan/partition.h"
#include "sim/report/sim_report.h"
#include "sim/spec/comm_mode.h"

namespace pipeworks::cli {

// What the headline echoes besides the report's inputs, and whether to draw the grid.
struct SummaryChoices {
  sim::CommMode comm_mode = sim::CommMode::kOverlap;
  std::string partition;  // as given: "uniform", "balanced", "7,6,6,7"
  std::string optimizer;
  bool grid = false;
};

// "gpt2-medium on dgx-h100: 1f1b, K=4 stages, ...", "layout pp 4 x dp 2 (8 devices, 4 stages)",
// a blank line and sim::summary_table, then the grid when asked for.
std::string simulation_summary(const sim::SimResult& result, const sim::ReportInputs& inputs,
                               const SummaryChoices& choices);

// The files to write; "" leaves one out.
struct SimulationFiles {
  std::string json;
  std::string trace;
  std::string svg;
};

// Writes each file asked for; the first failed write is the error.
sched::Status write_simulation(const SimulationFiles& files, const sim::SimResult& result,
                               const sim::ReportInputs& inputs, const sim::Partition& partition);

}  // namespace pipeworks::cli
