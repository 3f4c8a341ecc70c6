// Generating or reading the schedule `pipeworks simulate` simulates (see simulate_schedule.h).
#include "cli/simulate_schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/schedule_file.h"
#include "sched/validate.h"
#include "sim/engine/timed_orders.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/data_parallel.h"

namespace pipeworks::cli {
namespace {

// The options that a schedule file already answers, when they say something else.
sched::Status check_file_agrees(const ScheduleRequest& r, const sched::Schedule& s) {
  if (r.kind_given) return sched::Error{"--schedule and --schedule-file: give one (the file is the schedule)"};
  if (!r.placement.empty()) return sched::Error{"--placement and --schedule-file: the file places its stages"};
  if (r.stages_given && r.stages != s.num_stages) {
    return sched::Error{fmt::format("--stages {} but {} has {} stages", r.stages, r.file, s.num_stages)};
  }
  if (r.microbatches_given && r.microbatches != s.num_microbatches) {
    return sched::Error{
        fmt::format("--microbatches {} but {} has {} micro-batches", r.microbatches, r.file, s.num_microbatches)};
  }
  return sched::Ok{};
}

// The file, validated; its first problem and their number when it is not valid.
sched::Result<sched::Schedule> read_valid_schedule(const std::string& path) {
  auto loaded = sched::load_schedule(path);
  if (!loaded) return loaded.error();
  const auto diagnostics = sched::validate(loaded->schedule, sched::ValidateOptions{loaded->placement_inferred});
  if (diagnostics.empty()) return std::move(loaded->schedule);
  return sched::Error{fmt::format("{}\n{} has {} problem{}; `pipeworks validate {}` lists them",
                                  sched::format_diagnostic(*loaded, diagnostics.front()), path, diagnostics.size(),
                                  diagnostics.size() == 1 ? "" : "s", path)};
}

sched::Result<sched::Schedule> generated(const ScheduleRequest& r, const sim::ClusterSpec& cluster, bool& usage_error,
                                         const sim::CostModel* timing) {
  auto kind = sched::parse_schedule_kind(r.kind);
  if (!kind) return kind.error();
  std::vector<int> placement = r.placement;
  if (placement.empty() && !sched::has_virtual_stages(*kind)) {
    auto by_default = sim::default_placement(r.stages, cluster);
    usage_error = false;
    if (!by_default) return by_default.error();
    placement = std::move(by_default).value();
  }
  auto schedule = sched::generate(*kind, sched::ScheduleShape{r.stages, r.microbatches, placement}, r.virtual_stages);
  if (!schedule || timing == nullptr) return schedule;
  return sim::timed_schedule(*kind, *schedule, *timing);
}

}  // namespace

sched::Result<sched::Schedule> read_schedule_file(const ScheduleRequest& r, bool& usage_error) {
  usage_error = false;
  auto schedule = read_valid_schedule(r.file);
  if (!schedule) return schedule.error();
  if (auto agrees = check_file_agrees(r, *schedule); !agrees) {
    usage_error = true;
    return agrees.error();
  }
  return schedule;
}

sched::Result<ScheduleToSimulate> schedule_to_simulate(const ScheduleRequest& r, const sim::ClusterSpec& cluster,
                                                      bool& usage_error, const sim::ParallelLayout& layout,
                                                      const sim::CostModel* timing) {
  usage_error = true;
  sched::Result<sched::Schedule> schedule = sched::Error{""};
  if (r.file.empty()) {
    schedule = generated(r, cluster, usage_error, timing);
  } else {
    schedule = read_schedule_file(r, usage_error);
    if (!schedule) return schedule.error();
  }
  if (!schedule) return schedule.error();
  usage_error = false;
  if (schedule->num_devices() > cluster.num_devices()) {
    return sched::Error{fmt::format("the schedule uses {} devices but cluster '{}' has {}", schedule->num_devices(),
                                    cluster.name, cluster.num_devices())};
  }
  if (r.recompute && !schedule->has_recompute()) schedule = sched::add_recompute(*schedule);
  if (schedule && !schedule->has_stage_level() && layout.dp > 1) {
    if (schedule->has_comm()) {
      return sched::Error{fmt::format("--dp {} adds REDUCE_GRAD actions, which go in before the sends and receives; "
                                      "this schedule already has its SEND/RECV: give one of compute actions only, or "
                                      "one with its REDUCE_GRAD actions",
                                      layout.dp)};
    }
    schedule = sim::add_data_parallel_actions(*schedule, layout);
  }
  if (schedule && !schedule->has_comm()) schedule = sched::lower_comm(*schedule);
  if (!schedule) return schedule.error();
  return ScheduleToSimulate{std::move(schedule).value(), r.file.empty() ? r.kind : r.file};
}

sched::Result<ScheduleToSimulate> on_stage_times(const ScheduleRequest& request, const sim::ClusterSpec& cluster,
                                                 const sim::ParallelLayout& layout, const sim::CostModel& costs,
                                                 const ScheduleToSimulate& chosen) {
  const auto kind = sched::parse_schedule_kind(request.kind);
  if (!request.file.empty() || !kind || !sim::decides_on_times(*kind)) return chosen;
  bool usage_error = false;
  return schedule_to_simulate(request, cluster, usage_error, layout, &costs);
}

}  // namespace pipeworks::cli
