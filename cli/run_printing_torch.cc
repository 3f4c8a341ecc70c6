// What `pipeworks run` prints and writes (see run_printing.h).
#include "cli/run_printing.h"

#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/picture_title.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/run/run_report_json.h"
#include "hw/run/step_modes.h"
#include "sched/text_file.h"
#include "sched/units_text.h"
#include "sim/plan/partition.h"
#include "sim/spec/optimizer.h"
#include "sim/spec/parallel_layout.h"
#include "viz/chrome_trace.h"
#include "viz/svg_gantt.h"

namespace pipeworks::cli {

void print_step(const hw::StepStats& s) {
  std::vector<std::string> peaks;
  for (sched::Bytes b : s.peak_activation_bytes) peaks.push_back(sched::format_bytes(b));
  fmt::print("{:>4}  {:>10.3f}  {:>10.1f}  {:>6.1f}%  {:>10.5f}  {}\n", s.step, static_cast<double>(s.step_ns) / 1e6,
             s.samples_per_s, 100.0 * s.bubble_fraction, s.loss, fmt::join(peaks, ", "));
  std::fflush(stdout);
}

void print_run_header(const std::string& model, const hw::RunConfig& c, bool distributed) {
  fmt::print("pipeworks run: {} on {}{}, {} x {} (batch {}), {}{}{}, {} (lr {:g})\n", model, hw::device_kind_name(c.device),
             distributed ? " (multi-process)" : "", sched::counted(c.num_stages, "stage"),
             sched::counted(c.num_microbatches, "micro-batch", "micro-batches"), c.batch_size,
             hw::schedule_name(c),
             c.virtual_stages > 1 ? fmt::format(" ({} stages per device)", c.virtual_stages) : "",
             c.recompute ? " + recompute" : "",
             sim::optimizer_name(c.optimizer.kind), c.optimizer.learning_rate);
  if (c.data_parallel > 1 || c.tensor_parallel > 1) {
    if (auto schedule = hw::build_schedule(c)) {
      fmt::print("layout {}, each replica {} samples a step\n", sim::layout_text(hw::run_layout(c, *schedule)),
                 c.batch_size / c.data_parallel);
    }
  }
  fmt::print("{:>4}  {:>10}  {:>10}  {:>7}  {:>10}  {}\n", "step", "time (ms)", "samples/s", "bubble", "loss",
             "peak activation bytes per device");
}

bool print_summary(const hw::RunReport& report, const hw::RunConfig& config) {
  const int batch_size = config.batch_size;
  fmt::print("partition {} ({}), {} per worker, workers {}\n", sim::to_string(report.partition),
             sched::counted(report.spec.num_layers(), "layer"), sched::counted(report.threads_per_worker, "intra-op thread"),
             hw::describe_worker_cpus(report.worker_cpus));
  if (report.steps.size() > 1) {
    double total_ns = 0;
    for (std::size_t i = 1; i < report.steps.size(); ++i) total_ns += static_cast<double>(report.steps[i].step_ns);
    const double mean_ns = total_ns / static_cast<double>(report.steps.size() - 1);
    fmt::print("mean of steps 1..{}: {:.3f} ms/step, {:.1f} samples/s\n", report.steps.size() - 1, mean_ns / 1e6,
               batch_size * 1e9 / mean_ns);
  }
  if (const auto modes = hw::run_step_modes(report.steps)) {
    fmt::print("note: {}, workers {}: the machine or the workers' placement changed during the run, not the schedule\n",
               hw::describe(*modes), hw::describe_worker_cpus(report.worker_cpus));
  }
  if (!report.check) return true;
  const hw::GradientCheck& k = *report.check;
  const std::string what =
      config.tensor_parallel > 1
          ? "unsharded reference (each rank's shards of the gradients and parameters every step, within the split "
            "reductions' tolerance; replicated parameters bit-identical over the tensor-parallel ranks; "
            "docs/tensor_parallel.md)"
      : config.data_parallel > 1
          ? "whole-batch reference (reduced gradients within the summation bound and parameters every step, replicas "
            "bit-identical; docs/data_parallel.md)"
          : "micro-batch reference (gradients every step, final parameters)";
  fmt::print("check vs {}: max abs diff {:.3g}, max rel diff {:.3g}{} (rtol {:g}, atol {:g}): {}\n", what,
             k.max_abs_diff, k.max_rel_diff, k.exactly_equal ? ", exactly equal" : "", k.rtol, k.atol,
             k.passed ? "PASS" : "FAIL");
  return k.passed;
}

sched::Status write_run_outputs(const hw::RunReport& report, const RunOptions& options) {
  const std::vector<const sched::Timeline*> timelines{&report.last_timeline};
  if (!options.trace.empty()) {
    if (auto s = viz::write_chrome_trace(options.trace, timelines); !s) return s;
  }
  if (!options.svg.empty()) {
    viz::SvgOptions svg;
    const hw::RunConfig& c = options.config;
    svg.title = picture_title({hw::model_display_name(c.model), std::string(hw::device_kind_name(c.device)), hw::schedule_name(c),
                               c.num_stages, c.num_microbatches, c.batch_size, c.recompute},
                              "measured, last step");
    svg.stage_layers = sim::stage_range_texts(report.partition);
    if (auto s = viz::write_svg(options.svg, timelines, svg); !s) return s;
  }
  if (options.json.empty()) return sched::Ok{};
  return sched::write_text_file(options.json, hw::run_report_json(options.config, report).dump(2) + "\n");
}

}  // namespace pipeworks::cli
