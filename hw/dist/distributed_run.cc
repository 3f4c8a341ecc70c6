// One rank of a multi-process run (see distributed_run.h): the rank's set-up and steps
// (rank_run.h), the reports merged on rank 0.
#include "hw/dist/distributed_run.h"

#include <fmt/format.h>

#include "hw/dist/c10d_group.h"
#include "hw/dist/rank_run.h"
#include "hw/exec/threads.h"

namespace pipeworks::hw {

sched::Result<DistributedReport> run_distributed(const RunConfig& config, const DistributedOptions& options,
                                                 const std::function<void(const StepStats&)>& on_step) {
  auto set_up = set_up_rank(config, options);
  if (!set_up) return set_up.error();
  RankRun& run = *set_up;
  RunReport& report = run.setup.report;
  // One worker per process: it gets the threads a single worker would get among all devices,
  // as in the in-process run, so both runs reduce in the same order.
  report.threads_per_worker = run.executor->threads_per_worker();
  // The plan for every device (each rank makes the same): its ranks' cores where they are bound.
  report.worker_cpus = run.bound_cpus.empty() ? run.executor->worker_cpus() : bound_device_cpus(run);
  if (run.setup.reference) {
    set_worker_threads(run.executor->threads_per_worker());  // the reference runs here, as one worker would
    run.where->use_exact_arithmetic();                        // compared with the CPU's arithmetic
  }
  StepMeter meter(*run.where, report.schedule.num_devices());
  for (int step = 0; step < config.steps; ++step) {
    auto outcome = run_rank_step(run, meter, step);
    if (!outcome) return outcome.error();
    if (auto s = record_step(run, step, std::move(outcome).value(), on_step); !s) return s.error();
  }
  if (auto s = store_barrier(run.group, "end"); !s) return s.error();
  if (auto s = store_farewell(run.group); !s) return s.error();
  return DistributedReport{run.env.rank, run.env.world_size, std::move(report)};
}

}  // namespace pipeworks::hw
