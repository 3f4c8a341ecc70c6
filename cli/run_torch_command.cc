// `pipeworks run`: trains a model-zoo model with a pipeline schedule on this machine's CPU and
// prints per-step time, samples/s, measured bubble and peak activation bytes per device; with
// --check, the comparison with the non-pipelined reference (exit 1 when it fails).
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/command_list.h"
#include "cli/run_partition.h"
#include "cli/run_predict.h"
#include "hw/device_support.h"
#include "hw/distributed_env.h"
#include "hw/distributed_run.h"
#include "hw/run.h"
#include "viz/chrome_trace.h"
#include "viz/svg_gantt.h"

namespace pipeworks::cli {
namespace {

struct RunOptions {
  std::string model = "mlp";
  std::string schedule = "1f1b";
  std::string device = "cpu";
  std::string optimizer = "sgd";
  std::string pin_workers = "auto";
  std::string trace, svg, json;
  bool distributed = false;  // also when WORLD_SIZE is set (torchrun, pipeworks launch)
  double timeout_s = 180;    // every blocking wait (receives; in multi-process runs all of them)
  hw::RunConfig config;
  PredictOptions predict;
};

std::string bytes_text(sched::Bytes bytes) {
  if (bytes >= (sched::Bytes{1} << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= (sched::Bytes{1} << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

nlohmann::json report_json(const hw::RunReport& report, const RunOptions& options) {
  nlohmann::json j;
  j["model"] = options.model;
  j["schedule"] = options.schedule;
  j["stages"] = options.config.num_stages;
  j["microbatches"] = options.config.num_microbatches;
  j["batch"] = options.config.batch_size;
  j["recompute"] = options.config.recompute;
  j["partition"] = report.partition.boundaries;
  j["threads_per_worker"] = report.threads_per_worker;
  j["worker_cpus"] = report.worker_cpus;
  for (const hw::StepStats& s : report.steps) {
    j["steps"].push_back({{"step", s.step},
                          {"step_ns", s.step_ns},
                          {"samples_per_s", s.samples_per_s},
                          {"bubble_fraction", s.bubble_fraction},
                          {"loss", s.loss},
                          {"peak_activation_bytes", s.peak_activation_bytes}});
  }
  if (report.check) {
    j["check"] = {{"max_abs_diff", report.check->max_abs_diff},
                  {"max_rel_diff", report.check->max_rel_diff},
                  {"exactly_equal", report.check->exactly_equal},
                  {"passed", report.check->passed}};
  }
  return j;
}

// One rank of a multi-process run (hw/distributed_run.h): Gloo on cpu, NCCL on cuda.
sched::Result<hw::RunReport> run_distributed(const RunOptions& options,
                                             const std::function<void(const hw::StepStats&)>& on_step) {
  hw::DistributedOptions distributed;
  distributed.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  distributed.backend = options.device == "cuda" ? "nccl" : "gloo";
  auto report = hw::run_distributed(options.config, distributed, on_step);
  if (!report) return report.error();
  return std::move(report->report);
}

int run(RunOptions& options) {
  const auto fail_usage = [](const std::string& message) {
    std::cerr << "pipeworks run: error: " << message << "\nRun 'pipeworks run --help' for usage.\n";
    return kExitUsage;
  };
  if (options.device != "cpu" && options.device != "cuda") {
    return fail_usage(fmt::format("device '{}' is not supported (cpu or cuda)", options.device));
  }
  if (options.device == "cuda" && !hw::built_with_cuda()) {
    std::cerr << "pipeworks run: error: --device cuda: this pipeworks was built against a LibTorch without CUDA\n";
    return kExitInvalid;
  }
  if (!(options.timeout_s > 0 && options.timeout_s < 1e7)) {
    return fail_usage("--timeout must be a positive number of seconds");
  }
  options.config.device = options.device;
  auto pinning = hw::parse_worker_pinning(options.pin_workers);
  if (!pinning) return fail_usage("--pin-workers: " + pinning.error().message);
  options.config.pin_workers = *pinning;
  options.config.recv_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  // Multi-process runs (--distributed, or WORLD_SIZE set): rank 0 alone prints and writes files.
  const bool distributed = options.distributed || hw::distributed_env_present();
  int rank = 0;
  if (distributed) {
    auto env = hw::read_distributed_env();
    if (!env) return fail_usage(env.error().message);
    rank = env->rank;
  }
  auto model = hw::parse_model_kind(options.model);
  if (!model) return fail_usage(model.error().message);
  auto kind = sched::parse_schedule_kind(options.schedule);
  if (!kind) return fail_usage(kind.error().message);
  auto optimizer = sim::parse_optimizer(options.optimizer);
  if (!optimizer) return fail_usage(optimizer.error().message);
  options.config.model.kind = *model;
  options.config.schedule = *kind;
  options.config.optimizer.kind = *optimizer;
  if (options.config.partition == "balanced") {
    if (options.predict.model_spec.empty()) return fail_usage("--partition balanced needs --model-spec FILE");
    auto counts = resolve_run_partition(options.config, options.predict.model_spec);
    if (!counts) {
      std::cerr << "pipeworks run: error: " << counts.error().message << "\n";
      return kExitInvalid;
    }
  }
  if (options.predict.enabled) {
    return run_with_prediction(options.config, options.predict, {options.trace, options.svg, options.json},
                               options.model, options.schedule);
  }

  const hw::RunConfig& c = options.config;
  if (rank == 0) {
    fmt::print("pipeworks run: {} on {}{}, {} stages x {} micro-batches (batch {}), {}{}\n", options.model,
               options.device, distributed ? " (multi-process)" : "", c.num_stages, c.num_microbatches, c.batch_size,
               options.schedule, c.recompute ? " + recompute" : "");
    fmt::print("{:>4}  {:>10}  {:>10}  {:>7}  {:>10}  {}\n", "step", "time (ms)", "samples/s", "bubble", "loss",
               "peak activation bytes per device");
  }
  const auto print_step = [](const hw::StepStats& s) {
    std::vector<std::string> peaks;
    for (sched::Bytes b : s.peak_activation_bytes) peaks.push_back(bytes_text(b));
    fmt::print("{:>4}  {:>10.3f}  {:>10.1f}  {:>6.1f}%  {:>10.5f}  {}\n", s.step, static_cast<double>(s.step_ns) / 1e6,
               s.samples_per_s, 100.0 * s.bubble_fraction, s.loss, fmt::join(peaks, ", "));
    std::fflush(stdout);
  };
  auto report = distributed ? run_distributed(options, print_step) : hw::run_training(c, print_step);
  if (!report) {
    std::cerr << "pipeworks run: error: " << report.error().message << "\n";
    return kExitInvalid;
  }
  if (rank != 0) return kExitOk;
  fmt::print("partition {} ({} layers), {} intra-op thread(s) per worker, workers {}\n",
             sim::to_string(report->partition), report->spec.num_layers(), report->threads_per_worker,
             hw::describe_worker_cpus(report->worker_cpus));
  if (report->steps.size() > 1) {
    double total_ns = 0;
    for (std::size_t i = 1; i < report->steps.size(); ++i) total_ns += static_cast<double>(report->steps[i].step_ns);
    const double mean_ns = total_ns / static_cast<double>(report->steps.size() - 1);
    fmt::print("mean of steps 1..{}: {:.3f} ms/step, {:.1f} samples/s\n", report->steps.size() - 1, mean_ns / 1e6,
               c.batch_size * 1e9 / mean_ns);
  }
  int exit_code = kExitOk;
  if (report->check) {
    const hw::GradientCheck& k = *report->check;
    fmt::print("check vs micro-batch reference (gradients every step, final parameters): max abs diff {:.3g}, max "
               "rel diff {:.3g}{} (rtol {:g}, atol {:g}): {}\n",
               k.max_abs_diff, k.max_rel_diff, k.exactly_equal ? ", exactly equal" : "", k.rtol, k.atol,
               k.passed ? "PASS" : "FAIL");
    if (!k.passed) exit_code = kExitInvalid;
  }
  const std::vector<const sched::Timeline*> timelines{&report->last_timeline};
  if (!options.trace.empty()) {
    if (auto s = viz::write_chrome_trace(options.trace, timelines); !s) {
      std::cerr << "pipeworks run: error: " << s.error().message << "\n";
      return kExitInvalid;
    }
  }
  if (!options.svg.empty()) {
    if (auto s = viz::write_svg(options.svg, timelines); !s) {
      std::cerr << "pipeworks run: error: " << s.error().message << "\n";
      return kExitInvalid;
    }
  }
  if (!options.json.empty()) {
    std::ofstream out(options.json);
    out << report_json(*report, options).dump(2) << "\n";
    if (!out) {
      std::cerr << "pipeworks run: error: cannot write " << options.json << "\n";
      return kExitInvalid;
    }
  }
  return exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<RunOptions>();
  hw::RunConfig& c = options->config;
  CLI::App* cmd = app.add_subcommand("run", "Train a model-zoo model with a pipeline schedule on this machine");
  cmd->add_option("--model", options->model, "mlp | transformer | convnet")->capture_default_str();
  cmd->add_option("--depth", c.model.depth, "mlp: hidden layers")->capture_default_str();
  cmd->add_option("--width", c.model.width, "mlp: layer width")->capture_default_str();
  cmd->add_option("--layers", c.model.layers, "transformer: encoder layers")->capture_default_str();
  cmd->add_option("--seq-len", c.model.seq_len, "transformer: sequence length")->capture_default_str();
  cmd->add_option("--model-width", c.model.model_width, "transformer: model width")->capture_default_str();
  cmd->add_option("--heads", c.model.heads, "transformer: attention heads")->capture_default_str();
  cmd->add_option("--ff-width", c.model.ff_width, "transformer: feed-forward width")->capture_default_str();
  cmd->add_option("--vocab", c.model.vocab, "transformer: vocabulary size")->capture_default_str();
  cmd->add_option("--conv-blocks", c.model.conv_blocks, "convnet: conv blocks")->capture_default_str();
  cmd->add_option("--channels", c.model.channels, "convnet: channels of the first block")->capture_default_str();
  cmd->add_option("--image-size", c.model.image_size, "convnet: image side in pixels")->capture_default_str();
  cmd->add_option("--dropout", c.model.dropout, "dropout probability (mlp, transformer)")->capture_default_str();
  cmd->add_option("--seed", c.model.seed, "seed of parameters and data")->capture_default_str();
  cmd->add_option("--stages,-K,-k", c.num_stages, "pipeline stages")->capture_default_str();
  cmd->add_option("--microbatches,-M,-m", c.num_microbatches, "micro-batches per mini-batch")->capture_default_str();
  cmd->add_option("--batch", c.batch_size, "samples per mini-batch")->capture_default_str();
  cmd->add_option("--schedule", options->schedule, "gpipe | 1f1b")->capture_default_str();
  cmd->add_flag("--recompute", c.recompute, "re-materialize activations (R before each B)");
  cmd->add_option("--placement", c.placement, "device of each stage (default: stage i on device i)");
  cmd->add_option("--partition", c.partition,
                  "uniform | balanced (sim::balanced_partition over --model-spec) | per-stage layer counts N,N,...")
      ->capture_default_str();
  cmd->add_option("--device", options->device, "cpu | cuda (needs a LibTorch with CUDA)")->capture_default_str();
  cmd->add_flag("--distributed", options->distributed,
                "one rank of a multi-process run (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; implied when "
                "WORLD_SIZE is set); see `pipeworks launch`");
  cmd->add_option("--timeout", options->timeout_s, "seconds any blocking wait may take before the run fails")
      ->capture_default_str();
  cmd->add_option("--steps", c.steps, "mini-batches to train")->capture_default_str();
  cmd->add_option("--optimizer", options->optimizer, "sgd | momentum | adam")->capture_default_str();
  cmd->add_option("--lr", c.optimizer.learning_rate, "learning rate")->capture_default_str();
  cmd->add_flag("--check", c.check, "compare gradients and parameters with the non-pipelined reference");
  cmd->add_flag("--check-finite", c.check_finite, "fail on NaN/Inf in any stage");
  cmd->add_option("--threads", c.threads_per_worker,
                  "intra-op threads per worker (0: max(1, cores / devices); each worker thread calls "
                  "at::set_num_threads)")
      ->capture_default_str();
  cmd->add_option("--pin-workers", options->pin_workers,
                  "auto | on | off: device d's worker and its intra-op threads on cores of their own (cores "
                  "[d*t, (d+1)*t) of this process's affinity mask for t threads); auto pins when a core is left over, "
                  "on whenever they fit")
      ->capture_default_str();
  cmd->add_option("--trace", options->trace, "write a Chrome trace of the last step");
  cmd->add_option("--svg", options->svg, "write an SVG Gantt chart of the last step");
  cmd->add_option("--json", options->json, "write the report as JSON");
  add_predict_options(cmd, options->predict);
  cmd->callback([options, &context] { context.exit_code = run(*options); });
}

}  // namespace pipeworks::cli
