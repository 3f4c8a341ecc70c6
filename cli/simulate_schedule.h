// The schedule `pipeworks simulate` simulates (and `run --schedule-file` runs): generated from --schedule, --stages,
// --microbatches and --placement, or read from --schedule-file (CSV in torch.distributed.
// pipelining's layout or pipeworks JSON), validated, then lowered by our passes when it holds
// compute actions only, taken as written when it already has its SEND/RECV actions.
#pragma once

#include <string>
#include <vector>

#include "cli/shared_defaults.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::cli {

struct ScheduleRequest {
  std::string kind = kDefaultSchedule;
  int stages = kDefaultStages;
  int microbatches = kDefaultMicrobatches;
  std::vector<int> placement;  // empty: stage i on device i (s mod K/v with virtual stages)
  int virtual_stages = 1;
  bool recompute = false;
  int pipeline_ranks = 0;      // --pp, resolved into stages (schedule_flags.h)
  std::string file;            // non-empty: read the schedule from here
  // Whether --stages / --microbatches / --schedule were given (a file must then agree with them).
  bool stages_given = false;
  bool microbatches_given = false;
  bool kind_given = false;
};

struct ScheduleToSimulate {
  sched::Schedule schedule;  // lowered: SEND/RECV included
  std::string name;          // "gpipe", "1f1b", or the file's path
};

// The file `request.file`, valid (its first problem otherwise) and agreeing with the options that
// `request` says were given (a contradiction sets `usage_error`: exit 2), as written.
sched::Result<sched::Schedule> read_schedule_file(const ScheduleRequest& request, bool& usage_error);

// The lowered schedule, on at most `cluster`'s devices, with the stage-level actions `layout`'s
// data parallelism adds (sim/plan/data_parallel.h; a schedule that holds some is taken as it is).
// `usage_error` tells a contradiction in the options (exit 2) from a bad file or a schedule that
// does not fit (exit 1).
sched::Result<ScheduleToSimulate> schedule_to_simulate(const ScheduleRequest& request, const sim::ClusterSpec& cluster,
                                                      bool& usage_error, const sim::ParallelLayout& layout = {},
                                                      const sim::CostModel* timing = nullptr);

// The chosen schedule again with its rule run on `costs`' stage times where it decides on them
// (a generated zb-h2: sim/engine/timed_orders.h); `chosen` itself otherwise.
sched::Result<ScheduleToSimulate> on_stage_times(const ScheduleRequest& request, const sim::ClusterSpec& cluster,
                                                 const sim::ParallelLayout& layout, const sim::CostModel& costs,
                                                 const ScheduleToSimulate& chosen);

}  // namespace pipeworks::cli
