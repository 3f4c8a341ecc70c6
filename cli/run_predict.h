// `pipeworks run --predict`: profile (or load specs), simulate exactly the lowered schedule the
// run is about to execute, run it, and print predicted vs measured. The run command adds these
// options and hands over when --predict is set. LibTorch-free header.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hw/run/run.h"
#include "sched/result.h"

namespace pipeworks::cli {

struct PredictOptions {
  bool enabled = false;
  std::string model_spec;    // empty: profile the model now, at the run's micro-batch size
  std::string cluster_spec;  // empty: measure this machine now (hand-off, dispatch, contention)
  int warmup = 2;            // steps run before the measured ones
  int repetitions = 15;       // timed repetitions per profiled layer and size
  // Stage costs from replaying each device's program in schedule order (stage_replay.h) when
  // the model is profiled; false: from the layer profile alone.
  bool stage_replay = true;
  int replay_rounds = 5;
};

struct RunOutputs {
  std::string trace;  // Chrome trace with both timelines
  std::string svg;    // Gantt chart, predicted above measured
  std::string json;   // both timelines as records, the summary, per-action errors
};

// Adds --predict, --model-spec, --cluster-spec, --warmup, --profile-repetitions, --no-stage-replay
// and --replay-rounds to `cmd`.
void add_predict_options(CLI::App* cmd, PredictOptions& options);

// Refuses what would be ignored: --predict's own options without --predict (--model-spec is also
// --partition balanced's, so it is left alone), and the stage replay's options with a
// multi-process prediction, which has no stage replay.
sched::Status check_predict_flags(const CLI::App& cmd, const PredictOptions& options, bool distributed);

// Runs config.steps measured steps after `warmup` (hw::run_with_prediction) and prints and writes
// the comparison; returns the exit code (0, 1 on any error).
int run_with_prediction(const hw::RunConfig& config, const PredictOptions& predict, const RunOutputs& outputs);

}  // namespace pipeworks::cli
