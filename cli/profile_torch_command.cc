// `pipeworks profile`: measures a model-zoo model's layers on this CPU and writes the model spec
// `pipeworks simulate` reads (and, with --cluster-out, this machine as a cluster spec).
#include "cli/profile_report.h"

#include <algorithm>
#include <limits>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/arg_checks.h"
#include "cli/command_list.h"
#include "cli/model_options.h"
#include "cli/renamed_option.h"
#include "hw/run/device_support.h"
#include "hw/exec/threads.h"
#include "hw/model/scripted_model.h"
#include "hw/run/run_limits.h"
#include "hw/run/run_resources.h"
#include "sched/text_file.h"
#include "sched/units_text.h"
#include "sim/spec/units.h"

namespace pipeworks::cli {

namespace {

struct ProfileCommandOptions {
  ModelOptions model;
  std::string device = "cpu";  // parsed into profile.device
  std::string output;
  std::string cluster_out;
  bool no_machine = false;
  hw::ProfileOptions profile;
};

// Reads the flags into o.profile and refuses what cannot be profiled here, before any timing.
std::optional<Failure> resolve_request(ProfileCommandOptions& o) {
  auto device = hw::parse_device_kind(o.device);
  if (!device) return usage(device.error().message);
  o.profile.device = *device;
  if (auto status = resolve_model_options(o.model, o.profile.model); !status) return usage(status.error().message);
  if (o.profile.round_gap_s > 0 && o.profile.rounds < 2) {
    return usage("--round-gap is the pause between rounds: it needs --rounds 2 or more");
  }
  if (o.no_machine && !o.cluster_out.empty()) {
    return usage("--cluster-out writes what --no-machine skips (the hand-off, dispatch and contention "
                 "measurements): drop one of them");
  }
  if (auto writable = check_output_paths({{"--output", o.output}, {"--cluster-out", o.cluster_out}}); !writable) {
    return invalid(writable.error().message);
  }
  if (auto available = hw::check_device_available(o.profile.device); !available) {
    return invalid(available.error().message);
  }
  if (o.profile.model.kind == hw::ModelKind::kScripted) {
    if (auto loaded = hw::load_scripted_model(o.profile.model); !loaded) return invalid(loaded.error().message);
  }
  if (o.profile.microbatch_sizes.empty()) return usage("--microbatch-sizes needs at least one size");
  const int largest = *std::max_element(o.profile.microbatch_sizes.begin(), o.profile.microbatch_sizes.end());
  if (auto fits = hw::check_profile_fits(o.profile.model, largest, o.profile.device, hw::this_machine_resources()); !fits) {
    return usage(fits.error().message);
  }
  o.profile.threads = hw::resolve_threads_per_worker(o.profile.threads, o.profile.workers);
  o.profile.measure_machine = !o.no_machine;
  return std::nullopt;
}

// The model spec, and the cluster spec where asked for.
std::optional<Failure> write_specs(const ProfileCommandOptions& o, const hw::Profile& profile) {
  if (auto status = sim::save_model_spec(profile.spec, o.output); !status) return invalid(status.error().message);
  fmt::print("wrote model spec {} ({} layers)\n", o.output, profile.spec.num_layers());
  if (o.cluster_out.empty()) return std::nullopt;
  if (auto written = sched::write_text_file(o.cluster_out, sim::cluster_spec_to_json(profile.cluster)); !written) {
    return invalid(written.error().message);
  }
  fmt::print("wrote cluster spec {} ({} devices)\n", o.cluster_out, profile.cluster.num_devices());
  return std::nullopt;
}

std::optional<Failure> run_profile(ProfileCommandOptions& o) {
  if (auto refused = resolve_request(o)) return refused;
  fmt::print("pipeworks profile: {} on {}, micro-batch sizes {}, {} warm-up + {} repetitions x {}, {} "
             "per worker, {}\n",
             hw::model_display_name(o.profile.model), hw::device_kind_name(o.profile.device),
             fmt::join(o.profile.microbatch_sizes, ","), o.profile.warmup, o.profile.repetitions,
             sched::counted(o.profile.rounds, "round"), sched::counted(o.profile.threads, "intra-op thread"),
             sched::counted(o.profile.workers, "worker"));
  std::fflush(stdout);
  auto profile = hw::profile_model(o.profile, [](const std::string& line) {
    fmt::print("  {}\n", line);
    std::fflush(stdout);
  });
  if (!profile) return invalid(profile.error().message);
  fmt::print("{}", profile_summary(*profile));
  return write_specs(o, *profile);
}

}  // namespace

void add_profile_command(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<ProfileCommandOptions>();
  o->profile.threads = 0;  // resolved from --workers unless given
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure a zoo model's or your TorchScript model's layers on this machine; write a model spec");
  add_model_options(cmd, o->model, o->profile.model);
  cmd->add_option("--device", o->device, "cpu or cuda (layers timed with CUDA events, bytes from the caching allocator)")
      ->capture_default_str();
  cmd->add_option("--microbatch-sizes", o->profile.microbatch_sizes, "micro-batch sizes to time (fit over them)")
      ->delimiter(',')
      ->check(integer_from(1, hw::kMaxBatchSize))
      ->capture_default_str();
  cmd->add_option("--warmup", o->profile.warmup, "untimed runs before each measurement")
      ->check(integer_from(0, hw::kMaxRepetitions))
      ->capture_default_str();
  cmd->add_option("--repetitions", o->profile.repetitions, "timed runs (the median is kept)")
      ->check(integer_from(1, hw::kMaxRepetitions))
      ->capture_default_str();
  cmd->add_option("--rounds", o->profile.rounds,
                  "time the layers in this many rounds and keep the median round (a slow spell of a shared machine "
                  "then bends one round, not the profile)")
      ->check(integer_from(1, hw::kMaxRepetitions))
      ->capture_default_str();
  cmd->add_option("--round-gap", o->profile.round_gap_s, "seconds between rounds")
      ->check(number_from(0, 3600))
      ->capture_default_str();
  cmd->add_option("--workers", o->profile.workers, "pipeline workers (devices) the cluster spec describes")
      ->check(integer_from(1, hw::kMaxRunDevices))
      ->capture_default_str();
  add_renamed_option(*cmd, "--intra-op-threads", "--threads", o->profile.threads,
                     "LibTorch intra-op threads while timing (0: max(1, cores / workers))", [](CLI::Option& opt) {
                       opt.check(integer_from(0, hw::kMaxThreadsPerWorker))->capture_default_str();
                     });
  cmd->add_option("--range-layers", o->profile.max_range_layers,
                  fmt::format("stage temporaries: measure layer ranges of up to this many layers (0: every range "
                              "while that stays within {} layer runs per size; longer stages compose their layers' "
                              "bytes)",
                              hw::kRangeLayerBudget))
      ->check(integer_from(0, std::numeric_limits<int>::max()))
      ->capture_default_str();
  cmd->add_flag("--no-machine", o->no_machine, "skip hand-off, dispatch and contention measurements");
  cmd->add_option("-o,--output", o->output, "model spec to write (JSON)")->required();
  cmd->add_option("--cluster-out", o->cluster_out, "cluster spec of this machine to write (JSON)");
  cmd->callback([o, &context] {
    const std::optional<Failure> failure = run_profile(*o);
    context.exit_code = failure ? report_error("profile", failure->exit_code, failure->message) : kExitOk;
  });
}

}  // namespace pipeworks::cli
