// The progress of `run --predict` as it happens (see predict_progress.h).
#include "cli/predict_progress.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/profile_report.h"
#include "cli/replay_report.h"
#include "sched/units_text.h"
#include "sim/plan/partition.h"
#include "sim/spec/units.h"

namespace pipeworks::cli {
namespace {

void print_step(const hw::MeasuredStep& s, const char* note) {
  std::vector<std::string> peaks;
  for (sched::Bytes b : s.peak_activation_bytes) peaks.push_back(sched::format_bytes(b));
  fmt::print("{:>4}  {:>12}  {:>12}  {}{}\n", s.step, sim::format_duration(s.makespan_ns),
             sim::format_duration(s.step_ns), fmt::join(peaks, ", "), note);
  std::fflush(stdout);
}

// Why a step is not measured: the first `warmup` ones are --warmup's; with the stage replay, one
// more follows every replay round (replay_and_measure.h), since the round leaves its own buffers
// in the caches.
const char* warmup_note(int warmups_so_far, int warmup) {
  return warmups_so_far < warmup ? "  (warm-up, --warmup)" : "  (warm-up after a stage-replay round, not measured)";
}

}  // namespace

hw::PredictionObserver printing_observer(const hw::RunConfig& c, int warmup) {
  hw::PredictionObserver o;
  o.on_plan = [&c](const hw::PredictionPlan& plan) {
    fmt::print("pipeworks run --predict: {} on {}, {} stages x {} micro-batches (batch {}), {}{}, partition {}, {} "
               "per worker\n",
               hw::model_display_name(c.model), hw::device_kind_name(c.device), c.num_stages, c.num_microbatches, c.batch_size,
               hw::schedule_name(c), c.recompute ? " + recompute" : "",
               sim::to_string(plan.partition), sched::counted(plan.threads_per_worker, "intra-op thread"));
    std::fflush(stdout);
  };
  o.on_profile_line = [](const std::string& line) {
    fmt::print("  profile: {}\n", line);
    std::fflush(stdout);
  };
  o.on_profile = [](const hw::Profile& profile) { fmt::print("{}", profile_summary(profile)); };
  o.on_step = [header = std::make_shared<bool>(true), warmups = std::make_shared<int>(0), warmup](
                  const hw::MeasuredStep& s, bool is_warmup) {
    if (std::exchange(*header, false)) {
      fmt::print("{:>4}  {:>12}  {:>12}  {}\n", "step", "makespan", "step time", "peak activation bytes per device");
    }
    print_step(s, is_warmup ? warmup_note((*warmups)++, warmup) : "");
  };
  o.on_replay = [](const hw::ScheduleReplay& replay) { fmt::print("{}", replay_summary(replay)); };
  return o;
}

}  // namespace pipeworks::cli
