// `pipeworks run`: trains a model-zoo model with a pipeline schedule on this machine's CPU and
// prints per-step time, samples/s, measured bubble and peak activation bytes per device; with
// --check, the comparison with the non-pipelined reference (exit 1 when it fails).
#include <chrono>
#include <functional>
#include <optional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/model_options.h"
#include "cli/planning_args.h"
#include "cli/renamed_option.h"
#include "cli/run_options.h"
#include "cli/run_predict.h"
#include "cli/run_printing.h"
#include "cli/schedule_flags.h"
#include "cli/shared_defaults.h"
#include "cli/simulate_schedule.h"
#include "hw/dist/distributed_env.h"
#include "hw/dist/distributed_run.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/model/scripted_model.h"
#include "hw/run/device_support.h"
#include "hw/run/layer_partition.h"
#include "hw/run/run.h"
#include "hw/run/run_config_check.h"
#include "hw/run/run_limits.h"
#include "hw/run/run_resources.h"
#include "sched/limits.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::cli {
namespace {

// One rank of a multi-process run (hw/dist/distributed_run.h): Gloo on cpu, NCCL on cuda.
sched::Result<hw::RunReport> run_distributed(const RunOptions& options,
                                             const std::function<void(const hw::StepStats&)>& on_step) {
  auto report = hw::run_distributed(options.config, distributed_options(options), on_step);
  if (!report) return report.error();
  return std::move(report->report);
}

int fail_usage(const std::string& message) {
  return report_error("run", kExitUsage, message);
}

int fail(const std::string& message) {
  return report_error("run", kExitInvalid, message);
}

// The run's threads and memory against this machine (run_resources.h); a rank of a distributed
// run holds its share of the stages.
sched::Status check_fits_this_machine(const hw::RunConfig& config, bool distributed) {
  auto schedule = hw::build_schedule(config);
  if (!schedule) return schedule.error();
  const double share = distributed ? 1.0 / schedule->num_devices() : 1.0;
  return hw::check_run_fits(config, *schedule, hw::this_machine_resources(), share);
}

int run(RunOptions& options) {
  bool usage_error = false;
  if (auto status = take_schedule_file(options, usage_error); !status) {
    return usage_error ? fail_usage(status.error().message) : fail(status.error().message);
  }
  if (auto status = resolve_options(options); !status) return fail_usage(status.error().message);
  if (options.config.model.kind == hw::ModelKind::kScripted) {
    if (auto loaded = hw::load_scripted_model(options.config.model); !loaded) return fail(loaded.error().message);
  }
  if (auto status = hw::check_run_config(options.config); !status) return fail_usage(status.error().message);
  if (auto writable = check_output_paths({{"--json", options.json}, {"--trace", options.trace}, {"--svg", options.svg}});
      !writable) {
    return fail(writable.error().message);
  }
  if (auto available = hw::check_device_available(options.config.device); !available) {
    return fail(available.error().message);  // before the header: no CUDA compiled in, or no GPU visible
  }
  // Multi-process runs (--distributed, or WORLD_SIZE set): rank 0 alone prints and writes files.
  const bool distributed = options.distributed || hw::distributed_env_present();
  int rank = 0;
  if (distributed) {
    auto env = hw::read_distributed_env();
    if (!env) return fail_usage(env.error().message);
    rank = env->rank;
  }
  if (auto one = hw::check_one_process(options.config); !one && !distributed) return fail_usage(one.error().message);
  if (auto status = check_fits_this_machine(options.config, distributed); !status) {
    return fail_usage(status.error().message);
  }
  if (auto status = resolve_balanced_partition(options); !status) return fail(status.error().message);
  if (options.predict.enabled && distributed) return run_distributed_prediction(options);
  if (options.predict.enabled) {
    return run_with_prediction(options.config, options.predict, {options.trace, options.svg, options.json});
  }
  if (rank == 0) print_run_header(hw::model_display_name(options.config.model), options.config, distributed);
  auto report = distributed ? run_distributed(options, print_step) : hw::run_training(options.config, print_step);
  if (!report) return fail(report.error().message);
  if (rank != 0) return kExitOk;
  const bool passed = print_summary(*report, options.config);
  if (auto status = write_run_outputs(*report, options); !status) return fail(status.error().message);
  return passed ? kExitOk : kExitInvalid;
}

// How each step trains: the steps, the optimizer, the checks, the threads and their cores.
void add_training_options(CLI::App* cmd, RunOptions& options) {
  hw::RunConfig& c = options.config;
  cmd->add_option("--steps", c.steps, "mini-batches to train")
      ->check(integer_from(1, hw::kMaxSteps))
      ->capture_default_str();
  cmd->add_option("--optimizer", options.optimizer, "sgd | momentum | adam")->capture_default_str();
  cmd->add_option("--lr", options.learning_rate, "learning rate (default: 0.01 for sgd and momentum, 0.001 for adam)")
      ->check(number_from(0, hw::kMaxLearningRate));
  cmd->add_flag("--check", c.check, "compare gradients and parameters with the non-pipelined reference");
  cmd->add_flag("--check-finite", c.check_finite, "fail on NaN/Inf in any stage");
  add_renamed_option(*cmd, "--intra-op-threads", "--threads", c.threads_per_worker,
                     "LibTorch intra-op threads per worker (0: max(1, cores / devices); each worker thread calls "
                     "at::set_num_threads)",
                     [](CLI::Option& o) { o.check(integer_from(0, hw::kMaxThreadsPerWorker))->capture_default_str(); });
  cmd->add_option("--pin-workers", options.pin_workers,
                  "auto | on | off: device d's worker and its intra-op threads on cores of their own (cores "
                  "[d*t, (d+1)*t) of this process's affinity mask for t threads); auto pins when a core is left over, "
                  "on whenever they fit. With --distributed and a pipeline alone (tp 1, dp 1), rank r's whole process "
                  "(its Gloo threads too) on cores [r*t, (r+1)*t), auto whenever every rank fits")
      ->capture_default_str();
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<RunOptions>();
  hw::RunConfig& c = options->config;
  c.num_stages = kDefaultStages;
  c.num_microbatches = kDefaultMicrobatches;
  CLI::App* cmd = app.add_subcommand(
      "run", "Train a zoo model or your TorchScript model with a pipeline schedule on this machine");
  add_model_options(cmd, options->model, c.model);
  const ScheduleFlagTargets targets{&options->schedule, &c.num_stages, &c.num_microbatches, &c.placement,
                                    &c.virtual_stages,  &c.recompute,  &options->pipeline_ranks};
  const ScheduleFlags flags =
      add_schedule_flags(*cmd, targets, {.shape_required = false, .max_device = hw::kMaxRunDevices - 1});
  cmd->add_option("--batch", options->batch,
                  fmt::format("samples per mini-batch, a multiple of M x dp (default: {} per micro-batch)",
                              kDefaultSamplesPerMicrobatch))
      ->check(integer_from(1, hw::kMaxBatchSize));
  cmd->add_option("--schedule-file", options->schedule_file,
                  "run this schedule (CSV in torch.distributed.pipelining's layout or our JSON; validated; "
                  "compute-only files are lowered, files with SEND/RECV run as written) instead of --schedule");
  cmd->add_option("--partition", options->partition,
                  "uniform | balanced (sim::balanced_partition over --model-spec) | per-stage layer counts N,N,...")
      ->capture_default_str();
  add_run_layout_flags(*cmd, options->layout);
  cmd->add_option("--device", options->device, "cpu | cuda (needs a LibTorch with CUDA)")->capture_default_str();
  cmd->add_flag("--distributed", options->distributed,
                "one rank of a multi-process run (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; implied when "
                "WORLD_SIZE is set); see `pipeworks launch`");
  cmd->add_option("--timeout", options->timeout_s, "seconds any blocking wait may take before the run fails")
      ->check(number_from(0, hw::kMaxTimeoutSeconds, Ends::kAboveLow))
      ->capture_default_str();
  add_training_options(cmd, *options);
  cmd->add_option("--trace", options->trace, "write a Chrome trace of the last step");
  cmd->add_option("--svg", options->svg, "write an SVG Gantt chart of the last step");
  cmd->add_option("--json", options->json, "write the report as JSON");
  add_predict_options(cmd, options->predict);
  cmd->callback([options, cmd, &context, flags, targets] {
    sched::Status given = resolve_pipeline_ranks(flags, targets);
    if (given) given = check_predict_flags(*cmd, options->predict, options->distributed || hw::distributed_env_present());
    if (!given) {
      context.exit_code = fail_usage(given.error().message);
      return;
    }
    options->schedule_given = cmd->count("--schedule") > 0;
    options->stages_given = cmd->count("--stages") > 0 || cmd->count("--pp") > 0;
    options->microbatches_given = cmd->count("--microbatches") > 0;
    context.exit_code = run(*options);
  });
}

}  // namespace pipeworks::cli
