// The summary and files of one simulation (see simulation_outputs.h).
#include "cli/simulation_outputs.h"

#include <vector>

#include <fmt/format.h>

#include "cli/picture_title.h"
#include "sched/text_file.h"
#include "sched/units_text.h"
#include "sim/plan/partition_text.h"
#include "viz/chrome_trace.h"
#include "viz/svg_gantt.h"
#include "viz/terminal_grid.h"

namespace pipeworks::cli {

std::string simulation_summary(const sim::SimResult& result, const sim::ReportInputs& inputs,
                               const SummaryChoices& choices) {
  std::string out =
      fmt::format("{} on {}: {}, K={}, M={} of {}, {} comm{}, {} partition, {} optimizer state\n{}\n", inputs.model,
                  inputs.cluster, inputs.schedule, sched::counted(inputs.num_stages, "stage"),
                  sched::counted(inputs.num_microbatches, "micro-batch", "micro-batches"),
                  sched::counted(inputs.microbatch_size, "sample"), sim::comm_mode_name(choices.comm_mode),
                  inputs.recompute ? ", re-materialization" : "", choices.partition, choices.optimizer,
                  inputs.layout ? fmt::format("layout {}\n", sim::layout_text(*inputs.layout)) : std::string());
  out += sim::summary_table(result, inputs);
  if (choices.grid) {
    out += '\n';
    out += viz::terminal_grid(result.timeline);
  }
  return out;
}

sched::Status write_simulation(const SimulationFiles& files, const sim::SimResult& result,
                               const sim::ReportInputs& inputs, const sim::Partition& partition) {
  if (!files.json.empty()) {
    if (auto st = sched::write_text_file(files.json, sim::report_json(result, inputs)); !st) return st;
  }
  const std::vector<const sched::Timeline*> timelines = {&result.timeline};
  if (!files.trace.empty()) {
    if (auto st = viz::write_chrome_trace(files.trace, timelines); !st) return st;
  }
  if (!files.svg.empty()) {
    viz::SvgOptions svg;
    svg.title = picture_title({inputs.model, inputs.cluster, inputs.schedule, inputs.num_stages,
                               inputs.num_microbatches, inputs.num_microbatches * inputs.microbatch_size,
                               inputs.recompute},
                              "predicted");
    svg.stage_layers = sim::stage_range_texts(partition);
    if (auto st = viz::write_svg(files.svg, timelines, svg); !st) return st;
  }
  return sched::Ok{};
}

}  // namespace pipeworks::cli
