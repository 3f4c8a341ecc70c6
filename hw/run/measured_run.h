// Runs a given lowered schedule for warm-up + measured steps and keeps every measured step's
// timeline, step time and peaks, so a prediction can be compared with the median step (the
// `run --predict` path; run_training keeps only the last timeline). LibTorch-free header.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "hw/run/run.h"
#include "sched/schedule.h"
#include "sched/timeline.h"
#include "sim/plan/partition.h"

namespace pipeworks::hw {

struct StageCell;

struct MeasuredStep {
  int step = 0;                    // counting the warm-up steps
  sched::Nanoseconds step_ns = 0;  // start of the step to the end of the optimizer step
  sched::Nanoseconds makespan_ns = 0;  // first action start to last action end
  double loss = 0;
  std::vector<sched::Bytes> peak_activation_bytes;  // per device
  sched::Timeline timeline;                          // "measured"
};

struct MeasuredRun {
  int threads_per_worker = 1;
  std::vector<std::vector<int>> worker_cpus;  // per device, its worker's cores; empty: not pinned
  std::vector<MeasuredStep> warmup;  // the first `warmup` steps, for the record
  std::vector<MeasuredStep> steps;   // the measured ones
};

// The run one step at a time (warm-up or measured is the caller's to say), for a caller that
// interleaves its steps with other work (replay_and_measure.h).
class RunStepper {
 public:
  static sched::Result<std::unique_ptr<RunStepper>> create(const RunConfig& config, const sched::Schedule& schedule,
                                                           const sim::Partition& partition);
  ~RunStepper();
  RunStepper(const RunStepper&) = delete;
  RunStepper& operator=(const RunStepper&) = delete;

  // The next step (counted from 0), on a fresh mini-batch seeded per step as in run_training.
  sched::Result<MeasuredStep> step();
  int threads_per_worker() const;
  const std::vector<std::vector<int>>& worker_cpus() const;
  // The run's stage cells (in the executor; shared modules when copied).
  const std::vector<StageCell>& cells() const;

 private:
  struct State;
  explicit RunStepper(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The run of `config` (model, batch, optimizer, threads, device) on exactly `schedule` and `partition`:
// config.steps measured steps after `warmup` more. Seeds per step as in run_training.
// Sees every step as it ends, warm-up or measured.
using OnMeasuredStep = std::function<void(const MeasuredStep&, bool warmup)>;
sched::Result<MeasuredRun> measure_run(const RunConfig& config, const sched::Schedule& schedule,
                                       const sim::Partition& partition, int warmup, const OnMeasuredStep& on_step = {});

// Index into `steps` of the step with the median makespan (the lower middle one); -1 when empty.
int median_step(const std::vector<MeasuredStep>& steps);

}  // namespace pipeworks::hw
