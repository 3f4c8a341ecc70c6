// hw/predict/ -- the prediction room: everything that turns measurements into the simulator's
// costs and predicts a run from them. The layer profiler and its fits (profiler.h, cost_fit.h),
// the machine's hand-off, dispatch and contention (machine_profile.h), each stage's temporaries
// (stage_memory.h), the stage replay of a schedule (stage_replay.h, replay_and_measure.h), the
// prediction of a run (prediction.h, sim/engine/executor_peak.h), and `run --predict` as one report value
// (this file). It builds on hw/run/ and sim/; it never changes how a run executes.
//
// `run --predict` as one value: the run's costs obtained (profiled now at the run's micro-batch
// size, or given as specs), the schedule measured (with the stage replay taking turns with the
// run's steps, or the run alone), and the prediction of exactly that schedule from those costs.
// The CLI prints and writes what this returns; every decision about where costs come from is
// here. LibTorch-free header.
//
//   costs    model spec given ? it : profile_model(run's micro-batch size) + stage temporaries
//            cluster spec given ? it : the profile's machine (or profile_machine alone)
//   measure  replay_and_measure (stage replay, when wanted) | measure_run
//   predict  predict_run(schedule, partition, costs, profile)           the headline
//            predict_run(schedule, partition, costs, profile, replay)   calibrated, with a replay
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/predict/prediction.h"
#include "hw/predict/profiler.h"
#include "hw/predict/stage_replay.h"
#include "hw/run/measured_run.h"
#include "hw/run/run.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::hw {

struct PredictionSettings {
  std::optional<sim::ModelSpec> model_spec;      // none: profile the model now
  std::optional<sim::ClusterSpec> cluster_spec;  // none: measure this machine now
  int warmup = 2;                                // run steps before the measured ones
  int repetitions = 15;                          // timed repetitions per profiled layer
  bool stage_replay = true;  // also predict from a replay of the schedule's stages (the calibrated figure)
  int replay_rounds = 5;     // at least; replay_rounds_for() raises it for small M
};

// What the run is about to do, known before any measurement.
struct PredictionPlan {
  sched::Schedule schedule;  // lowered
  sim::Partition partition;
  int threads_per_worker = 1;
  std::vector<int> memory_domains;  // per device, the meter its memory is counted in
};

struct PredictionReport {
  RunConfig config;
  PredictionPlan plan;
  sim::ModelSpec spec;
  sim::ClusterSpec cluster;
  std::optional<Profile> profile;        // when profiled now
  std::optional<ScheduleReplay> replay;  // when the stage replay ran
  MeasuredRun run;
  // The headline: the schedule predicted from the model and cluster specs alone (what a planner
  // reading the same specs would have said).
  Prediction prediction;
  std::vector<sched::Bytes> predicted_peak_bytes;  // per device; devices sharing a GPU summed
  // With the stage replay: the same schedule predicted from the replay's stage times and
  // contention (this very schedule's actions measured). Its error is the composition's (the
  // simulator's dependencies, hand-offs, bubbles); the headline's minus it, the cost model's.
  std::optional<Prediction> calibrated;
  std::vector<sched::Bytes> calibrated_peak_bytes;
  std::vector<std::string> notes;                  // what a reader of the figures should know
  // What makes the prediction doubtful: a model spec read beyond its profiled sizes, a schedule
  // that is another in disguise (sim::input_warnings).
  std::vector<std::string> warnings;
  int median_step = 0;                             // index into run.steps

  const MeasuredStep& median() const { return run.steps[static_cast<std::size_t>(median_step)]; }
  // The devices' speed the headline's cost model ran at (the cluster spec's).
  double device_speed() const { return cluster.devices.front().relative_speed; }
};

// Progress as it happens, for a CLI to print; every member may be empty.
struct PredictionObserver {
  std::function<void(const PredictionPlan&)> on_plan;
  std::function<void(const std::string&)> on_profile_line;
  std::function<void(const Profile&)> on_profile;
  OnMeasuredStep on_step;
  std::function<void(const ScheduleReplay&)> on_replay;
};

// Errors name the bad setting or what failed; the settings are checked before any work starts.
sched::Result<PredictionReport> run_with_prediction(const RunConfig& config, const PredictionSettings& settings,
                                                    const PredictionObserver& observer = {});

}  // namespace pipeworks::hw
