// `pipeworks run`'s options as given, and their reading into the hw::RunConfig every run path
// takes: the schedule file, the texts parsed into the config's values, `--partition balanced`
// cut by the model spec. Each error is a usage error (exit 2) unless said otherwise.
#pragma once

#include <optional>
#include <string>

#include "cli/layout_flags.h"
#include "cli/model_options.h"
#include "cli/run_predict.h"
#include "cli/shared_defaults.h"
#include "hw/dist/distributed_run.h"
#include "hw/run/run.h"
#include "sched/result.h"

namespace pipeworks::cli {

struct RunOptions {
  ModelOptions model;
  std::string schedule = kDefaultSchedule;
  std::string device = "cpu";  // parsed into config.device
  std::string optimizer = kDefaultOptimizer;
  std::optional<double> learning_rate;  // default: hw::default_learning_rate of the optimizer
  std::optional<int> batch;             // default: kDefaultSamplesPerMicrobatch per micro-batch
  std::string pin_workers = "auto";
  std::string partition = kDefaultPartition;  // parsed into config.partition
  int pipeline_ranks = 0;                     // --pp, resolved into config.num_stages
  std::string trace, svg, json;
  std::string schedule_file;  // --schedule-file: run this schedule instead of generating one
  // Whether --schedule, --stages and --microbatches were given (a schedule file must agree).
  bool schedule_given = false, stages_given = false, microbatches_given = false;
  bool distributed = false;  // also when WORLD_SIZE is set (torchrun, pipeworks launch)
  double timeout_s = 180;    // every blocking wait (receives; in multi-process runs all of them)
  LayoutArgs layout;  // --tp, --dp, --zero, --rank-order, read into config
  hw::RunConfig config;
  PredictOptions predict;
};

// --schedule-file read into the config: valid, agreeing with --schedule, -K and -M where given
// (a contradiction sets `usage_error`; any other error is the file's), its stages and
// micro-batches the run's.
sched::Status take_schedule_file(RunOptions& options, bool& usage_error);

// The option texts turned into the config's values.
sched::Status resolve_options(RunOptions& options);

// A multi-process run's options: --timeout, and the backend of --device (Gloo on cpu, NCCL on cuda).
hw::DistributedOptions distributed_options(const RunOptions& options);

// `run --distributed --predict` (hw/dist/distributed_prediction.h): this rank's part; rank 0
// prints the steps, the measured costs and predicted against measured. The exit code.
int run_distributed_prediction(const RunOptions& options);

// `--partition balanced` cut by the model spec, as layer counts every run path then uses.
sched::Status resolve_balanced_partition(RunOptions& options);

}  // namespace pipeworks::cli
